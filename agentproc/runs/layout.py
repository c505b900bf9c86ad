"""How a run-file line is laid out (run-file schema version 2), and writing one.

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

Readers cut a line at these keys to parse only what they need: that, and version-1
lines (a dict per call, the scenario embedded, everything at the top level), is
:mod:`agentproc.runs.runfile`'s alone; this module only writes lines.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

RUN_SCHEMA_VERSION = 2
"""Version of the run-file line format (1: every field at the top level, the scenario
embedded)."""

BULK_KEYS = ("messages", "model_calls", "errors", "injected")
"""Record fields a version-2 line keeps in its ``bulk`` object."""
MIDDLE_KEYS = ("output", "scenario_ref", "procedure", "scenario")
"""Record fields a version-2 line keeps between its calls and its bulk, in this order."""


def compact_call(c: dict[str, Any]) -> list[Any]:
    """``[name, arguments, step, refused, value]`` of a call."""
    value = c.get("value", c.get("answer"))
    return [c["name"], c["arguments"], c.get("step"), c.get("refused"), value]


def line_of(rec: dict[str, Any]) -> str:
    """The version-2 line of a record (as :mod:`agentproc.runs.runfile` reads it back
    whole), newline included."""
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


def dumps_read(obj: Any) -> str:
    """The standard encoder's compact text of ``obj`` (``json.dumps(obj, separators=(",",
    ":"))``), by orjson when its text is certainly the same: several times faster, and a
    relabelled line's head is written anew for every episode.

    For values as :func:`agentproc.jsonio.loads` reads them and values built from them:
    JSON types and finite floats (``NaN``, which a run file cannot hold, orjson writes as
    ``null``). orjson's text is then the standard one unless :func:`_may_differ`; what
    orjson refuses (an integer beyond 64 bits, a lone surrogate) the standard encoder
    writes.
    """
    try:
        fast = orjson.dumps(obj)
    except TypeError:  # orjson.JSONEncodeError is one
        return _dumps(obj)
    return _dumps(obj) if _may_differ(fast) else fast.decode("ascii")


def _may_differ(fast: bytes) -> bool:
    """Whether orjson's text ``fast`` may not be the standard encoder's: it holds a
    character the standard encoder escapes (one beyond ASCII, or DEL), or a float below
    1e-4, which the standard encoder writes ``1e-05`` where orjson writes ``0.00001`` or
    ``1e-7`` (found in a string too: then the standard encoder writes it). Searched for
    literally: a regular expression over a head of 10 kB took longer than orjson."""
    if not fast.isascii() or b"\x7f" in fast or b"0.0000" in fast:
        return True
    at = fast.find(b"e-")
    while at > 0:
        if 48 <= fast[at - 1] <= 57:  # a digit before it: an exponent
            return True
        at = fast.find(b"e-", at + 2)
    return False
