"""What one tool call did: the record the mock tools write and the monitor reads."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agentproc.arith import from_number, to_number
from agentproc.errors import StoredCallError
from agentproc.jsonio import loads, plain_object


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
    answer: Any = None
    """The submitted answer, for an accepted finish call (a multi-field answer's: the
    fields given, field -> value)."""
    state_hash: str = ""
    given: bool = False
    """A pre-filled call (:mod:`agentproc.workflow.prefill`), not the agent's."""

    @property
    def observed(self) -> Observed:
        """What labelling reads of it (:data:`Observed`)."""
        return self.step, self.finish, self.refused, self.args, self.value, self.answer

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
        if self.given:
            out["given"] = True
        return out

    @classmethod
    def read(
        cls, call: Any, index: int, scale: int, finish_tool: str, typed: bool = False
    ) -> CallRecord:
        """A stored call, compact or a version-1 object, made a record: the parts
        :func:`read_stored` reads (the same errors), with its name and argument text, and
        a version-1 object's ``result`` and ``state_hash``. The recorded result and value
        are trusted; the arguments are parsed again."""
        step, finish, refused, args, value, answer = read_stored(
            call, index, scale, finish_tool, typed
        )
        whole = call if isinstance(call, dict) else {}
        name, arguments = (call["name"], call.get("arguments")) if whole else call[:2]
        return cls(
            index=index,
            name=name,
            arguments="" if arguments is None else arguments,
            result=whole.get("result", ""),
            step=step,
            finish=finish,
            args=args,
            refused=refused,
            value=value,
            answer=answer,
            state_hash=whole.get("state_hash", ""),
        )


Observed = tuple[int | None, bool, str | None, dict[str, Any] | None, int | None, Any]
"""What labelling reads of a call: ``(step, finish, refused, args, value, answer)``, as
:meth:`CallRecord` names them (``value`` in units)."""


def read_stored(
    call: Any, index: int, scale: int, finish_tool: str, typed: bool = False
) -> Observed:
    """What labelling reads of a stored call, compact (``[name, arguments, step, refused,
    value]``) or a version-1 object, without making the record (relabelling reads every
    call of a run; :meth:`CallRecord.read` makes it); a
    :class:`~agentproc.errors.StoredCallError` naming ``index`` and the field when it is
    not one. ``typed``: a branched workflow's, whose step values may be a category's name
    or a boolean (elsewhere a value that is no number is no recorded call)."""
    try:
        if type(call) is list and len(call) == 5:  # compact: a run's every call
            name, arguments, step, refused, value = call
        elif isinstance(call, dict):
            name, arguments, step, refused, value = _object_fields(call)
        else:
            raise TypeError(COMPACT)
        if not isinstance(name, str):
            raise TypeError("name must be a string")
        args = stored_arguments(arguments, refused)
        if name == finish_tool:
            return step, True, refused, args, None, value
        if not typed and isinstance(value, str | bool):
            raise TypeError("a step's value is a number")
        return (
            step,
            False,
            refused,
            args,
            None if value is None else from_number(value, scale),
            None,
        )
    except _UNREADABLE as exc:
        raise _not_a_call(index, exc) from None


COMPACT = "a compact call is [name, arguments, step, refused, value]"
_UNREADABLE = (ValueError, KeyError, TypeError, AttributeError, IndexError)
"""What reading a stored call that is not one raises (:func:`_not_a_call` says which)."""


def _not_a_call(index: int, exc: Exception) -> StoredCallError:
    """The error of a stored call that is not one: its arguments (``ValueError``, from
    reading them or its value), else the call itself."""
    if isinstance(exc, ValueError):
        return StoredCallError(index, "arguments", str(exc))
    return StoredCallError(index, None, "not a recorded call")


def _object_fields(d: Mapping[str, Any]) -> tuple[Any, Any, Any, Any, Any]:
    """``(name, arguments, step, refused, value)`` of a call stored as an object (version 1):
    ``value`` is the step's value, else the answer."""
    value = d.get("value")
    return (
        d["name"],
        d.get("arguments", ""),
        d.get("step"),
        d.get("refused"),
        d.get("answer") if value is None else value,
    )


def stored_arguments(arguments: Any, refused: Any) -> dict[str, Any] | None:
    """The parsed arguments of a stored call (``None`` for a refusal that never read
    them); raises ``ValueError`` when they are not a JSON object."""
    if refused in UNREAD:
        return None
    args: Any = None
    if isinstance(arguments, str):
        args = plain_object(arguments) if arguments else {}
        if args is None:  # not a flat object orjson reads exactly: the exact reader says
            with contextlib.suppress(ValueError):  # not JSON: refused below
                args = loads(arguments)
    else:
        args = parse_arguments(arguments)[1]
    if not isinstance(args, dict):
        raise ValueError("arguments are not a JSON object")
    return args


UNREAD = frozenset({"unknown_tool", "invalid_arguments", "distractor", "transient"})
"""Refusals whose arguments were never read (they need not be a JSON object)."""


REFUSALS: dict[str, str] = {
    "unknown_tool": "no tool of that name was offered",
    "invalid_arguments": "the arguments are not JSON or fail the tool's schema",
    "division_by_zero": "the divisor supplied is zero",
    "unknown_key": "a look-up's key is no record of the instance (the agent's wrong key)",
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
    text = as_text(raw)
    try:
        obj = loads(text) if text else {}
    except ValueError as exc:
        return text, None, f"the arguments are not valid JSON ({exc})"
    if not isinstance(obj, dict):
        return text, None, "the arguments must be a JSON object"
    return text, obj, None


def as_text(value: Any) -> str:
    """Arguments (or a tool's name) as text, whatever JSON type was sent: text as it is,
    anything else as its JSON text (``""`` for none)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError):
        return repr(value)
