"""A scenario as a variant presents it: rendering, names, listed order, tools and prompt."""

from __future__ import annotations

import json

import pytest

from agentproc.agents.sim import run_sim_episode
from agentproc.arith import apply_units
from agentproc.labelling import LabelKind, label_calls
from agentproc.procedures import Cell, generate_procedure
from agentproc.workflow import Toolkit, build_workflow, scenario_of
from agentproc.workflow.present import DISTRACTORS, present
from agentproc.workflow.variant import Variant
from agentproc.workflow.variant_prompt import render_steps


def scenario(steps: int = 8, lookback: int = 3, index: int = 0):
    return scenario_of(generate_procedure(Cell(steps=steps, lookback=lookback), 0, index))


def test_a_variant_that_only_sets_the_guard_presents_todays_prompt_and_tools():
    s = scenario()
    p = present(s, Variant(name="g", guard="feedback"))
    assert p.scenario.prompt == s.prompt and p.scenario.tools == s.tools
    assert p.scenario.steps == s.steps


@pytest.mark.parametrize("rendering", ["numbered", "prose", "pseudocode", "json"])
def test_every_rendering_shows_every_step_with_its_operation_and_operands(rendering):
    s = scenario()
    names = {f"S{i}": f"S{i}" for i in range(1, 11)}
    text = render_steps(s, rendering, names)
    prompt = present(s, Variant(rendering=rendering)).scenario.prompt
    assert text in prompt and "S1 = " in prompt and s.answer_variable in prompt
    for st in s.steps:
        assert st.output in text and all(op in text for op in st.operands)
    if rendering == "json":
        rows = [json.loads(line) for line in text.splitlines()]
        assert [(r["output"], r["op"], r["left"], r["right"]) for r in rows] == [
            (st.output, st.op.value, *st.operands) for st in s.steps
        ]
    if rendering == "prose":
        assert "\n" not in text and text.startswith("First, compute S3 as ")


def test_descriptive_names_replace_every_variable_in_prompt_tools_and_results():
    s = scenario()
    p = present(s, Variant(names="descriptive"))
    assert p.names["S1"] == "input_1" and p.names["S3"] == f"{_noun(s.steps[0].op)}_1"
    blob = p.scenario.prompt + json.dumps(p.scenario.tools)
    assert "S3" not in blob and "S10" not in blob
    tool = p.scenario.tools[0]["function"]
    assert sorted(tool["parameters"]["required"]) == sorted(p.names[v] for v in s.steps[0].params)
    wf = build_workflow(p.scenario)
    tk = Toolkit(wf, presented=p)
    rec = tk.call("step_1", {p.names[v]: s.inputs[v] for v in s.steps[0].params})
    assert rec.refused is None and rec.result.startswith(p.names["S3"] + " = ")
    assert rec.args == {v: s.inputs[v] for v in s.steps[0].params}  # canonical inside
    wrong = tk.call("step_2", {v: 1 for v in s.steps[1].params})  # the hidden names
    assert wrong.refused == "invalid_arguments"


def _noun(op):
    return {"add": "sum", "sub": "difference", "mul": "product", "div": "quotient"}[op.value]


def test_random_names_are_seeded_distinct_and_hide_the_numbering():
    s = scenario()
    a = present(s, Variant(names="random")).names
    assert a == present(s, Variant(names="random")).names
    assert a != present(s, Variant(names="random", seed=1)).names
    assert len(set(a.values())) == len(a) and not any(n.startswith("S") for n in a.values())


