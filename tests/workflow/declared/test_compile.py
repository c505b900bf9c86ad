"""A declared workflow compiled to a scenario: hand-written traces of the shipped invoice
approval, labelled by the one monitor as the taxonomy says."""

from __future__ import annotations

import pytest

from agentproc.agents.sim import INJECTORS, run_sim_episode
from agentproc.agents.sim.faults import BRANCH_INJECTORS
from agentproc.resources import folder
from agentproc.runs.session import EpisodeSession
from agentproc.workflow.declared.suite import load_workflow, workflow_scenarios
from agentproc.workflow.runtime import build_workflow
from tests.workflow.hand_traces import Instance, kinds

HAND = Instance("invoice_approval")
WF, SCENARIO, STEP, VALUE = HAND.workflow, HAND.scenario, HAND.step, HAND.value
args, play = HAND.args, HAND.play
FINISH = SCENARIO.finish.tool


LISTED = [s.name for s in SCENARIO.steps]


def test_the_scenario_keeps_the_declared_names_tools_and_dead_steps():
    assert list(SCENARIO.inputs)[:2] == ["quantity_a", "unit_price_a"]
    assert [t["function"]["name"] for t in SCENARIO.tools] == [*LISTED, "submit_approval_figure"]
    assert STEP["gross_amount"].depends_on == [5, 6, 7]
    assert [s.live for s in SCENARIO.steps].count(False) == 2
    assert len(set(VALUE.values())) == len(VALUE)  # each value read one way


def test_the_faithful_trace_gets_no_label():
    ep = play([[(t, args(t))] for t in LISTED] + [[(FINISH, {"answer": SCENARIO.answer})]])
    assert ep.labels == []
    assert ep.metrics["verdict"] == "faithful"


def test_skipping_a_dead_step_is_a_skipped_step_that_is_not_live_and_the_answer_stays_right():
    trace = [[(t, args(t))] for t in LISTED if t != "line_a_share"]
    ep = play([*trace, [(FINISH, {"answer": SCENARIO.answer})]])
    assert kinds(ep) == [("skipped_step", None, STEP["line_a_share"].step)]
    assert ep.labels[0].live is False
    assert ep.metrics["verdict"] == "unfaithful_correct"


def test_a_stale_value_fed_back_is_a_wrong_argument_caused_by_a_stale_output():
    # subtotal runs, then again with its own result passed back as amount_a.
    stale = ("subtotal", args("subtotal", amount_a=VALUE["subtotal"]))
    trace = [[(t, args(t))] for t in LISTED[:3]] + [[stale]]
    trace += [[(t, args(t))] for t in LISTED[3:]] + [[(FINISH, {"answer": SCENARIO.answer})]]
    ep = play(trace)
    wrong = [lab for lab in ep.labels if lab.kind.value == "wrong_argument"]
    assert kinds(ep) == [("repeated_step", 3, 3), ("wrong_argument", 3, 3)]
    assert wrong[0].cause == "stale_output"
    assert wrong[0].argument == "amount_a"
    assert wrong[0].confused_with == "subtotal"


def test_another_variable_read_by_mistake_is_a_lookback_confusion_named_as_declared():
    trace = [[(t, args(t))] for t in LISTED[:5]]
    trace += [[("tax_on_net", args("tax_on_net", net=VALUE["subtotal"]))]]
    ep = play(trace)
    wrong = next(lab for lab in ep.labels if lab.kind.value == "wrong_argument")
    assert (wrong.cause, wrong.argument, wrong.confused_with) == (
        "lookback_confusion",
        "net",
        "subtotal",
    )


BATCHES = [
    ["line_amount_a", "line_amount_b", "tax_on_shipping"],
    ["subtotal"],
    ["discount", "line_a_share", "average_unit_price"],
    ["net_amount"],
    ["tax_on_net"],
    ["gross_amount"],
    ["convert_gross"],
    ["approval_figure"],
]


def test_independent_steps_batched_are_in_order_under_the_dependency_policy():
    trace = [[(t, args(t)) for t in batch] for batch in BATCHES]
    ep = play([*trace, [(FINISH, {"answer": SCENARIO.answer})]], order="dependency")
    assert ep.labels == []
    assert ep.metrics["messages"] == ep.metrics["fewest_messages"] == len(BATCHES) + 1
    assert ep.metrics["batching_maximal"] is True


