"""The runtime view of a scenario: its indexes agree with the steps they index."""

from __future__ import annotations

import pytest

from agentproc.procedures import Cell, generate_procedure
from agentproc.workflow import build_workflow, compile_procedure, scenario_of
from agentproc.workflow.runtime import NO_NUMBER, procedure_workflow
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
    assert tuple(wf.targets) == tuple(s.target for s in scenario.steps)
    assert wf.depends_on == tuple(tuple(s.depends_on) for s in scenario.steps)
    assert wf.live == tuple(s.live for s in scenario.steps)
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


_INDEX = [
    "scale",
    "tolerance",
    "correct",
    "finish_tool",
    "finish_argument",
    "param_vars",
    "depends_on",
    "live",
    "variant",
    "holding",
    "numbers",
    "expected",
    "ordered",
]


@pytest.mark.parametrize(
    "cell",
    [Cell(steps=40, lookback=7), Cell(steps=12, lookback=3, mode="integer", ops="mul")],
    ids=str,
)
def test_a_procedures_workflow_is_indexed_as_its_compiled_scenarios(cell: Cell):
    procedure = generate_procedure(cell, 3, 1)
    lean = procedure_workflow(procedure)
    full = build_workflow(compile_procedure(procedure, with_tools=False))
    assert {k: getattr(lean, k) for k in _INDEX} == {k: getattr(full, k) for k in _INDEX}
    assert type(lean.tolerance) is type(full.tolerance)
    assert lean.scenario == full.scenario and lean.steps == full.steps


def test_a_procedures_workflow_compiles_its_scenario_only_when_asked_and_once():
    made = []
    procedure = generate_procedure(Cell(steps=5, lookback=2), 0, 0)

    def make():
        made.append(1)
        return compile_procedure(procedure, with_tools=False)

    wf = procedure_workflow(procedure, make)
    assert wf.n_steps == 5 and wf.answer == procedure.answer and made == []
    assert wf.by_name["step_2"].step == 2 and wf.scenario is wf.scenario and made == [1]


def test_a_workflows_liveness_is_made_only_when_asked_and_once():
    made = []
    procedure = generate_procedure(Cell(steps=6, lookback=2), 0, 0)
    wf = procedure_workflow(procedure)
    object.__setattr__(wf, "make_live", lambda: made.append(1) or procedure.live)
    assert wf.n_steps == 6 and made == []
    assert wf.live == procedure.live and wf.live is wf.live and made == [1]
