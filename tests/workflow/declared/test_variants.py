"""Variants on a declared workflow: each shipped one presents it (names, order, prompt,
tools, faults, guards) and the fault injectors are labelled as injected under it; the
calculator and descriptive names are refused in one line naming why."""

from __future__ import annotations

import json

import pytest

from agentproc.agents.sim import INJECTORS, run_sim_episode
from agentproc.errors import ConfigError
from agentproc.resources import folder
from agentproc.runs.session import EpisodeSession
from agentproc.workflow.declared.compile import variant_refusal
from agentproc.workflow.declared.suite import load_workflow, workflow_scenarios
from agentproc.workflow.present import present
from agentproc.workflow.scenario import Scenario
from agentproc.workflow.variant import Variant, load_variant, shipped_variants

WF = load_workflow(folder("workflows") / "invoice_approval.toml")
SCENARIOS = list(workflow_scenarios(WF, "invoice_approval", count=3, seed=0))
SCENARIO = SCENARIOS[0]
REFUSED = {"calculator", "descriptive-names"}
APPLYING = sorted(set(shipped_variants()) - REFUSED)


def test_every_shipped_variant_applies_but_the_calculator_and_descriptive_names():
    refused = {n for n in shipped_variants() if variant_refusal(SCENARIO, load_variant(n))}
    assert refused == REFUSED
    assert variant_refusal(SCENARIO, load_variant("calculator")) == (
        "variant 'calculator' does not apply to a declared workflow (the calculator offers "
        "add, sub, mul and div; a declared step computes a formula, which no one of them is)"
    )


def test_a_session_refuses_a_variant_that_cannot_apply_naming_the_scenario():
    with pytest.raises(ConfigError, match=r"^invoice_approval-0000: variant 'descriptive-names'"):
        EpisodeSession(SCENARIO, "x", variant=load_variant("descriptive-names"))


@pytest.mark.parametrize("name", [n for n in APPLYING if n not in ("enforce", "feedback")])
@pytest.mark.parametrize("order", ["listed", "dependency"])
def test_every_injector_is_labelled_as_injected_under_each_variant_that_applies(name, order):
    variant = load_variant(name)
    if variant.faults.slow_seconds:
        variant = variant.model_copy(
            update={"faults": variant.faults.model_copy(update={"slow_seconds": 0.0})}, deep=True
        )
    for scenario in SCENARIOS:
        for agent in INJECTORS:
            ep = run_sim_episode(scenario, agent, seed=0, variant=variant, order=order)
            got = {lab.key() for lab in ep.labels}
            assert got == {lab.key() for lab in ep.injected or []}, (agent, scenario.id)


def test_random_names_rename_the_variables_in_prompt_tools_results_and_labels():
    variant = load_variant("random-names")
    shown = present(SCENARIO, variant)
    names = shown.names
    assert set(names) == set(SCENARIO.variables) and len(set(names.values())) == len(names)
    prompt = shown.scenario.prompt
    assert "net = subtotal - discount" not in prompt
    assert f"{names['net']} = {names['subtotal']} - {names['discount']}, rounded to 2" in prompt
    tool = next(
        t["function"] for t in shown.scenario.tools if t["function"]["name"] == "net_amount"
    )
    assert tool["parameters"]["required"] == [names["subtotal"], names["discount"]]
    session = EpisodeSession(SCENARIO, "hand", variant=variant)
    step = next(s for s in SCENARIO.steps if s.name == "net_amount")
    value = {**SCENARIO.inputs, **{s.output: s.value for s in SCENARIO.steps}}
    args = {names["subtotal"]: value["subtotal"], names["discount"]: value["amount_a"]}
    rec = session.call("net_amount", args)
    assert rec.result.startswith(f"{names['net']} = ")
    label = session.finish("answer").labels[0]
    assert (label.kind.value, label.step) == ("wrong_argument", step.step)
    assert (label.argument, label.confused_with) == (names["discount"], names["amount_a"])


def test_shuffled_lists_the_steps_in_a_dependency_valid_order_the_answer_last():
    shown = present(SCENARIO, load_variant("shuffled")).scenario
    assert [s.name for s in shown.steps] != [s.name for s in SCENARIO.steps]
    assert sorted(s.name for s in shown.steps) == sorted(s.name for s in SCENARIO.steps)
    assert shown.steps[-1].output == SCENARIO.answer_variable
    done: set[str] = set(SCENARIO.inputs)
    for k, s in enumerate(shown.steps, 1):
        assert s.step == k and set(s.operands) <= done
        assert all(shown.steps[d - 1].output in s.operands for d in s.depends_on)
        done.add(s.output)