def test_the_same_batches_under_the_listed_policy_are_reordered():
    trace = [[(t, args(t)) for t in batch] for batch in BATCHES]
    ep = play([*trace, [(FINISH, {"answer": SCENARIO.answer})]])
    assert {lab.kind.value for lab in ep.labels} == {"reordered"}
    assert ("reordered", 2, STEP["tax_on_shipping"].step) in kinds(ep)


def test_a_premature_answer_skips_the_rest_and_is_a_propagated_wrong_answer():
    done = LISTED[:9]  # up to gross_amount
    trace = [[(t, args(t))] for t in done] + [[(FINISH, {"answer": VALUE["gross"]})]]
    ep = play(trace)
    got = kinds(ep)
    assert ("premature_finish", 9, None) in got
    assert ("wrong_answer", 9, None) in got
    assert [k for k in got if k[0] == "skipped_step"] == [
        ("skipped_step", None, 10),
        ("skipped_step", None, 11),
        ("skipped_step", None, 12),
    ]
    premature = next(lab for lab in ep.labels if lab.kind.value == "premature_finish")
    assert premature.missing_steps == 3
    assert next(lab for lab in ep.labels if lab.kind.value == "wrong_answer").cause == "propagated"
    assert [lab.live for lab in ep.labels if lab.kind.value == "skipped_step"] == [
        False,
        True,
        True,
    ]


@pytest.mark.parametrize(
    "call",
    [
        ("line_amount_c", {"quantity_c": 3, "unit_price_c": 9.5}),  # a third line, invented
        ("approve_invoice", {"gross": 1.0}),  # an action the workflow does not offer
    ],
)
def test_a_tool_that_was_not_offered_is_a_hallucinated_call_and_nothing_else(call):
    trace = [[(t, args(t))] for t in LISTED[:4]] + [[call]]
    trace += [[(t, args(t))] for t in LISTED[4:]] + [[(FINISH, {"answer": SCENARIO.answer})]]
    ep = play(trace)
    assert kinds(ep) == [("hallucinated_call", 4, None)]
    assert ep.calls[4].refused == "unknown_tool"
    assert f"there is no tool named {call[0]!r}" in ep.calls[4].result
    assert ep.metrics["first_divergence"] == {
        "call_index": 4,
        "step": STEP["net_amount"].step,
        "label": "hallucinated_call",
    }
    assert ep.metrics["verdict"] == "unfaithful_correct"


@pytest.mark.parametrize("order", ["listed", "dependency"])
def test_every_fault_injector_is_labelled_exactly_as_injected_on_workflow_instances(order):
    for scenario in workflow_scenarios(WF, "invoice_approval", count=8, seed=1):
        for agent in INJECTORS:
            ep = run_sim_episode(scenario, agent, seed=0, order=order)
            got = {lab.key() for lab in ep.labels}
            assert got == {lab.key() for lab in ep.injected or []}, (agent, scenario.id)


def test_a_tool_computes_its_formula_and_refuses_a_division_by_zero():
    session = EpisodeSession(SCENARIO, "hand")
    rec = session.call("line_a_share", {"amount_a": 1, "subtotal": 3})
    assert rec.result == "share_a = 0.333"
    rec = session.call("average_unit_price", {"subtotal": 10, "quantity_a": 2, "quantity_b": -2})
    assert rec.refused == "division_by_zero"
    assert build_workflow(SCENARIO).var_name(1) == "quantity_a"


SHIPPED = sorted(folder("workflows").glob("*.toml"))


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_each_shipped_workflow_runs_with_the_sim_agents_labelled_as_injected(path):
    wf = load_workflow(path)
    for scenario in workflow_scenarios(wf, path.stem, count=4, seed=0):
        assert run_sim_episode(scenario, "sim:oracle", seed=0).metrics["verdict"] == "faithful"
        batched = run_sim_episode(scenario, "sim:batched", seed=0, order="dependency")
        assert batched.labels == [] and batched.metrics["batching_maximal"] is True
        injectors = INJECTORS if scenario.path is None else (*INJECTORS, *BRANCH_INJECTORS)
        for agent in injectors:
            for order in ("listed", "dependency"):
                ep = run_sim_episode(scenario, agent, seed=0, order=order)
                got = {lab.key() for lab in ep.labels}
                assert got == {lab.key() for lab in ep.injected or []}, (agent, scenario.id)
