"""The episode table and the drill-down data of the HTML report.

Every episode gets one compact row (columns stored as arrays, so 55,000 rows stay
a few megabytes); the drill-down (procedure, calls, model turns) is embedded for
as many episodes as :data:`DETAIL_BUDGET` allows, taken round-robin over
(series, cell, verdict) so every kind of outcome of every cell can be opened.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from itertools import zip_longest
from typing import Any

import orjson

from agentproc.analysis.html.align import align
from agentproc.analysis.measures.report import Report
from agentproc.analysis.measures.step_names import WorkflowNames
from agentproc.analysis.render.timeline import describe
from agentproc.analysis.stored.replay import labels_by_call
from agentproc.errors import RunFileError
from agentproc.labelling import VERDICTS, Label, LabelKind
from agentproc.runs import (
    EpisodeKey,
    ScenarioStore,
    Where,
    error_kind_of,
    is_error,
    read_at,
    scenario_of_record,
)
from agentproc.runs.runfile import Heads

KINDS: tuple[str, ...] = tuple(k.value for k in LabelKind)
"""Label kinds in taxonomy order; rows refer to them by position."""
_KIND_AT = {k: i for i, k in enumerate(KINDS)}
VERDICT_NAMES: tuple[str, ...] = (*VERDICTS, "error")
"""Verdicts in table order; ``error`` marks an episode an infrastructure failure ended."""
DETAIL_BUDGET = 8_000_000
"""Bytes of drill-down data a report embeds at most (the rest names its replay command)."""


def anchor(key: EpisodeKey) -> str:
    """The id of an episode's section in the page: the same for the same episode in
    every report (a digest of its scenario, agent, mode, variant and trial).

    >>> anchor(("n3-L1-0000", "sim:oracle", "tools", "default", 0))
    'ep-962b84062ff2'
    """
    return "ep-" + hashlib.blake2b(json.dumps(list(key)).encode(), digest_size=6).hexdigest()


def series_of(rec: dict[str, Any], report: Report) -> str:
    """The line an episode belongs to: its agent as ``report`` shows it (its name and
    variant, ``[text]`` in text mode; see :mod:`~agentproc.analysis.measures.identity`)."""
    return report.agent_of(rec)


def _index(names: dict[str, int], name: str) -> int:
    """``name``'s position in ``names``, added at the end when new."""
    return names.setdefault(name, len(names))


def episode_rows(
    heads: Heads, report: Report, steps: WorkflowNames | None = None
) -> dict[str, Any]:
    """Column arrays of the episode table, one entry per episode; per cell, a declared
    workflow's steps as ``[tool, output]`` by step number (``null``: a procedure's)."""
    series: dict[str, int] = {}
    cells: dict[str, int] = {}
    step_names: list[list[list[str]] | None] = []
    runs: dict[str, int] = {}
    cols: dict[str, list[Any]] = {
        k: [] for k in ("id", "series", "cell", "steps", "lookback", "verdict", "div", "labels")
    }
    cols["error"], cols["run"], cols["anchor"] = [], [], []
    for key, (where, rec) in heads.items():
        cols["run"].append(_index(runs, str(where.path)))
        cols["anchor"].append(anchor(key))
        m = rec["metrics"]
        cols["id"].append(str(rec["scenario_id"]))
        cols["series"].append(_index(series, series_of(rec, report)))
        cell = _index(cells, str(rec["cell"]))
        cols["cell"].append(cell)
        if cell == len(step_names):  # a new cell
            names = steps.of_record(rec) if steps is not None else {}
            listed = [names.get(k) for k in range(1, max(names, default=0) + 1)]
            step_names.append([[n.tool, n.output] if n else [] for n in listed] or None)
        cols["steps"].append(int(rec["params"]["steps"]))
        cols["lookback"].append(int(rec["params"]["lookback"]))
        errored = is_error(rec)  # type: ignore[arg-type]
        verdict = "error" if errored else rec["verdict"]
        cols["verdict"].append(VERDICT_NAMES.index(verdict))
        cols["error"].append(error_kind_of(rec) if errored else None)  # type: ignore[arg-type]
        div = m.get("first_divergence")
        cols["div"].append(
            [div.get("call_index"), div.get("step"), _KIND_AT[div["label"]]]
            if isinstance(div, dict) and div.get("label") in KINDS
            else None
        )
        # label counts as "4:2 5:1" (kind position: count), empty when there is none
        counts = Counter(_KIND_AT[lab["kind"]] for lab in rec["labels"])
        cols["labels"].append(" ".join(f"{i}:{c}" for i, c in sorted(counts.items())))
    return {
        "series_names": list(series),
        "cell_names": list(cells),
        **({"step_names": step_names} if any(step_names) else {}),
        "run_names": list(runs),
        "kinds": KINDS,
        **cols,
    }