def test_a_shuffled_order_is_dependency_valid_keeps_the_answer_last_and_every_value():
    for index in range(20):
        s = scenario(steps=12, lookback=5, index=index)
        p = present(s, Variant(order="shuffled"))
        shown = p.scenario
        assert shown.steps[-1].value == s.steps[-1].value and shown.answer == s.answer
        for st in shown.steps:
            assert all(d < st.step for d in st.depends_on)
            assert all(int(v[1:]) < st.target for v in st.operands)
        # The same computations, renamed: each step's value from its renamed operands.
        wf = build_workflow(shown)
        for st in shown.steps:
            a, b = (wf.correct[v] for v in st.operand_vars)
            assert apply_units(st.op, a, b, wf.scale) == wf.correct[st.target]
        original = {p.names[st.output]: st.step for st in shown.steps}
        assert sorted(original) == sorted(st.output for st in s.steps)
    moved = [present(scenario(12, 5, i), Variant(order="shuffled")).names for i in range(20)]
    assert any(any(k != v for k, v in names.items()) for names in moved)


def test_the_monitor_follows_the_listed_order_of_a_shuffled_variant():
    s = next(
        c
        for c in (scenario(12, 5, i) for i in range(50))
        if any(k != v for k, v in present(c, Variant(order="shuffled")).names.items())
    )
    variant = Variant(order="shuffled")
    listed = run_sim_episode(s, "sim:oracle", variant=variant)
    assert listed.metrics["verdict"] == "faithful"
    # The generated order, in the presented names, is out of the listed order.
    p = present(s, variant)
    wf = build_workflow(p.scenario)
    by_output = {p.names[st.output]: st for st in p.scenario.steps}
    tk = Toolkit(wf, presented=p)
    for st in s.steps:
        mine = by_output[st.output]
        args = {p.names[v]: wf.to_number(wf.correct[int(v[1:])]) for v in mine.params}
        tk.call(p.tool_names[mine.name], args)
    tk.call("submit_answer", {"answer": s.answer})
    labels, _ = label_calls(wf, tk.calls)
    assert labels and {lab.kind for lab in labels} == {LabelKind.REORDERED}


def test_tool_set_knobs_change_only_the_offered_tools():
    s = scenario()
    names = lambda v: [t["function"]["name"] for t in present(s, v).scenario.tools]  # noqa: E731
    assert names(Variant(tools="calculator")) == ["add", "sub", "mul", "div", "submit_answer"]
    assert names(Variant(distractors=3)) == [
        *(st.name for st in s.steps),
        *(d for d, _ in DISTRACTORS[:3]),
        "submit_answer",
    ]
    scrambled = names(Variant(scramble_names=True))
    assert scrambled[-1] == "submit_answer" and len(set(scrambled)) == len(scrambled)
    assert not any(n.startswith("step_") for n in scrambled[:-1])
    bare = json.dumps(present(s, Variant(descriptions=False)).scenario.tools)
    assert "description" not in bare


def test_a_prompt_template_gets_the_four_placeholders():
    s = scenario(steps=3)
    template = "IN[{inputs}] STEPS[{procedure}] TOOLS[{tools}] ANS[{answer_variable}] {keep}"
    p = present(s, Variant(prompt={"user": template, "system": "Be exact."}))
    assert p.system == "Be exact."
    prompt = p.scenario.prompt
    assert prompt.startswith(f"IN[S1 = {s.inputs['S1']}, S2 = {s.inputs['S2']}] STEPS[1. S3 = ")
    assert "TOOLS[step_1, step_2, step_3, submit_answer]" in prompt
    assert prompt.endswith(f"ANS[{s.answer_variable}] {{keep}}")


@pytest.mark.parametrize("mode", ["decimal", "integer"])
def test_a_variant_that_keeps_the_wording_prompts_as_the_compiled_scenario_does(mode):
    scenario = scenario_of(generate_procedure(Cell(steps=6, lookback=2, mode=mode), 0, 0))
    assert present(scenario, Variant(name="x", distractors=1)).scenario.prompt == scenario.prompt
    assert scenario.prompt.startswith("Execute the following procedure exactly")
    rounding = "3 decimal places" if mode == "decimal" else "Every value is an integer."
    assert rounding in scenario.prompt and "call submit_answer with the value of S8." in (
        scenario.prompt
    )
