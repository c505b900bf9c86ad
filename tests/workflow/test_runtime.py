"""The runtime view of a scenario: its indexes agree with the steps they index."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentproc.arith import close, to_number
from agentproc.procedures import Cell, generate_procedure
from agentproc.workflow import build_workflow, compile_procedure, scenario_of, var_index
from agentproc.workflow.runtime import (
    NO_NUMBER,
    _indexed,
    _param_vars,
    declared_workflow,
    procedure_workflow,
)
from agentproc.workflow.scenario import FinishSpec, ScenarioStep
from tests.workflow.shared_names import shared_name_scenarios


@pytest.mark.parametrize(
    "cell",
    [Cell(steps=95, lookback=7), Cell(steps=12, lookback=3, mode="integer", ops="mul")],
    ids=str,
)
def test_the_indexes_of_a_workflow_are_the_steps_own_views(cell: Cell):
    scenario = scenario_of(generate_procedure(cell, 2, 5))
    wf = build_workflow(scenario)
    assert wf.param_vars == tuple(
        tuple((p, var_index(p)) for p in s.params) for s in scenario.steps
    )
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
    assert step.params == ("S2",) and _param_vars((2, 2)) == (("S2", 2),)


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


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.integers(-(10**6), 10**6),
            st.integers(-(10**15) - 5, -(10**15) + 5),
            st.integers(10**15 - 5, 10**15 + 5),
            st.integers(-(2**60), 2**60),
        ),
        min_size=3,
        max_size=12,
    ),
    st.sampled_from([(1000, 0.5), (1, 0.0), (1000, 0.25), (100, 0.5)]),
)
def test_the_fast_check_numbers_are_those_that_read_back_as_their_values(
    units: list[int], scale_tolerance: tuple[int, float]
):
    scale, tolerance = scale_tolerance
    wf = _indexed(
        lambda: None,  # type: ignore[arg-type,return-value]
        scale,
        tolerance,
        [0, *units],
        [(1, 2)] * (len(units) - 2),
        lambda: (),
        FinishSpec(),
        None,
    )
    for number, u in zip(wf.numbers, wf.correct, strict=True):
        x = to_number(u, scale)
        assert number is NO_NUMBER if not close(x, u, scale, tolerance) else number == x


def test_declared_workflows_whose_steps_share_names_are_each_indexed_by_their_own_operands():
    indexed = []
    for scenarios in shared_name_scenarios(3):
        for scenario in scenarios:
            wf = build_workflow(scenario)
            steps = scenario.steps
            assert wf.operands == tuple(tuple(map(wf.var_of, s.operands)) for s in steps)
            assert wf.param_vars == tuple(tuple((p, wf.var_of(p)) for p in s.params) for s in steps)
            assert wf.depends_on == tuple(tuple(s.depends_on) for s in steps)
            from_json = declared_workflow(scenario.model_dump(mode="json"), lambda s=scenario: s)
            assert [getattr(from_json, f) for f in _DECLARED] == [getattr(wf, f) for f in _DECLARED]
        indexed.append(wf)
    assert indexed[0].param_vars != indexed[1].param_vars  # "total" reads a in the second only


_DECLARED = ["correct", "operands", "param_vars", "var_names", "depends_on", "expected", "numbers"]
"""What indexing a declared scenario finds, whether from its models or its JSON."""