def _order(heads: Heads, report: Report) -> list[int]:
    """Episode positions round-robin over (series, cell, verdict) groups."""
    groups: dict[tuple[str, str, str], list[int]] = {}
    for i, (_, rec) in enumerate(heads.values()):
        key = (series_of(rec, report), str(rec["cell"]), str(rec["verdict"]))
        groups.setdefault(key, []).append(i)
    return [i for row in zip_longest(*groups.values()) for i in row if i is not None]


def details(
    heads: Heads, report: Report, warnings: list[str], budget: int = DETAIL_BUDGET
) -> dict[str, Any]:
    """Drill-down data by episode position, as much as ``budget`` bytes hold (a warning
    when procedures are missing)."""
    places = [where for where, _ in heads.values()]
    out: dict[str, Any] = {}
    used = 0
    store = ScenarioStore()
    missing: list[str] = []
    for i in _order(heads, report):
        where = places[i]
        rec = dict(read_at(where))
        try:
            scenario = scenario_view(where, rec, store)
        except RunFileError as exc:
            if "scenario_ref" not in rec:
                raise
            # The suite a run refers to is not at hand (moved, changed): the tables
            # need none of it, so the drill-down shows the calls without the procedure.
            missing.append(str(exc))
            scenario = {"unavailable": str(exc)}
        detail = episode_detail(rec, scenario)
        size = len(orjson.dumps(detail))
        if used + size > budget:
            if used > budget * 0.98:
                break
            continue
        out[str(i)] = detail
        used += size
    if missing:
        warnings.append(
            f"{len(missing)} drill-downs show no procedure: {missing[0]}"
            + (" (and others)" if len(missing) > 1 else "")
        )
    return out


_VIEW = {"inputs", "steps", "answer", "answer_variable", "finish"}


def scenario_view(
    where: Where, rec: dict[str, Any], store: ScenarioStore | None = None
) -> dict[str, Any]:
    """The parts of a record's scenario the drill-down shows, however the line keeps it
    (whole, as its compact procedure, or by reference to its suite)."""
    if isinstance(rec.get("scenario"), dict):
        return rec["scenario"]  # type: ignore[no-any-return]
    scenario = scenario_of_record(where.path, where.lineno, rec, store)  # type: ignore[arg-type]
    return scenario.model_dump(mode="json", include=_VIEW)


def episode_detail(rec: dict[str, Any], scenario: dict[str, Any]) -> dict[str, Any]:
    """The procedure, the calls with their labels, and the model's turns of one record
    (``scenario``: its :func:`scenario_view`)."""
    labels = [Label.from_json(d) for d in rec["labels"]]
    by_call = labels_by_call(labels)
    steps = [
        [
            str(s.get("text", "")),
            bool(s.get("live", True)),
            _call_text(s.get("expected_call")),
        ]
        for s in scenario.get("steps", [])
        if isinstance(s, dict)
    ]
    recorded = [c for c in rec["calls"] if isinstance(c, dict)]
    calls = [
        [
            str(c.get("name", "")),
            str(c.get("arguments", "")),
            str(c.get("result", "")),
            [_chip(lab) for lab in by_call.get(i, [])],
        ]
        for i, c in enumerate(recorded)
    ]
    rows, placed = _aligned(rec, scenario, steps, recorded, labels)
    out: dict[str, Any] = {
        "inputs": scenario.get("inputs", {}),
        "steps": steps,
        "answer": _answer_text(scenario.get("answer_fields") or scenario.get("answer")),
        "answer_variable": scenario.get("answer_variable"),
        "calls": calls,
        "rows": rows,
        "mark": _marked(rec, rows),
        "episode_labels": [
            _chip(lab) for lab in labels if lab.call_index is None and lab not in placed
        ],
        "turns": _turns(rec),
        "metrics": {
            k: _answer_text(rec["metrics"].get(k))
            for k in ("first_answer", "final_answer", "executed_steps", "total_steps")
        },
        "stop": rec.get("stop_reason"),
    }
    if "unavailable" in scenario:
        out["unavailable"] = str(scenario["unavailable"])
    if isinstance(rec.get("output"), str):
        out["output"] = rec["output"]
        out["text_labels"] = [
            [lab.call_index, _KIND_AT[lab.kind.value], describe(lab)]
            for lab in labels
            if lab.call_index is not None
        ]
    error = rec.get("error")
    if isinstance(error, dict):
        out["error"] = f"{error.get('kind')}: {error.get('message')}"
    return out


