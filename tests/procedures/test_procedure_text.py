"""procedure_of_text reads a procedure's JSON text as procedure_of_json reads it parsed,
and procedure_of_json reads plain step rows as its model reads them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from agentproc.errors import InputError
from agentproc.jsonio import invalid, loads
from agentproc.procedures import (
    Cell,
    generate_procedure,
    procedure_of_json,
    procedure_of_text,
    procedure_record,
)
from agentproc.procedures.records import _checked, _ProcedureLine, _step_of

WHERE = Path("run.jsonl")


def _record(**cell: Any) -> dict[str, Any]:
    return procedure_record(generate_procedure(Cell(steps=12, **cell), seed=3, index=1))


def _text(rec: dict[str, Any]) -> bytes:
    return json.dumps(rec, separators=(",", ":")).encode()


@pytest.mark.parametrize(
    "cell", [{}, {"lookback": 1}, {"mode": "integer"}, {"lookback": 5, "ops": "mul+div"}]
)
def test_a_procedure_text_reads_as_its_parsed_json(cell: dict[str, Any]):
    rec = _record(**cell)
    assert procedure_of_text(WHERE, "line 1", _text(rec)) == procedure_of_json(WHERE, "line 1", rec)


def _error(read: Any) -> tuple[str, str]:
    with pytest.raises(InputError) as caught:
        read()
    return str(caught.value.field), str(caught.value)


@pytest.mark.parametrize(
    "change",
    [
        lambda r: r["steps"][3].__setitem__(3, r["steps"][3][3] + 1),  # a wrong value
        lambda r: r["steps"][2].__setitem__(1, 9),  # a variable it cannot see
        lambda r: r.__setitem__("inputs", [0, 1]),  # inputs outside the range
        lambda r: r.__setitem__("index", "1"),  # not a strict integer
        lambda r: r.__setitem__("extra", 1),  # an unknown field
        lambda r: r["cell"].__setitem__("range", [1.0, float("nan")]),  # NaN: loads refuses it
    ],
)
def test_a_bad_procedure_text_gets_the_error_of_its_parsed_json(change: Any):
    rec = _record()
    change(rec)
    text = _text(rec)
    try:
        parsed = loads(text)
    except ValueError as refused:
        with pytest.raises(ValueError) as caught:
            procedure_of_text(WHERE, "line 1", text)
        assert str(caught.value) == str(refused)
        return
    expected = _error(lambda: procedure_of_json(WHERE, "line 1", parsed))
    assert _error(lambda: procedure_of_text(WHERE, "line 1", text)) == expected


def test_text_that_is_not_json_raises_value_error():
    with pytest.raises(ValueError):
        procedure_of_text(WHERE, "line 1", b'{"id": ')


def _by_the_model(data: Any) -> Any:
    """The procedure (or the error) the model alone makes of a line: the oracle."""
    try:
        line = _ProcedureLine.model_validate(data)
    except ValidationError as exc:
        return ("invalid", str(invalid(WHERE, exc, "line 1")))
    steps = tuple(map(_step_of, range(1, len(line.steps) + 1), line.steps))
    try:
        return _checked(WHERE, "line 1", line, steps)
    except InputError as exc:
        return ("invalid", str(exc))


def _by_the_reader(data: Any) -> Any:
    try:
        return procedure_of_json(WHERE, "line 1", data)
    except InputError as exc:
        return ("invalid", str(exc))


ODD = [True, False, 0, 3, 3.0, 3.5, -1, "3", "add", "ADD", None, [1], {"a": 1}]
"""Values put in a step row's fields: some the model reads (lax), some it refuses."""


@pytest.mark.parametrize("lookback", [1, 3])
@pytest.mark.parametrize("field", range(5))
@pytest.mark.parametrize("value", ODD, ids=repr)
def test_a_step_row_with_any_field_is_read_as_the_model_reads_it(
    lookback: int, field: int, value: Any
):
    rec = _record(lookback=lookback)
    for k, row in enumerate(rec["steps"]):
        row = list(row)
        if field < len(row):
            row[field] = value
        else:  # a fifth field: a constant (or whatever stands there)
            row.append(value)
        changed = {**rec, "steps": [*rec["steps"][:k], row, *rec["steps"][k + 1 :]]}
        assert _by_the_reader(changed) == _by_the_model(changed)


@pytest.mark.parametrize(
    "row", [None, 3, "add", [], ["add", 1, 2], ["add", 1, 2, 3, 4, 5]], ids=repr
)
def test_a_step_row_of_another_shape_is_read_as_the_model_reads_it(row: Any):
    rec = _record()
    rec["steps"][4] = row
    assert _by_the_reader(rec) == _by_the_model(rec)
    assert _by_the_reader({**rec, "steps": row}) == _by_the_model({**rec, "steps": row})
