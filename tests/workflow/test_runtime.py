"""The runtime view of a scenario: its indexes agree with the steps they index."""

from __future__ import annotations

import json

import pytest

from agentproc.procedures import Cell, generate_procedure
from agentproc.workflow import CallRecord, build_workflow, scenario_of
from agentproc.workflow.runtime import NO_NUMBER
from agentproc.workflow.scenario import ScenarioStep


@pytest.mark.parametrize(
    "cell",
    [Cell(steps=95, lookback=7), Cell(steps=12, lookback=3, mode="integer", ops="mul")],
    ids=str,
)
def test_the_indexes_of_a_workflow_are_the_steps_own_views(cell: Cell):
    scenario = scenario_of(generate_procedure(cell, 2, 5))
    wf = build_workflow(scenario)
    assert wf.param_vars == tuple(s.param_vars for s in scenario.steps)
    assert wf.targets == tuple(s.target for s in scenario.steps)
    assert wf.by_name == {s.name: s for s in scenario.steps}
    values, holders = wf.ordered
    assert list(values) == sorted(values)
    assert sorted(zip(holders, values, strict=True)) == list(enumerate(wf.correct))[1:]
    pairs = list(zip(values, holders, strict=True))
    assert pairs == sorted(pairs)  # on equal values, the earlier variable first
    # Each variable's value as the number an agent sees (a label's ``expected``), and the
    # fast check's number: that one, or nothing where it would not read back exactly.
    assert wf.expected == tuple(wf.to_number(u) for u in wf.correct)
    for number, x, u in zip(wf.numbers, wf.expected, wf.correct, strict=True):
        assert number is NO_NUMBER if not wf.close(x, u) else number == x


def test_a_step_reading_one_variable_twice_takes_it_once():
    step = ScenarioStep.model_validate(
        {
            "step": 1, "output": "S3", "op": "add", "operands": ["S2", "S2"],
            "distances": [1, 1], "value": 4, "depends_on": [], "live": True, "text": "",
            "expected_call": {"name": "step_1", "arguments": {"S2": 2}},
        }
    )  # fmt: skip
    assert step.param_vars == (("S2", 2),) and step.params == ("S2",)


@pytest.mark.parametrize(
    "cell",
    [Cell(steps=30, lookback=7), Cell(steps=12, lookback=3, mode="integer", ops="mul")],
    ids=str,
)
def test_a_steps_right_arguments_are_the_text_its_right_call_records(cell: Cell):
    wf = build_workflow(scenario_of(generate_procedure(cell, 2, 5)))
    for spec, text in zip(wf.steps, wf.right_arguments, strict=True):
        right = {p: wf.to_number(wf.correct[int(p[1:])]) for p in spec.params}
        assert text == json.dumps(right, separators=(",", ":"))  # as a call records an object
        assert (
            CallRecord.stored(0, spec.name, text, spec.step, None, 1, wf.scale, "x").args == right
        )


def test_no_right_arguments_where_a_number_would_not_read_back():
    scenario = scenario_of(generate_procedure(Cell(steps=6, lookback=3), 0, 1))
    wf = build_workflow(scenario)
    numbers = list(wf.numbers)
    numbers[1] = NO_NUMBER  # S1
    odd = type(wf)(**{**wf.__dict__, "numbers": tuple(numbers)})
    for params, text in zip(odd.param_vars, odd.right_arguments, strict=True):
        assert (text is None) == any(var == 1 for _, var in params)
