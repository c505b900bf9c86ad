"""A procedure's compact on-disk record (a ``procedures.jsonl`` line): written, and read
back checked, with an :class:`~agentproc.errors.InputError` naming the file, the line and
the field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationError

from agentproc.arith import Op
from agentproc.errors import InputError
from agentproc.jsonio import invalid, loads
from agentproc.procedures.procedure import FORMAT, Cell, Procedure, StepDef
from agentproc.procedures.validity import problem_of


def procedure_record(p: Procedure) -> dict[str, Any]:
    """The compact on-disk form of a procedure (values in units); ``format`` is left out
    for a version-1 procedure, so that one is written back exactly as it was read."""
    record = {
        "id": p.id,
        "cell": p.cell.model_dump(mode="json"),
        "seed": p.seed,
        "index": p.index,
        "inputs": list(p.inputs),
        "steps": [_step_record(s) for s in p.steps],
    }
    if p.format != 1:
        record["format"] = p.format
    return record


def _step_record(s: StepDef) -> list[Any]:
    """``[op, left, right, value]``; with a constant (format 3), ``[op, left, 0, value,
    constant]``: the right variable 0 marks the constant, in units, as the fifth item."""
    if s.constant is not None:
        return [s.op.value, s.operands[0], 0, s.value, s.constant]
    return [s.op.value, s.operands[0], s.operands[-1], s.value]


class _ProcedureLine(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    cell: Cell
    seed: int
    index: StrictInt = Field(ge=0)
    """The procedure's place in its cell (``generate`` numbers them from 0)."""
    inputs: tuple[int, int]
    steps: list[tuple[Op, int, int, int] | tuple[Op, int, int, int, int]]
    """``[op, left, right, value]``, or ``[op, left, 0, value, constant]`` (format 3)."""
    format: int = 1


def procedure_of_json(path: Path, where: str, data: Any) -> Procedure:
    """A procedure from its compact JSON (a ``procedures.jsonl`` line), checked; an
    :class:`InputError` naming the file, the line and the field.

    Steps whose every row is plain (``[op, int, int, int]``, or with a fifth ``int``) are
    read by :func:`_plain_steps` and the rest of the line by the model; any other line is
    read whole by the model, which names what is wrong (relabelling reads one procedure
    per distinct scenario, and the model reads a 95-step procedure's rows several times
    slower)."""
    rows = data.get("steps") if type(data) is dict else None
    steps = _plain_steps(rows)
    try:
        if steps is None:
            line = _ProcedureLine.model_validate(data)
            steps = tuple(map(_step_of, range(1, len(line.steps) + 1), line.steps))
        else:
            line = _ProcedureLine.model_validate({**data, "steps": ()})
    except ValidationError as exc:
        raise invalid(path, exc, where) from None
    return _checked(path, where, line, steps)


def procedure_of_text(path: Path, where: str, text: bytes) -> Procedure:
    """:func:`procedure_of_json` of a procedure's JSON text; ``ValueError`` for text that
    is not JSON, as :func:`~agentproc.jsonio.loads` raises."""
    return procedure_of_json(path, where, loads(text))


_OPS = {op.value: op for op in Op}


def _plain_steps(rows: Any) -> tuple[StepDef, ...] | None:
    """The steps of rows that are all plain, read as the model reads them; ``None`` when
    any is not (the model then reads the line and names the row and field)."""
    if type(rows) is not list:
        return None
    # ``tuple.__new__`` makes each step as ``StepDef._make`` does, without its call:
    # 95 rows a procedure, for every distinct procedure of a run.
    steps, new, ops = [], tuple.__new__, _OPS
    operands: tuple[Any, ...]
    for k, row in enumerate(rows, 1):
        if type(row) is not list:
            return None
        if len(row) == 4:
            op, i, j, value = row
            constant, operands = None, (i, j)
        elif len(row) == 5:
            op, i, j, value, constant = row
            if type(constant) is not int:
                return None
            operands = (i,) if j == 0 else (i, j)
        else:
            return None
        op = ops.get(op) if type(op) is str else None
        if op is None or type(i) is not int or type(j) is not int or type(value) is not int:
            return None
        steps.append(new(StepDef, (k, op, operands, value, constant)))
    return tuple(steps)


def _checked(path: Path, where: str, line: _ProcedureLine, steps: tuple[StepDef, ...]) -> Procedure:
    """The procedure of a validated line and its steps, checked against its cell and its
    own steps."""
    if len(steps) != line.cell.steps:
        raise InputError(
            path, f"{len(steps)} steps for a cell of {line.cell.steps}", f"{where}: steps"
        )
    if not 1 <= line.format <= FORMAT:
        raise InputError(
            path, f"procedure format {line.format} is not 1 to {FORMAT}", f"{where}: format"
        )
    procedure = Procedure(
        line.id, line.cell, line.seed, line.index, steps, line.inputs, line.format
    )
    problem = problem_of(procedure)
    if problem is not None:
        raise InputError(path, problem[1], f"{where}: {problem[0]}")
    return procedure


def _step_of(k: int, row: tuple[Any, ...]) -> StepDef:
    """A step from its compact row (see :func:`_step_record`)."""
    if len(row) == 4:
        op, i, j, value = row
        return StepDef(k, op, (i, j), value)
    op, i, j, value, constant = row
    return StepDef(k, op, (i,) if j == 0 else (i, j), value, constant)
