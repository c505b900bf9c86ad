"""procedure_of_text: a procedure's JSON text read as procedure_of_json reads it parsed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentproc.errors import InputError
from agentproc.jsonio import loads
from agentproc.procedures import (
    Cell,
    generate_procedure,
    procedure_of_json,
    procedure_of_text,
    procedure_record,
)

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
