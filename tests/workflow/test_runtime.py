"""The runtime view of a scenario: its indexes agree with the steps they index."""

from __future__ import annotations

import pytest

from agentproc.procedures import Cell, generate_procedure
from agentproc.workflow import build_workflow, scenario_of
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