def _aligned(
    rec: dict[str, Any],
    scenario: dict[str, Any],
    steps: list[list[Any]],
    calls: list[dict[str, Any]],
    labels: list[Label],
) -> tuple[list[list[Any]], list[Label]]:
    """The call table's rows, ``[step, expected call, call index, labels of a step no
    call ran]`` (:func:`~agentproc.analysis.html.align.align`), and the labels placed
    in them. Without the procedure the steps are numbered but their calls unknown."""
    finish = scenario.get("finish") or {}
    tool = str(finish.get("tool", "submit_answer"))
    if steps:
        expected = [str(s[2]) for s in steps]
        argument = str(finish.get("argument", "answer"))
        answer = _call_text({"name": tool, "arguments": {argument: scenario.get("answer")}})
    else:
        known = [c["step"] for c in calls if isinstance(c.get("step"), int)]
        total = rec["metrics"].get("total_steps")
        expected = [""] * max([total if isinstance(total, int) else 0, *known])
        answer = ""
    n = len(expected)

    def slot(c: dict[str, Any]) -> int | None:
        step = c.get("step")
        if isinstance(step, int) and 1 <= step <= n:
            return step
        return n + 1 if c.get("name") == tool else None

    unrun = {lab.step: lab for lab in labels if lab.call_index is None and lab.step is not None}
    rows: list[list[Any]] = []
    placed: list[Label] = []
    for r in align(expected, answer, [slot(c) for c in calls]):
        lab = unrun.get(int(r.step)) if r.call is None and r.step.isdigit() else None
        rows.append([r.step, r.expected, r.call, [] if lab is None else [_chip(lab)]])
        placed += [] if lab is None else [lab]
    return rows, placed


def _chip(lab: Label) -> list[Any]:
    return [_KIND_AT[lab.kind.value], describe(lab)]


def _marked(rec: dict[str, Any], rows: list[list[Any]]) -> int | None:
    """The row of the first divergence: a skipped step's own row, else its call's."""
    div = rec["metrics"].get("first_divergence")
    if not isinstance(div, dict):
        return None
    for k, (step, _, call, _) in enumerate(rows):
        if div.get("label") == "skipped_step" and call is None and step == str(div.get("step")):
            return k
    for k, row in enumerate(rows):
        if row[2] is not None and row[2] == div.get("call_index"):
            return k
    return None


def _call_text(call: Any) -> str:
    if not isinstance(call, dict):
        return ""
    try:
        args = orjson.dumps(call.get("arguments", {})).decode()
    except TypeError:
        args = json.dumps(call.get("arguments", {}), separators=(",", ":"))
    return f"{call.get('name')}({args})"


def _turns(rec: dict[str, Any]) -> list[list[Any]]:
    """Per model turn: what the model wrote (text, tool calls) and its token usage."""
    said = [
        m for m in rec.get("messages") or [] if isinstance(m, dict) and m.get("role") == "assistant"
    ]
    usage = [u for u in rec.get("model_calls") or [] if isinstance(u, dict)]
    turns: list[list[Any]] = []
    nothing: dict[str, Any] = {}
    for msg, use in zip_longest(said, usage, fillvalue=nothing):
        text = msg.get("content")
        tools = [
            f"{tc['function'].get('name')}({tc['function'].get('arguments', '')})"
            for tc in msg.get("tool_calls") or []
            if isinstance(tc, dict) and isinstance(tc.get("function"), dict)
        ]
        turns.append(
            [
                text if isinstance(text, str) else "",
                tools,
                use.get("input_tokens"),
                use.get("output_tokens"),
                use.get("latency_s"),
            ]
        )
    return turns


def _answer_text(value: Any) -> Any:
    """A multi-field answer as the page shows it (``decision=approve, payout=807.5``);
    any other value as it is."""
    if isinstance(value, dict):
        return ", ".join(f"{f}={v}" for f, v in value.items())
    return value
