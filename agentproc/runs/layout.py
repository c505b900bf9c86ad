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
