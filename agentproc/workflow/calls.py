"""What one tool call did: the record the mock tools write and the monitor reads."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agentproc.arith import from_number, to_number
from agentproc.jsonio import loads as loads_exact


@dataclass(slots=True)
class CallRecord:
    """One tool call as the mock tools executed it."""

    index: int
    name: str
    arguments: str
    """The arguments exactly as the agent sent them (a JSON string)."""
    result: str
    """What the agent was told."""
    step: int | None = None
    """The step number, when ``name`` is a step tool."""
    finish: bool = False
    """True when ``name`` is the finish tool."""
    args: dict[str, Any] | None = None
    """The parsed arguments, when they passed the tool's schema."""
    refused: str | None = None
    """Why nothing was executed: a key of :data:`REFUSALS`, or ``None``."""
    value: int | None = None
    """The value the step produced, in units."""
    answer: float | int | None = None
    """The submitted answer, for an accepted finish call."""
    state_hash: str = ""

    def to_json(self, scale: int) -> dict[str, Any]:
        """The run-file form of the call."""
        out: dict[str, Any] = {
            "index": self.index,
            "name": self.name,
            "arguments": self.arguments,
            "result": self.result,
            "step": self.step,
            "refused": self.refused,
            "state_hash": self.state_hash,
        }
        if self.value is not None:
            out["value"] = to_number(self.value, scale)
        if self.finish and self.answer is not None:
            out["answer"] = self.answer
        return out

    @classmethod
    def from_json(
        cls, d: Mapping[str, Any], index: int, scale: int, finish_tool: str
    ) -> CallRecord:
        """A call as a run file recorded it, ready to be labelled again without running it.

        The recorded result and value are trusted; the arguments are parsed again.
        Raises ``KeyError``, ``TypeError`` or ``ValueError`` for a malformed record.
        """
        name = d["name"]
        if not isinstance(name, str):
            raise TypeError("name must be a string")
        value = d.get("value")
        rec = cls(
            index=index,
            name=name,
            arguments=d.get("arguments", ""),
            result=d.get("result", ""),
            step=d.get("step"),
            finish=name == finish_tool,
            refused=d.get("refused"),
            value=None if value is None else from_number(value, scale),
            answer=d.get("answer"),
            state_hash=d.get("state_hash", ""),
        )
        if rec.refused not in ("unknown_tool", "invalid_arguments", "distractor", "transient"):
            rec.args = parse_arguments(rec.arguments)[1]
            if rec.args is None:
                raise ValueError("arguments are not a JSON object")
        return rec


REFUSALS: dict[str, str] = {
    "unknown_tool": "no tool of that name was offered",
    "invalid_arguments": "the arguments are not JSON or fail the tool's schema",
    "division_by_zero": "the divisor supplied is zero",
    "out_of_range": "the result would exceed 1e12 (only wrong arguments get there)",
    "dependency": "enforce mode: a step it reads has not run yet",
    "premature": "enforce mode: the last step has not run yet",
    "distractor": "a variant's distractor tool: it takes no part in the procedure",
    "transient": "a variant's tool fault: the tool failed transiently",
}
"""Why a call executed nothing."""


def parse_arguments(
    raw: str | dict[str, Any] | None,
) -> tuple[str, dict[str, Any] | None, str | None]:
    """``(raw text, parsed object or None, problem or None)`` for supplied arguments."""
    if isinstance(raw, dict):
        try:
            return json.dumps(raw, separators=(",", ":")), raw, None
        except (TypeError, ValueError, RecursionError) as exc:
            return repr(raw), None, f"the arguments are not JSON ({type(exc).__name__})"
    text = "" if raw is None else raw if isinstance(raw, str) else _text_of(raw)
    try:
        obj = loads_exact(text) if text else {}
    except ValueError as exc:
        return text, None, f"the arguments are not valid JSON ({exc})"
    if not isinstance(obj, dict):
        return text, None, "the arguments must be a JSON object"
    return text, obj, None


def _text_of(raw: object) -> str:
    """Arguments that are neither text nor an object (a list, a number): their JSON text."""
    try:
        return json.dumps(raw, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError):
        return repr(raw)
