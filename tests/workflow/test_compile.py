"""Procedure -> scenario: tool specs, expected calls, dependencies and the step graph."""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft202012Validator

from agentproc.arith import to_number as to_json
from agentproc.declared.file import read_workflow
from agentproc.procedures import Cell, Procedure, generate_procedure
from agentproc.resources import folder
from agentproc.workflow import Scenario, compile_procedure, complete, scenario_of, step_graph
from agentproc.workflow.compile import _fresh_tools, make_tools
from agentproc.workflow.declared.suite import workflow_scenarios
from tests.workflow.shared_names import shared_name_scenarios

CELLS = [
    Cell(steps=1, lookback=1),
    Cell(steps=5, lookback=3),
    Cell(steps=12, lookback=1, mode="integer"),
    Cell(steps=25, lookback=7, range=(0.0, 1.0)),
    Cell(steps=40, lookback=5, range=(-10.0, 10.0), ops="add+sub", mode="integer"),
]
ids = [c.id for c in CELLS]


def record(procedure: Procedure, with_tools: bool = True) -> dict[str, Any]:
    """The JSON form of a compiled procedure (without tools and prompt when told)."""
    exclude = None if with_tools else {"tools", "prompt"}
    return compile_procedure(procedure, with_tools=with_tools).model_dump(
        mode="json", exclude=exclude
    )


@pytest.fixture(params=CELLS, ids=ids)
def procedure(request: pytest.FixtureRequest) -> Procedure:
    return generate_procedure(request.param, seed=3, index=1)


def tools_by_name(scenario: dict) -> dict[str, dict]:
    return {t["function"]["name"]: t["function"] for t in scenario["tools"]}


def test_every_tool_parameters_is_a_valid_draft_2020_12_schema(procedure):
    for tool in record(procedure)["tools"]:
        assert tool["type"] == "function"
        Draft202012Validator.check_schema(tool["function"]["parameters"])


def test_tool_names_are_the_steps_in_order_then_submit_answer(procedure):
    names = [t["function"]["name"] for t in record(procedure)["tools"]]
    n = len(procedure.steps)
    assert names == [f"step_{k}" for k in range(1, n + 1)] + ["submit_answer"]


def test_step_tool_takes_exactly_its_distinct_operands_as_required_numbers(procedure):
    scenario = record(procedure)
    number = "integer" if procedure.cell.mode == "integer" else "number"
    tools = tools_by_name(scenario)
    for s in scenario["steps"]:
        params = tools[s["expected_call"]["name"]]["parameters"]
        operands = list(dict.fromkeys(s["operands"]))
        assert list(params["properties"]) == operands
        assert params["required"] == operands
        assert params["additionalProperties"] is False
        assert {p["type"] for p in params["properties"].values()} == {number}


def test_submit_answer_takes_one_required_answer_of_the_mode_number_type(procedure):
    params = tools_by_name(record(procedure))["submit_answer"]["parameters"]
    number = "integer" if procedure.cell.mode == "integer" else "number"
    assert params["required"] == ["answer"]
    assert params["properties"]["answer"]["type"] == number


def test_expected_call_arguments_are_the_correct_values_of_the_operands(procedure):
    scenario = record(procedure)
    values, scale = procedure.values, procedure.scale
    for s, compiled in zip(procedure.steps, scenario["steps"], strict=True):
        expected = {f"S{i}": to_json(values[i - 1], scale) for i in s.operands}
        assert compiled["expected_call"] == {"name": f"step_{s.step}", "arguments": expected}
        assert compiled["value"] == to_json(s.value, scale)
    last = scenario["steps"][-1]
    assert (scenario["answer"], scenario["answer_variable"]) == (last["value"], last["output"])


def test_depends_on_lists_the_steps_that_define_the_operands(procedure):
    for s in record(procedure)["steps"]:
        produced_by = {int(v[1:]) - 2 for v in s["operands"]} - {-1, 0}  # S1, S2 are inputs
        assert s["depends_on"] == sorted(produced_by)