@pytest.mark.parametrize(
    ("name", "line"),
    [
        ("terse", "3. subtotal: subtotal = amount_a + amount_b, rounded to 2 decimals"),
        ("prose", "Then, call subtotal to compute subtotal = amount_a + amount_b, rounded to 2"),
        ("pseudocode", "    subtotal <- round(amount_a + amount_b, 2)    # step 3: subtotal"),
        ("json", '{"step": 3, "tool": "subtotal", "output": "subtotal", "formula": "amount_a + '),
        ("scrambled-names", "3. subtotal = amount_a + amount_b, rounded to 2 decimals"),
    ],
)
def test_each_rendering_shows_a_step_with_its_tool_output_and_formula(name, line):
    prompt = present(SCENARIO, load_variant(name)).scenario.prompt
    assert line in prompt


def test_scrambled_tool_names_leave_only_the_descriptions_to_tell_the_tools_apart():
    shown = present(SCENARIO, load_variant("scrambled-names"))
    steps = {s.name for s in SCENARIO.steps}
    offered = [t["function"]["name"] for t in shown.scenario.tools]
    assert not steps & set(offered) and offered[-1] == "submit_approval_figure"
    assert not any(f"{s.step}. {s.name}:" in shown.scenario.prompt for s in SCENARIO.steps)


def test_a_template_naming_submit_answer_names_the_workflows_finish_tool():
    prompt = present(SCENARIO, load_variant("checklist")).scenario.prompt
    assert "then call submit_approval_figure with the value of approval_ratio" in prompt
    assert "submit_answer" not in prompt


def test_no_descriptions_strip_every_tool_and_parameter_description():
    tools = present(SCENARIO, load_variant("no-descriptions")).scenario.tools
    assert "description" not in json.dumps(tools)


def test_the_feedback_guard_names_the_next_step_in_the_names_shown():
    variant = Variant(name="fb-random", guard="feedback", names="random")
    session = EpisodeSession(SCENARIO, "hand", variant=variant)
    names = session.presented.names  # type: ignore[union-attr]
    rec = session.call("subtotal", {names["amount_a"]: 1, names["amount_b"]: 2})
    assert rec.refused == "dependency"
    assert rec.result.endswith(
        f"The next step is step 1 ({names['amount_a']} = {names['quantity_a']} * "
        f"{names['unit_price_a']}, rounded to 2 decimals (The amount of order line A: its "
        "quantity times its unit price)): call line_amount_a."
    )


def test_flaky_tools_fail_a_declared_step_transiently_and_execute_nothing():
    session = EpisodeSession(SCENARIO, "hand", variant=Variant(name="f", faults={"transient": 0.9}))
    step = SCENARIO.steps[0]
    rec = session.call(step.name, {v: SCENARIO.inputs[v] for v in step.operands})
    assert rec.refused == "transient" and "temporarily unavailable" in rec.result


def test_distractors_keep_clear_of_the_workflows_own_tool_names():
    data = SCENARIO.model_dump(mode="json") | {"tools": [], "prompt": ""}
    data["steps"][0]["expected_call"]["name"] = "lookup_constant"
    scenario = Scenario.model_validate(data)
    offered = [
        t["function"]["name"] for t in present(scenario, Variant(distractors=4)).scenario.tools
    ]
    assert offered.count("lookup_constant") == 1
    assert {"convert_units", "round_value", "log_note", "get_time"} <= set(offered)
    why = variant_refusal(scenario, Variant(name="all", distractors=8))
    assert why is not None and why.endswith(
        "(it asks for 8 distractor tools; the workflow's own tool names leave 7)"
    )


LOOKUPS = ["order_fulfilment", "warehouse_inspection", "return_window"]


@pytest.mark.parametrize("workflow", LOOKUPS)
@pytest.mark.parametrize("name", [n for n in APPLYING if n not in ("enforce", "feedback")])
def test_a_look_up_workflow_runs_under_every_variant_that_applies(workflow, name):
    # A look-up's formula names its table and ``lookup``: the variants that rename the
    # variables show them as they are (no table or function is a variable).
    wf = load_workflow(folder("workflows") / f"{workflow}.toml")
    variant = load_variant(name)
    if variant.faults.slow_seconds:
        variant = variant.model_copy(
            update={"faults": variant.faults.model_copy(update={"slow_seconds": 0.0})}, deep=True
        )
    for scenario in workflow_scenarios(wf, workflow, count=2, seed=1):
        if variant_refusal(scenario, variant):
            continue
        shown = present(scenario, variant)
        assert "lookup(" in shown.scenario.prompt
        oracle = run_sim_episode(scenario, "sim:oracle", seed=0, variant=variant)
        assert oracle.labels == [], (name, scenario.id)
        for agent in ("sim:wrong_argument", "sim:skipped_step", "sim:wrong_answer"):
            ep = run_sim_episode(scenario, agent, seed=0, variant=variant)
            got = {lab.key() for lab in ep.labels}
            assert got == {lab.key() for lab in ep.injected or []}, (agent, scenario.id)
