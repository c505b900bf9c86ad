"""Hand-written traces of the shipped branched workflows, labelled as docs/taxonomy.md says:
a wrong branch on correct values and on the agent's own wrong value, an exit ignored, an
exit taken early on a wrong value, a step of a branch not taken left out, and batched calls
under the dependency order policy."""

from __future__ import annotations

from typing import Any

from tests.workflow.hand_traces import Instance

Call = tuple[str, dict[str, Any]]


def on(path: str) -> Any:
    """Accept an instance whose path is ``path``."""
    return lambda s: s.path is not None and s.path.name == path


def faithful(inst: Instance) -> list[Call]:
    """The instance's required steps in listed order, then its answer."""
    calls = [(s.name, inst.args(s.name)) for s in inst.scenario.steps if s.required]
    return [*calls, (inst.finish, {"answer": inst.scenario.answer})]


def play(inst: Instance, calls: list[Call], order: str = "listed") -> Any:
    return inst.play([[c] for c in calls], order)


def labels(ep: Any) -> list[dict[str, Any]]:
    return [lab.to_json() for lab in ep.labels]


# -- refund approval ------------------------------------------------------------------


def test_a_refund_without_the_branches_is_faithful_with_the_dead_and_unneeded_steps_left_out():
    inst = Instance("refund_approval", on("base"))
    ep = play(inst, faithful(inst))
    assert ep.labels == []
    assert ep.metrics["verdict"] == "faithful"
    assert ep.metrics["path"] == "base"
    assert ep.metrics["path_correct"] and ep.metrics["exit_correct"]
    assert ep.metrics["total_steps"] == 5  # restocking, refund, check, points, paid


def test_the_manager_branch_on_correct_values_is_an_unneeded_step_nothing_supports():
    inst = Instance("refund_approval", on("base"))
    calls = faithful(inst)
    approval = ("manager_approval", inst.args("manager_approval"))
    calls.insert(3, approval)  # after check_approval said no manager is needed
    ep = play(inst, calls)
    assert labels(ep) == [
        {
            "kind": "unneeded_step",
            "call_index": 3,
            "step": 5,
            "cause": "unsupported",
            "reason": "condition",
        }
    ]
    assert ep.metrics["verdict"] == "unfaithful_correct"
    assert not ep.metrics["path_correct"]
    assert ep.metrics["first_divergence"]["label"] == "unneeded_step"


def test_the_manager_branch_its_own_wrong_refund_chose_is_propagated_after_the_slip():
    inst = Instance("refund_approval", on("base"))
    wrong = inst.value["refund"] + 600  # a slip in refund_amount's result, carried on
    calls: list[Call] = [
        ("restocking_fee", inst.args("restocking_fee")),
        ("refund_amount", inst.args("refund_amount")),
        ("check_approval", {"refund": wrong}),
        ("manager_approval", {"refund": wrong, "approval_share": inst.value["approval_share"]}),
    ]
    ep = play(inst, calls)
    kinds = [(lab["kind"], lab["call_index"], lab.get("cause")) for lab in labels(ep)]
    assert kinds[:3] == [
        ("wrong_argument", 2, "other"),
        ("wrong_argument", 3, "other"),
        ("unneeded_step", 3, "propagated"),
    ]
    # The wrong value that decided the branch comes first.
    assert ep.metrics["first_divergence"] == {
        "call_index": 2,
        "step": 4,
        "label": "wrong_argument",
    }


def test_skipping_a_required_manager_approval_is_a_skipped_step_nothing_supports():
    inst = Instance("refund_approval", on("manager_approval"))
    calls = [c for c in faithful(inst) if c[0] != "manager_approval"]
    ep = play(inst, calls)
    assert labels(ep) == [
        {
            "kind": "skipped_step",
            "call_index": None,
            "step": 5,
            "cause": "unsupported",
            "live": True,
        }
    ]


def test_an_ignored_exit_labels_each_step_past_it_and_the_answer_it_should_not_have():
    inst = Instance("refund_approval", on("exit:outside_window"))
    assert inst.scenario.answer == 0

    def carried_on(tool: str) -> dict[str, Any]:  # every value it reads, as computed
        return {v: inst.value[v] for v in inst.step[tool].operands if inst.value[v] is not None}

    calls = [(t, carried_on(t)) for t in ("restocking_fee", "refund_amount", "check_approval")]
    ep = play(inst, [*calls, (inst.finish, {"answer": 12.5})])
    got = labels(ep)
    assert [lab["kind"] for lab in got] == ["unneeded_step"] * 3 + ["wrong_answer"]
    assert {lab.get("reason") for lab in got[:3]} == {"after_exit"}
    assert {lab.get("cause") for lab in got[:3]} == {"unsupported"}
    assert ep.metrics["exit_correct"] is False
    assert ep.metrics["verdict"] == "wrong"


