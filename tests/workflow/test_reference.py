"""The reference LangGraph graph executes a scenario as a faithful agent would."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import pytest

from agentproc.arith import Op
from agentproc.errors import InputError
from agentproc.labelling import label_calls
from agentproc.procedures import Cell, Procedure, StepDef, generate_procedure
from agentproc.workflow import Scenario, Toolkit, build_workflow, load_scenario, scenario_of
from agentproc.workflow.reference import reference_graph, run_reference_state

PINNED_95 = (
    Path(__file__).parents[2] / "scenarios" / "pinned" / "n95-L7-r10_100-mixed-decimal-0000.json"
)

SCENARIOS = {
    "n1-L1": lambda: scenario_of(generate_procedure(Cell(steps=1, lookback=1), 0, 0)),
    "n5-L3": lambda: scenario_of(generate_procedure(Cell(steps=5, lookback=3), 0, 0)),
    "n12-L1-integer": lambda: scenario_of(
        generate_procedure(Cell(steps=12, lookback=1, mode="integer"), 4, 2)
    ),
    "n25-L7-r0_1": lambda: scenario_of(
        generate_procedure(Cell(steps=25, lookback=7, range=(0, 1)), 1, 0)
    ),
    "n95-L7-r10_100-pinned": lambda: load_scenario(PINNED_95),
    "n200-L16-integer": lambda: scenario_of(
        generate_procedure(Cell(steps=200, lookback=16, mode="integer"), 0, 0)
    ),
}


@pytest.fixture(params=list(SCENARIOS), ids=list(SCENARIOS))
def scenario(request: pytest.FixtureRequest) -> Scenario:
    return SCENARIOS[request.param]()


def expected_trace(s: Scenario) -> list[dict]:
    steps = [st.expected_call.model_dump() for st in s.steps]
    return [*steps, {"name": s.finish.tool, "arguments": {s.finish.argument: s.answer}}]


def test_reference_run_yields_exactly_the_expected_trace(scenario):
    assert run_reference_state(scenario)["calls"] == expected_trace(scenario)


def test_reference_run_ends_with_every_step_value(scenario):
    values = run_reference_state(scenario)["values"]
    assert values == {**scenario.inputs, **{st.output: st.value for st in scenario.steps}}


def test_reference_graph_has_a_node_per_tool_chained_in_listed_order(scenario):
    graph = reference_graph(scenario).get_graph()
    chain = ["__start__", *(t["function"]["name"] for t in scenario.tools), "__end__"]
    assert set(graph.nodes) == set(chain)
    assert sorted((e.source, e.target) for e in graph.edges) == sorted(pairwise(chain))


def test_reference_calls_pass_the_mock_tools_and_the_monitor_finds_nothing():
    s = SCENARIOS["n25-L7-r0_1"]()
    tk = Toolkit(build_workflow(s), "enforce")
    reference_graph(s, tk).invoke(
        {"values": dict(s.inputs), "calls": []}, config={"recursion_limit": len(s.steps) + 10}
    )
    assert [r.refused for r in tk.calls] == [None] * (len(s.steps) + 1)
    labels, metrics = label_calls(tk.workflow, tk.calls)
    assert labels == [] and metrics["verdict"] == "faithful"


def test_compiler_reference_graph_is_the_reference_graph():
    s = SCENARIOS["n5-L3"]()
    state = reference_graph(s).invoke({"values": dict(s.inputs), "calls": []})
    assert state["calls"] == expected_trace(s)


def test_reference_call_refused_by_the_mock_tools_raises_input_error_naming_the_scenario():
    # S2 = 0 and step 1 divides by it: a scenario no generator would write.
    steps = (StepDef(1, Op.DIV, (1, 2), 0),)
    s = scenario_of(Procedure("broken", Cell(steps=1, lookback=2), 0, 0, steps, (1000, 0)))
    with pytest.raises(
        InputError, match=r"scenario broken: .*step_1 was refused: Error: .*divides by zero"
    ):
        run_reference_state(s)
