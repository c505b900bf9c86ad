"""Relabel a stored run with the current monitor, without executing any tool or model.

The recorded calls (and, in text mode, the model's reply) are labelled again; each
record keeps everything else and gets the new labels, verdict and metrics. Use it
after a monitor fix.

A version-2 line (:mod:`agentproc.runs.layout`) is read only up to its bulk, its
scenario's workflow is built once per distinct scenario and variant, and its calls
are labelled straight from their compact arrays; the relabelled line is the new head
followed by the old line's bytes from its calls on. Version-1 lines are read whole and
written in the version-2 layout.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from agentproc.errors import RunFileError
from agentproc.jsonio import loads
from agentproc.labelling import Label, Metrics, run_text_episode
from agentproc.labelling.calculator import monitor_for
from agentproc.labelling.tools import StoredCallError
from agentproc.outputs import replacing
from agentproc.runs import (
    EpisodeRecord,
    ReadReport,
    RunWriter,
    ScenarioStore,
    collector,
    parse_line,
    record_mode,
    run_lines,
)
from agentproc.runs.layout import CALLS_AT, line_of, relabel_part_of
from agentproc.runs.runfile import check_record
from agentproc.runs.specs import resolve_spec
from agentproc.workflow import CallRecord, Scenario, Workflow, build_workflow
from agentproc.workflow.present import Presented, present
from agentproc.workflow.variant import variant_from_json


@dataclass
class Relabelled:
    """What relabelling a run changed."""

    episodes: int = 0
    calls: int = 0
    """Tool calls labelled again."""
    changed_episodes: int = 0
    """Episodes whose labels, verdict or metrics differ from the recorded ones."""
    labels_before: int = 0
    labels_after: int = 0
    added: int = 0
    """Labels found now that were not recorded."""
    removed: int = 0
    """Recorded labels not found now."""
    verdicts_changed: int = 0
    warnings: list[str] = field(default_factory=list)

    def count(self, rec: dict[str, Any], labels: list[dict[str, Any]], metrics: Metrics) -> None:
        """Add one episode: its recorded ``rec`` against its new ``labels`` and ``metrics``."""
        old = rec["labels"]
        self.episodes += 1
        self.calls += len(rec.get("calls") or ())
        self.labels_before += len(old)
        self.labels_after += len(labels)
        verdict_changed = metrics["verdict"] != rec["verdict"]
        self.verdicts_changed += verdict_changed
        same = old == labels
        if not same:
            before, after = {_key(lab) for lab in old}, {_key(lab) for lab in labels}
            self.added += len(after - before)
            self.removed += len(before - after)
        if not same or verdict_changed or metrics != rec["metrics"]:
            self.changed_episodes += 1


def _key(label: object) -> str:
    return json.dumps(label, sort_keys=True)


WORKFLOWS = 256
"""Built workflows kept (one per distinct scenario and variant), least recently used out."""


class _Labeller:
    """Labels stored calls; builds each scenario's workflow once."""

    def __init__(self, path: Path | str, store: ScenarioStore) -> None:
        self.path = path
        self.store = store
        self._built: OrderedDict[tuple[int, str], tuple[Workflow, Presented | None]] = OrderedDict()

    def label(self, lineno: int | None, rec: dict[str, Any]) -> tuple[list[Label], Metrics]:
        where = f"{self.path}: line {lineno}" if lineno else str(self.path)
        scenario = self.store.scenario(self.path, lineno, rec)  # type: ignore[arg-type]
        if record_mode(rec) == "text":  # type: ignore[arg-type]
            output = rec.get("output")
            labels, metrics, _ = run_text_episode(
                scenario, output if isinstance(output, str) else ""
            )
            return labels, metrics
        wf, presented, again = self._workflow(scenario, resolve_spec(self.path, rec), where)
        monitor = monitor_for(wf, presented)
        calls = rec["calls"]
        if presented is None and type(calls) is list and calls and type(calls[0]) is list:
            # Compact calls, no presentation to undo: the common case. The right
            # arguments' texts are made for a scenario met again.
            try:
                monitor.observe_stored(calls, known=again)
            except StoredCallError as exc:
                field = f"calls[{exc.index}]" + (f".{exc.field}" if exc.field else "")
                raise RunFileError(where, exc.reason, field) from None
            return monitor.finish()
        scale, finish = wf.scale, wf.finish_tool
        for i, c in enumerate(calls):
            try:
                if isinstance(c, dict):  # a version-1 call
                    call = CallRecord.from_json(c, i, scale, finish)
                else:
                    call = CallRecord.stored(i, *_parts(c), scale, finish)
                if presented is not None and call.step is not None and call.args is not None:
                    call.args = presented.canonical_args(wf.steps[call.step - 1], call.args)
            except ValueError as exc:
                raise RunFileError(where, str(exc), f"calls[{i}].arguments") from None
            except (KeyError, TypeError, AttributeError, IndexError):
                raise RunFileError(where, "not a recorded call", f"calls[{i}]") from None
            try:
                monitor.observe(call)
            except (KeyError, TypeError, IndexError):  # a step it has not, arguments it lacks
                raise RunFileError(where, "not a recorded call", f"calls[{i}]") from None
        return monitor.finish()

    def _workflow(
        self, scenario: Scenario, spec: Any, where: str
    ) -> tuple[Workflow, Presented | None, bool]:
        """The workflow of a scenario under a variant, and whether it was built before."""
        key = (id(scenario), "" if spec is None else json.dumps(spec, sort_keys=True))
        built = self._built.get(key)
        if built is None:
            variant = None if spec is None else variant_from_json(spec, f"{where}: variant_spec")
            presented = present(scenario, variant) if variant is not None else None
            wf = build_workflow(presented.scenario if presented else scenario, variant)
            built = self._built[key] = (wf, presented)
            if len(self._built) > WORKFLOWS:
                self._built.popitem(last=False)
            return (*built, False)
        self._built.move_to_end(key)
        return (*built, True)