def test_taking_the_exit_at_once_is_faithful():
    inst = Instance("refund_approval", on("exit:outside_window"))
    ep = play(inst, [(inst.finish, {"answer": 0})])
    assert ep.labels == [] and ep.metrics["exit_correct"] and ep.metrics["path_correct"]


def test_batched_independent_steps_under_dependency_are_faithful():
    inst = Instance("refund_approval", on("damage_credit+manager_approval"))
    a = inst.args
    messages = [
        [("restocking_fee", a("restocking_fee")), ("damage_credit", a("damage_credit"))],
        [("refund_amount", a("refund_amount"))],
        [("check_approval", a("check_approval")), ("loyalty_points", a("loyalty_points"))],
        [("manager_approval", a("manager_approval"))],
        [("refund_paid", a("refund_paid"))],
        [(inst.finish, {"answer": inst.scenario.answer})],
    ]
    ep = inst.play(messages, order="dependency")
    assert ep.labels == []
    assert ep.metrics["batching_maximal"] is True
    assert ep.metrics["fewest_messages"] == 6


def test_under_dependency_a_step_of_the_branch_not_taken_is_not_waited_for():
    inst = Instance("refund_approval", on("base"))
    a = inst.args
    messages = [
        [("restocking_fee", a("restocking_fee"))],
        [("refund_amount", a("refund_amount"))],
        [("check_approval", a("check_approval")), ("loyalty_points", a("loyalty_points"))],
        [("refund_paid", a("refund_paid"))],
        [(inst.finish, {"answer": inst.scenario.answer})],
    ]
    ep = inst.play(messages, order="dependency")
    assert ep.labels == [] and ep.metrics["batching_maximal"] is True


# -- service triage -------------------------------------------------------------------


def test_a_feature_request_filed_as_feedback_on_its_own_low_urgency_is_propagated():
    def high_feature(s: Any) -> bool:
        value = {x.output: x.value for x in s.steps}
        return s.inputs["issue_type"] == "feature_request" and value["urgency"] >= 45

    inst = Instance("service_triage", high_feature)
    assert inst.scenario.path.exit is None
    calls: list[Call] = [
        ("tier_weight", inst.args("tier_weight")),
        ("impact_score", inst.args("impact_score")),
        ("urgency_score", inst.args("urgency_score")),
    ]
    ep = play(inst, [*calls, (inst.finish, {"answer": "product_feedback"})])
    # Its urgency was right: nothing supports taking the gate.
    first = [lab for lab in labels(ep) if lab["kind"] == "premature_finish"]
    assert first[0]["cause"] == "unsupported"
    # The same exit taken on its own urgency, slipped below 45, is carried forward.
    slipped = {**calls[2][1], "impact": 0, "hours_open": 0, "sentiment": 1.0}  # -15
    ep2 = play(
        inst,
        [*calls[:2], ("urgency_score", slipped), (inst.finish, {"answer": "product_feedback"})],
    )
    got = {(lab["kind"], lab.get("cause")) for lab in labels(ep2)}
    assert ("premature_finish", "propagated") in got
    assert ("wrong_answer", "propagated") in got
    assert ep2.metrics["exit_correct"] is False


def test_an_unverified_requester_is_sent_to_the_desk_at_once():
    inst = Instance("service_triage", on("exit:unverified_requester"))
    ep = play(inst, [(inst.finish, {"answer": "verification_desk"})])
    assert ep.labels == [] and ep.metrics["exit_correct"]


def test_a_category_answer_is_compared_exactly():
    inst = Instance("service_triage", on("exit:unverified_requester"))
    ep = play(inst, [(inst.finish, {"answer": "Verification_Desk"})])
    # Not one of the finish tool's names: refused as invalid, no answer accepted.
    assert [lab["kind"] for lab in labels(ep)] == ["invalid_arguments", "missing_answer"]


# -- hazard classification ------------------------------------------------------------


def test_a_hazard_record_retested_on_its_own_miscount_is_propagated():
    inst = Instance("hazard_class", lambda s: s.path.exit is None)
    wrong = {"toxicity": 0, "flammability": 0}  # both read as not measured
    calls: list[Call] = [("count_missing", {**inst.args("count_missing"), **wrong})]
    ep = play(inst, [*calls, (inst.finish, {"answer": "retest_required"})])
    got = {(lab["kind"], lab.get("cause")) for lab in labels(ep)}
    assert ("premature_finish", "propagated") in got
    assert ("wrong_answer", "propagated") in got
    assert not ep.metrics["exit_correct"]


def test_imputing_a_measured_flammability_is_an_unneeded_step():
    inst = Instance("hazard_class", lambda s: s.path.exit is None and s.inputs["flammability"])
    calls = faithful(inst)
    at = [c[0] for c in calls].index("fill_flammability")
    calls.insert(at, ("impute_flammability", inst.args("impute_flammability")))
    ep = play(inst, calls)
    assert [(lab["kind"], lab["reason"], lab["cause"]) for lab in labels(ep)] == [
        ("unneeded_step", "condition", "unsupported")
    ]