def test_step_text_and_output_render_the_definition(procedure):
    symbols = {"add": "+", "sub": "-", "mul": "*", "div": "/"}
    for s in record(procedure)["steps"]:
        a, b = s["operands"] if "constant" not in s else [*s["operands"], s["constant"]]
        if isinstance(b, float):
            b = f"{b:.3f}"
        assert s["output"] == f"S{s['step'] + 2}"
        assert s["text"] == f"{s['output']} = {a} {symbols[s['op']]} {b}"


def test_a_constant_operand_is_written_in_the_step_and_is_no_tool_argument():
    p = generate_procedure(Cell(steps=6, lookback=1, ops="sub"), 0, 0)
    scenario = compile_procedure(p)
    first = scenario.steps[0]
    c = p.steps[0].constant
    assert c is not None and first.constant == c / 1000
    assert first.operands == ["S2"] and first.distances == [1]
    assert first.text == f"S3 = S2 - {c / 1000:.3f}"
    assert f"1. S3 = S2 - {c / 1000:.3f}" in scenario.prompt
    tool = tools_by_name(scenario.model_dump(mode="json"))["step_1"]
    assert tool["parameters"]["required"] == ["S2"]
    assert list(tool["parameters"]["properties"]) == ["S2"]
    assert f"S2 - {c / 1000:.3f}" in tool["description"]
    assert first.expected_call.arguments == {"S2": p.inputs[1] / 1000}


def test_tolerance_is_half_a_unit_of_the_mode(procedure):
    expected = 0 if procedure.cell.mode == "integer" else 0.0005
    assert record(procedure)["tolerance"] == expected


def test_step_graph_has_a_data_edge_per_dependency_and_order_edges_between_neighbours(procedure):
    scenario = scenario_of(procedure)
    graph = step_graph(scenario)
    n = len(scenario.steps)
    assert graph.steps == tuple(range(1, n + 1))
    assert set(graph.data_edges) == {(d, s.step) for s in scenario.steps for d in s.depends_on}
    assert all(producer < consumer for producer, consumer in graph.data_edges)
    assert graph.order_edges == tuple((k, k + 1) for k in range(1, n))
    for s in scenario.steps:
        assert sorted(graph.predecessors(s.step)) == s.depends_on


def test_complete_restores_tools_and_prompt_of_a_scenario_stored_without_them(procedure):
    bare = Scenario.model_validate(record(procedure, with_tools=False))
    assert bare.tools == [] and bare.prompt == ""
    assert complete(bare) == scenario_of(procedure)


def test_complete_leaves_a_complete_scenario_unchanged(procedure):
    full = scenario_of(procedure)
    assert complete(full) is full


def test_prompt_lists_inputs_every_step_and_the_finish_tool(procedure):
    scenario = record(procedure)
    prompt = scenario["prompt"]
    assert f"S1 = {scenario['inputs']['S1']}, S2 = {scenario['inputs']['S2']}" in prompt
    for s in scenario["steps"]:
        assert f"\n{s['step']}. {s['text']}\n" in prompt
    assert f"call submit_answer with the value of {scenario['answer_variable']}" in prompt


SHIPPED = sorted(folder("workflows").glob("*.toml"))


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_a_declared_workflows_tools_are_those_made_anew_and_new_objects_each_time(path):
    for scenario in workflow_scenarios(read_workflow(path), path.stem, 5, 1):
        args = (scenario.steps, scenario.mode, scenario.answer_variable, scenario.finish)
        kinds = {"types": scenario.types, "fields": tuple(scenario.answer_fields or ())}
        tools = make_tools(*args, **kinds)  # type: ignore[arg-type]
        assert tools == _fresh_tools(*args, **kinds) == scenario.tools  # type: ignore[arg-type]
        tools[0]["function"]["name"] = "changed"
        assert make_tools(*args, **kinds) == scenario.tools  # type: ignore[arg-type]


def test_declared_workflows_whose_steps_share_names_each_get_their_own_tools():
    first, second = (scenarios[0] for scenarios in shared_name_scenarios())
    reads = [set(s.tools[1]["function"]["parameters"]["properties"]) for s in (first, second)]
    assert reads == [{"middle"}, {"middle", "a"}]
    assert first.tools[1]["function"]["description"] != second.tools[1]["function"]["description"]
