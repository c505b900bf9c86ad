"""The prompt's step list as the demo endpoint reads it, in every rendering, and a request
read under the variants that change what the tools say."""

from __future__ import annotations

import pytest

from agentproc import load_scenario
from agentproc.agents.demo import make_profile, read_turn
from agentproc.agents.demo.listing import listed_steps
from agentproc.arith import SYMBOL
from agentproc.resources import folder
from agentproc.workflow.declared.suite import load_workflow, workflow_scenarios
from agentproc.workflow.present import present
from agentproc.workflow.variant import Variant, load_variant

PINNED = load_scenario("scenarios/pinned/n5-L3-r1_10-mixed-decimal-0000.json")
WORKFLOW = next(
    workflow_scenarios(load_workflow(folder("workflows") / "payroll.toml"), "payroll", 1, 0)
)
RENDERINGS = ("numbered", "prose", "pseudocode", "json")


def opening(presented) -> dict:
    return {
        "tools": presented.scenario.tools,
        "messages": [
            {"role": "system", "content": presented.system},
            {"role": "user", "content": presented.scenario.prompt},
        ],
    }


@pytest.mark.parametrize("rendering", RENDERINGS)
def test_each_rendering_of_a_workflow_lists_every_step_with_its_tool_output_and_rounding(
    rendering,
):
    shown = present(WORKFLOW, Variant(rendering=rendering, names="random"))
    rows = listed_steps(shown.scenario.prompt)
    steps = shown.scenario.steps
    assert [r.number for r in rows] == [s.step for s in steps]
    assert [r.tool for r in rows] == [s.name for s in steps]
    assert [r.output for r in rows] == [shown.shown(s.output) for s in steps]
    assert [r.decimals for r in rows] == [s.decimals for s in steps]


@pytest.mark.parametrize("rendering", RENDERINGS)
def test_each_rendering_of_a_procedure_lists_every_step_as_two_terms_and_an_operation(
    rendering,
):
    shown = present(PINNED, Variant(rendering=rendering, names="random"))
    rows = listed_steps(shown.scenario.prompt)
    assert [r.output for r in rows] == [shown.shown(s.output) for s in PINNED.steps]
    assert [r.decimals for r in rows] == [None] * len(PINNED.steps)
    first = PINNED.steps[0]
    a, b = first.terms(shown.shown)
    assert rows[0].formula == f"{a} {SYMBOL[first.operation]} {b}"


def test_without_descriptions_a_workflows_steps_are_its_prompts_list_with_formulas():
    turn = read_turn(opening(present(WORKFLOW, load_variant("no-descriptions"))))
    assert turn.steps == [s.name for s in WORKFLOW.steps]
    assert turn.finish == WORKFLOW.finish.tool
    assert all(turn.expressions[s].tree is not None for s in turn.steps)


def test_with_distractors_the_finish_tool_is_the_one_taking_the_final_answer():
    for scenario in (PINNED, WORKFLOW):
        shown = present(scenario, load_variant("distractors"))
        assert read_turn(opening(shown)).finish == scenario.finish.tool


def test_the_calculator_is_called_with_each_steps_operation_and_its_operands_values():
    body = opening(present(PINNED, load_variant("calculator")))
    first = PINNED.steps[0]
    reply = make_profile("faithful")(read_turn(body), "k")
    a, b = (PINNED.inputs[v] for v in (first.operands[0], first.operands[-1]))
    assert reply == {"tool_call": {"name": first.operation.value, "arguments": {"a": a, "b": b}}}
    call = {"id": "c1", "type": "function", "function": {"name": "add", "arguments": "{}"}}
    body["messages"] += [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "10.867"},
    ]
    turn = read_turn(body)
    assert turn.answered == (10.867,)
    assert make_profile("faithful")(turn, "k")["tool_call"]["name"] == PINNED.steps[1].op


def test_a_call_that_failed_transiently_is_not_done_and_is_made_again():
    body = opening(present(PINNED, load_variant("flaky-tools")))
    call = {"id": "c1", "type": "function", "function": {"name": "step_1", "arguments": "{}"}}
    body["messages"] += [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {
            "role": "tool",
            "tool_call_id": "c1",
            "content": "Error: step_1 is temporarily unavailable (a transient failure). "
            "Nothing was executed; try again.",
        },
    ]
    turn = read_turn(body)
    assert turn.done == frozenset()
    assert make_profile("faithful")(turn, "k")["tool_call"]["name"] == "step_1"
