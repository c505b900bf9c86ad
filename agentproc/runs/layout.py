"""How a run-file line is laid out (run-file schema version 2), and how readers skip
the parts they do not need.

A line is one JSON object whose keys always come in this order:

1. **The head**: ids, params, verdict, metrics, labels, stop reason, error, usage and
   variant spec: everything ``report`` reads.
2. ``"calls"``: one compact array per call, ``[name, arguments, step, refused, value]``
   (the raw argument text kept; ``value`` is the step's value or the accepted answer),
   then text mode's ``"output"``, then the scenario: by
   reference (``"scenario_ref": {"suite", "sha256"}``, the suite at hand), as its compact
   procedure (``"procedure"``, a ``procedures.jsonl`` line: self-contained) or whole
   (``"scenario"``, one not compiled from a procedure): everything ``relabel`` reads.
3. ``"bulk"``: the calls' results and state hashes, the messages, the per-turn model
   calls, failed attempts and injected faults: what ``replay`` and the HTML drill-down read.

A JSON string cannot hold an unescaped quote, and no key before them is named so, so the
first ``,"calls":[`` and ``,"bulk":{`` of a line are these keys: a reader cuts the line
there and parses only what it needs. ``relabel`` also leaves two parts as text, to
compare or to compile once: the labels (their values are scalars, so the first ``],"``
after their key closes them) and a compact procedure (the last field before the bulk).
Version 1 lines (a dict per call, the scenario embedded, everything at the top level)
stay readable: they are parsed whole.
"""

from __future__ import annotations

import json
from typing import Any

from agentproc.jsonio import loads

RUN_SCHEMA_VERSION = 2
"""Version of the run-file line format (1: every field at the top level, the scenario
embedded)."""

CALLS_AT = b',"calls":['
"""Where the head of a version-2 line ends."""
BULK_AT = b',"bulk":{'
"""Where the part ``relabel`` reads ends."""
PROCEDURE_AT = b',"procedure":{'
"""Where a self-contained line's compact procedure starts (it ends at the bulk)."""
LABELS_AT = b',"labels":['
"""Where a line's labels start (in its head)."""

BULK_KEYS = ("messages", "model_calls", "errors", "injected")
"""Record fields a version-2 line keeps in its ``bulk`` object."""
MIDDLE_KEYS = ("output", "scenario_ref", "procedure", "scenario")
"""Record fields a version-2 line keeps between its calls and its bulk, in this order."""


def compact_call(c: dict[str, Any]) -> list[Any]:
    """``[name, arguments, step, refused, value]`` of a call."""
    value = c.get("value", c.get("answer"))
    return [c["name"], c["arguments"], c.get("step"), c.get("refused"), value]


def line_of(rec: dict[str, Any]) -> str:
    """The version-2 line of a record (as :func:`expand` gives it back), newline included."""
    head = {
        k: v for k, v in rec.items() if k not in BULK_KEYS and k not in MIDDLE_KEYS and k != "calls"
    }
    head["schema_version"] = RUN_SCHEMA_VERSION
    calls = rec.get("calls") or []
    middle: dict[str, Any] = {"calls": [compact_call(c) for c in calls]}
    middle.update((k, rec[k]) for k in MIDDLE_KEYS if k in rec)
    bulk: dict[str, Any] = {
        "results": [c.get("result", "") for c in calls],
        "state_hashes": [c.get("state_hash", "") for c in calls],
    }
    bulk.update((k, rec[k]) for k in BULK_KEYS if rec.get(k) is not None)
    text = _dumps({**head, **middle, "bulk": bulk})
    return text + "\n"


def _dumps(obj: Any) -> str:
    # The standard encoder: it keeps integers of any size and escapes lone surrogates.
    return json.dumps(obj, separators=(",", ":"))


def is_compact(rec: dict[str, Any]) -> bool:
    """Whether a parsed line is laid out as version 2."""
    v = rec.get("schema_version")
    return isinstance(v, int) and not isinstance(v, bool) and v >= 2


