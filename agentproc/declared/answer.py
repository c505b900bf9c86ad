"""A multi-field answer's checks (format 2): ``answer = ["decision", "reason_code"]``.

The fields are 2 to 8 distinct step outputs, the last step's among them (a step after
every field would never be needed); each is given on every instance where no exit fires
(:mod:`agentproc.declared.paths` checks that on the instances drawn), and each
exit's ``answer`` is a table giving every field a value of its type. Every error is one
:class:`~agentproc.errors.InputError` naming the file and the field.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentproc.declared import formula
from agentproc.declared.formula_types import Type
from agentproc.declared.inputs import MAX_FIELDS
from agentproc.declared.spec import ExitSpec, StepSpec, WorkflowSpec
from agentproc.errors import InputError

_NEEDS_2 = "a multi-field answer needs format = 2"


def check_fields(spec: WorkflowSpec, where: str) -> None:
    """Refuse a list of fields in format 1, a field named twice, a field that is no step's
    output, or a list without the last step's output; refuse a table as a single answer's
    exit answer."""
    fields = spec.fields
    if not fields:
        for i, s in enumerate(spec.steps):
            if isinstance(s, ExitSpec) and isinstance(s.answer, dict):
                raise InputError(
                    where,
                    "a table of fields needs a multi-field answer (answer = [...])",
                    f"steps[{i}] ({s.name}).answer",
                )
        return
    if spec.format != 2:
        raise InputError(where, _NEEDS_2, "answer")
    if not 2 <= len(fields) <= MAX_FIELDS:
        raise InputError(
            where,
            f"a multi-field answer lists 2 to {MAX_FIELDS} fields (not {len(fields)})",
            "answer",
        )
    outputs = [s.output for s in spec.steps if isinstance(s, StepSpec)]
    seen: set[str] = set()
    for f in fields:
        if f in seen:
            raise InputError(where, f"field {f!r} is listed twice", "answer")
        seen.add(f)
        if f not in outputs:
            what = "an input" if f in spec.inputs else "no step's output"
            raise InputError(where, f"field {f!r} is {what} (a field is a step's output)", "answer")
    last = spec.steps[-1]
    if isinstance(last, StepSpec) and last.output not in seen:
        raise InputError(
            where,
            f"the last step's output ({last.output!r}) is not among the fields "
            "(a step after every field would never be needed)",
            "answer",
        )


def exit_fields(
    s: ExitSpec, label: str, fields: tuple[str, ...], where: str, literal: Any
) -> dict[str, formula.Value]:
    """An exit's table of field values, each read by ``literal`` (an exact number); one
    error naming the exit and the field when one is missing, unknown or not a table."""
    if not isinstance(s.answer, dict):
        raise InputError(
            where,
            f"a multi-field answer's exit gives every field: {{ {fields[0]} = ..., ... }}",
            f"{label}.answer",
        )
    for f in fields:
        if f not in s.answer:
            raise InputError(where, f"field {f!r} is missing", f"{label}.answer.{f}")
    for f in s.answer:
        if f not in fields:
            raise InputError(where, f"{f!r} is not a field of the answer", f"{label}.answer.{f}")
    return {f: literal(s.answer[f], where, f"{label}.answer.{f}") for f in fields}


def check_exit_types(
    fields: Mapping[str, formula.Value], types: Mapping[str, Type], label: str, where: str
) -> None:
    """Each field's value of its field's type (a category's: any name)."""
    for f, got in fields.items():
        kind = "number"
        if isinstance(got, bool | str):
            kind = "boolean" if isinstance(got, bool) else "category"
        if kind != types[f].kind:
            raise InputError(
                where,
                f"{got!r} is not of the field's type ({types[f].text(f)})",
                f"{label}.answer.{f}",
            )


def live_fields(spec: WorkflowSpec) -> frozenset[int]:
    """The tool steps (numbered from 1) whose outputs are fields of the answer."""
    fields = set(spec.fields)
    steps = [s for s in spec.steps if isinstance(s, StepSpec)]
    return frozenset(k + 1 for k, s in enumerate(steps) if s.output in fields)