def _parts(c: Any) -> tuple[Any, Any, Any, Any, Any]:
    if not isinstance(c, list) or len(c) != 5:
        raise TypeError("a compact call is [name, arguments, step, refused, value]")
    return c[0], c[1], c[2], c[3], c[4]


def label_record(
    rec: EpisodeRecord, where: str = "run file", store: ScenarioStore | None = None
) -> tuple[list[Label], Metrics]:
    """Label the calls a stored episode recorded (either layout), without executing them.

    This re-scores a stored run with the current monitor (the recorded results
    and values are trusted); :func:`~agentproc.analysis.replay.replay_record`
    re-executes instead.
    """
    labeller = _Labeller(where, store or ScenarioStore())
    return labeller.label(None, rec)  # type: ignore[arg-type]


def relabelled_lines(
    path: Path, result: Relabelled, store: ScenarioStore | None = None, write: bool = True
) -> Iterator[str]:
    """The lines of a run file labelled again (version-2 layout), one at a time; counts
    go to ``result``. Without ``write``, nothing is yielded: only counted."""
    report = ReadReport()
    labeller = _Labeller(Path(path), store or ScenarioStore())
    for lineno, raw in run_lines(path):
        collector.now_and_then(lineno)
        part = relabel_part_of(raw, labels_text=True) if raw.endswith(b"\n") else None
        if part is not None:
            recorded = part["labels"]
            if type(recorded) is bytes:  # checked below, once it is known to differ
                check_record(path, lineno, {**part, "labels": []})
            else:
                check_record(path, lineno, part)
            if not isinstance(part.get("calls"), list):
                raise RunFileError(path, "missing", f"line {lineno}: calls")
            rec: dict[str, Any] = part
        else:
            whole = parse_line(path, lineno, raw, report)
            if whole is None:
                break
            rec = dict(whole)
        labels, metrics = labeller.label(lineno, rec)
        new = [lab.to_json() for lab in labels]
        if type(rec["labels"]) is bytes:
            rec["labels"] = _recorded_labels(path, lineno, rec, new)
        result.count(rec, new, metrics)
        if not write:
            continue
        if part is not None:
            yield _new_head(part, new, metrics) + raw[raw.find(CALLS_AT) :].decode()
        else:
            yield line_of({**rec, "labels": new, "verdict": metrics["verdict"], "metrics": metrics})
    result.warnings.extend(report.warnings)


def _recorded_labels(
    path: Path, lineno: int, part: dict[str, Any], new: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The recorded labels of a line read with its labels as text: ``new`` itself when the
    text is the new labels' (the usual case: nothing parsed), else the text parsed and
    checked as :func:`~agentproc.runs.runfile.check_record` checks labels."""
    text: bytes = part["labels"]
    try:
        if orjson.dumps(new) == text:
            return new
    except TypeError:  # an integer beyond 64 bits: compare them parsed
        pass
    try:
        recorded = loads(text)
    except ValueError:
        raise RunFileError(path, "not valid JSON", f"line {lineno}: labels") from None
    check_record(path, lineno, {**part, "labels": recorded})
    return recorded  # type: ignore[no-any-return]


def _new_head(part: dict[str, Any], labels: list[dict[str, Any]], metrics: Metrics) -> str:
    """The head of a version-2 line with new labels, verdict and metrics, without its
    closing brace (the old line's calls and bulk follow)."""
    head: dict[str, Any] = {}
    for key, value in part.items():
        if key == "calls":
            break
        head[key] = value
    head.update(labels=labels, verdict=metrics["verdict"], metrics=metrics)
    return json.dumps(head, separators=(",", ":"))[:-1]


def relabel_run(path: Path, out: Path | None = None, suite: Path | None = None) -> Relabelled:
    """Relabel every episode of ``path``; write the relabelled run to ``out`` if given.

    ``suite`` is where to find the scenarios the run refers to, if not where it says.
    """
    result = Relabelled()
    with collector.paused():
        # The scenarios and workflows kept while relabelling are freed when this call
        # returns, before the collector runs again: else its first collection would
        # scan them all.
        _relabel(path, out, ScenarioStore(suite), result)
    return result


def _relabel(path: Path, out: Path | None, store: ScenarioStore, result: Relabelled) -> None:
    if out is None:
        for _ in relabelled_lines(path, result, store, write=False):
            pass
        return
    lines = relabelled_lines(path, result, store)
    # Written beside ``out`` and renamed over it once whole: a bad line far in the run
    # leaves an older ``out`` as it was.
    with replacing(out) as tmp, RunWriter(tmp) as writer:
        for line in lines:
            writer.write_raw(line)
        writer.sync()