def expand(rec: dict[str, Any]) -> dict[str, Any]:
    """A parsed line as readers use it: calls as dicts, bulk fields at the top level.

    Version-1 lines are already so and come back unchanged. Raises ``TypeError``,
    ``IndexError`` or ``ValueError`` for calls of the wrong shape.
    """
    if not is_compact(rec) or not isinstance(rec.get("calls"), list):
        return rec
    bulk = rec.pop("bulk", None)
    bulk = bulk if isinstance(bulk, dict) else {}
    results = bulk.get("results") or []
    hashes = bulk.get("state_hashes") or []
    calls = []
    for i, c in enumerate(rec["calls"]):
        if not isinstance(c, list) or len(c) != 5:
            raise ValueError(f"calls[{i}]: expected [name, arguments, step, refused, value]")
        name, arguments, step, refused, value = c
        call: dict[str, Any] = {
            "index": i,
            "name": name,
            "arguments": arguments,
            "result": results[i] if i < len(results) else "",
            "step": step,
            "refused": refused,
            "state_hash": hashes[i] if i < len(hashes) else "",
        }
        if value is not None:
            call["value" if step is not None else "answer"] = value
        calls.append(call)
    rec["calls"] = calls
    for key in BULK_KEYS:
        if key in bulk:
            rec[key] = bulk[key]
    return rec


def head_of(raw: bytes) -> dict[str, Any] | None:
    """The head of a version-2 line, parsed alone; ``None`` when the line is not one, or
    does not parse so: read it whole then (its error names what is wrong)."""
    return _parse_until(raw, CALLS_AT)


def relabel_part_of(raw: bytes, labels_text: bool = False) -> dict[str, Any] | None:
    """A version-2 line without its bulk (head, calls, output, scenario), or ``None``.

    A compact procedure, the last field before the bulk when the line holds one, is left
    as its JSON text (``bytes``, for :class:`~agentproc.runs.stored.ScenarioStore`): a run
    holds the same procedure line after line, and reading its numbers again for each was a
    third of the parsing. With ``labels_text``, the recorded labels are left as their
    text too (``bytes``, the JSON array, in its place among the keys): a relabel compares
    them with the new ones as text first, and parses them only when the two differ."""
    end = raw.find(BULK_AT)
    if end < 0:
        return None
    calls = raw.find(CALLS_AT, 0, end)
    # After the calls, only strings (which cannot hold an unescaped quote) and the other
    # ways of keeping the scenario come before the procedure's key.
    cut = raw.find(PROCEDURE_AT, calls, end) if calls >= 0 else -1
    whole = cut < 0 or raw.find(b',"scenario":', cut, end) >= 0
    text, stop, labels = raw, end if whole else cut, None
    if labels_text and calls >= 0:
        at = raw.find(LABELS_AT, 0, calls)
        # A label's values are scalars, and no string holds an unescaped quote: the
        # first ``],"`` after the key closes the array.
        close = raw.find(b'],"', at, calls + 2) if at >= 0 else -1
        if close >= 0:
            start = at + len(LABELS_AT) - 1
            labels = raw[start : close + 1]
            text = raw[:start] + b"0" + raw[close + 1 : stop]  # the key kept in its place
            stop = len(text)
    rec = _parse_until(text, BULK_AT, stop)
    if rec is not None:
        if not whole:
            rec["procedure"] = raw[cut + len(PROCEDURE_AT) - 1 : end]
        if labels is not None:
            rec["labels"] = labels
    return rec


def _parse_until(raw: bytes, marker: bytes, end: int | None = None) -> dict[str, Any] | None:
    if not raw.startswith(b'{"schema_version":'):
        return None
    if end is None:
        end = raw.find(marker)
    if end < 0:
        return None
    try:
        rec = loads(raw[:end] + b"}")
    except ValueError:
        return None
    return rec if isinstance(rec, dict) and is_compact(rec) else None
