"""One test per monitor rule, on a four-step procedure whose values are easy to read.

S1 = 2, S2 = 3; step 1: S3 = S1 + S2 = 5; step 2: S4 = S3 * S2 = 15;
step 3: S5 = S4 - S2 = 12 (dead: the answer does not read it); step 4: S6 = S4 / S3 = 3.
"""

from __future__ import annotations

from helpers import ORACLE, kinds, run, step, submit

from agentproc.labelling import Label, LabelKind


def only(labels: list[Label], kind: str) -> list[Label]:
    return [lab for lab in labels if lab.kind.value == kind]


def test_faithful_trace_has_no_labels_and_verdict_faithful():
    labels, m, _ = run(ORACLE)
    assert labels == []
    assert m["verdict"] == "faithful" and m["faithful"] is True
    assert m["longest_correct_prefix"] == 4 and m["first_divergence"] is None
    assert m["progress_rate"] == 1.0 and m["executed_steps"] == 4


def test_hallucinated_call_to_unoffered_tool_excludes_other_labels():
    labels, m, recs = run([step(1), ("step_5", {"S6": 3}), ("calculator", "not json"), *ORACLE[1:]])
    assert kinds(labels) == [("hallucinated_call", 1, None), ("hallucinated_call", 2, None)]
    assert recs[1].refused == "unknown_tool" and recs[1].value is None
    assert m["verdict"] == "unfaithful_correct"


def test_invalid_arguments_not_json_or_schema_failure_only_label_on_call():
    calls = [step(1), ("step_2", '{"S3": 5, "S2":'), ("step_2", {"S3": "5", "S2": 3}), *ORACLE[1:]]
    labels, _, _ = run(calls)
    assert kinds(labels) == [("invalid_arguments", 1, 2), ("invalid_arguments", 2, 2)]


def test_correct_retry_after_invalid_arguments_is_not_a_repeat():
    labels, _, _ = run([("step_1", {"S1": 2}), *ORACLE])
    assert [lab.kind for lab in labels] == [LabelKind.INVALID_ARGUMENTS]


def test_invalid_arguments_on_a_repeated_step_carry_no_repeat_label():
    labels, _, _ = run([step(1), ("step_1", {"S1": 2, "S2": 3, "S9": 1}), *ORACLE[1:]])
    assert kinds(labels) == [("invalid_arguments", 1, 1)]


def test_repeated_step_same_call_is_not_self_correction():
    labels, m, _ = run([step(1), step(1), *ORACLE[1:]])
    rep = only(labels, "repeated_step")
    assert kinds(rep) == [("repeated_step", 1, 1)] and rep[0].self_correction is False
    assert m["verdict"] == "unfaithful_correct"


def test_repeated_step_fixing_a_wrong_value_is_self_correction():
    labels, _, _ = run([step(1, S1=4), step(1), *ORACLE[1:]])
    assert kinds(labels) == [("wrong_argument", 0, 1), ("repeated_step", 1, 1)]
    assert labels[1].self_correction is True


def test_reordered_labels_the_fewest_steps_out_of_order():
    labels, _, _ = run([step(1), step(2), step(4), step(3), submit()])
    assert kinds(labels) == [("reordered", 2, 4)]


def test_reordered_tie_labels_the_step_that_ran_early():
    # [1, 3, 2, 4]: removing step 3 or step 2 both restore order; step 3 ran too early.
    labels, _, _ = run([step(1), step(3), step(2), step(4), submit()])
    assert kinds(labels) == [("reordered", 1, 3)]


def test_reordered_breaks_dependency_when_it_ran_before_its_producer():
    labels, _, _ = run([step(2), step(1), step(3), step(4), submit()])
    assert kinds(labels) == [("reordered", 0, 2)]
    assert labels[0].breaks_dependency is True


def test_reordered_without_reading_the_skipped_over_step_keeps_dependencies():
    labels, _, _ = run([step(1), step(2), step(4), step(3), submit()])
    assert labels[0].breaks_dependency is False


def test_reordered_ignores_repeats_and_refused_calls():
    labels, _, _ = run([step(1), step(2), step(1), step(3), ("step_2", "{"), step(4), submit()])
    assert [lab.kind.value for lab in labels] == ["repeated_step", "invalid_arguments"]


def test_enforce_mode_refuses_a_step_before_its_dependency_and_labels_it_reordered():
    labels, m, recs = run([step(2), *ORACLE], guard="enforce")
    assert recs[0].refused == "dependency" and recs[0].value is None
    assert kinds(labels) == [("reordered", 0, 2)]
    assert labels[0].refused is True and labels[0].breaks_dependency is True
    assert m["executed_steps"] == 4


def test_wrong_argument_other_when_value_matches_nothing():
    labels, _, _ = run(
        [step(1, S1=7), step(2, S3=10), step(3, S4=30), step(4, S4=30, S3=10), submit(3)]
    )
    first = labels[0]
    assert (first.kind.value, first.call_index, first.step, first.argument) == (
        "wrong_argument",
        0,
        1,
        "S1",
    )
    assert first.cause == "other" and first.expected == 2 and first.got == 7


def test_wrong_argument_propagated_when_it_carries_the_agents_own_wrong_value():
    labels, m, _ = run(
        [step(1, S1=7), step(2, S3=10), step(3, S4=30), step(4, S4=30, S3=10), submit(3)]
    )
    causes = [(lab.call_index, lab.argument, lab.cause) for lab in only(labels, "wrong_argument")]
    assert causes == [
        (0, "S1", "other"),
        (1, "S3", "propagated"),
        (2, "S4", "propagated"),
        (3, "S4", "propagated"),
        (3, "S3", "propagated"),
    ]
    assert m["verdict"] == "unfaithful_correct"  # 30 / 10 = 3: right answer, wrong work


def test_wrong_argument_lookback_confusion_names_the_variable_read():
    labels, _, _ = run([step(1), step(2, S3=3), step(3, S4=9), step(4, S4=9, S3=5), submit(1.8)])
    first = labels[0]
    assert first.cause == "lookback_confusion" and first.confused_with == "S2"


def test_skipped_step_on_a_dead_step_keeps_the_answer_right():
    labels, m, _ = run([step(1), step(2), step(4), submit()])
    assert kinds(labels) == [("skipped_step", None, 3)]
    assert labels[0].live is False
    assert m["verdict"] == "unfaithful_correct" and m["first_answer_correct"] is True


def test_premature_finish_counts_missing_steps_and_answer_cause_propagated():
    labels, m, _ = run([step(1), step(2), submit(15)])
    assert kinds(labels) == [
        ("premature_finish", 2, None),
        ("wrong_answer", 2, None),
        ("skipped_step", None, 3),
        ("skipped_step", None, 4),
    ]
    assert labels[0].missing_steps == 2
    assert labels[1].cause == "propagated"
    assert m["verdict"] == "wrong"


def test_missing_answer_when_no_answer_is_submitted():
    labels, m, _ = run(ORACLE[:-1])
    assert kinds(labels) == [("missing_answer", None, None)]
    assert m["verdict"] == "no_answer" and m["first_answer"] is None


def test_wrong_answer_unsupported_when_no_chain_value_matches():
    labels, m, _ = run([*ORACLE[:-1], submit(99)])
    assert kinds(labels) == [("wrong_answer", 4, None)] and labels[0].cause == "unsupported"
    assert m["verdict"] == "wrong"


def test_wrong_answer_propagated_when_it_is_the_agents_own_final_value():
    labels, _, _ = run([step(1), step(2), step(3), step(4, S3=3), submit(5)])
    assert [(lab.kind.value, lab.cause) for lab in labels] == [
        ("wrong_argument", "lookback_confusion"),
        ("wrong_answer", "propagated"),
    ]


def test_answer_revised_on_every_later_answer_with_self_correction():
    labels, m, _ = run([*ORACLE[:-1], submit(99), submit(3), submit(4)])
    revised = only(labels, "answer_revised")
    assert [(lab.call_index, lab.self_correction) for lab in revised] == [(5, True), (6, False)]
    assert m["first_answer"] == 99 and m["final_answer"] == 4 and m["answers"] == 3
    assert m["verdict"] == "wrong"


def test_calls_after_the_first_answer_are_labelled():
    labels, _, _ = run([*ORACLE, ("step_9", {}), step(2)])
    assert kinds(labels) == [("hallucinated_call", 5, None), ("repeated_step", 6, 2)]


def test_answer_within_half_a_unit_is_right_and_beyond_is_wrong():
    assert run([*ORACLE[:-1], submit(3.0004)])[1]["first_answer_correct"] is True
    assert run([*ORACLE[:-1], submit(3.0006)])[1]["first_answer_correct"] is False


def test_first_divergence_at_a_skipped_step_points_to_the_expected_step():
    _, m, _ = run([step(1), step(3), step(4), submit()])
    assert m["first_divergence"] == {"call_index": 1, "step": 2, "label": "skipped_step"}
    assert m["longest_correct_prefix"] == 1


def test_first_divergence_at_a_labelled_call_names_its_label():
    _, m, _ = run([step(1), step(2, S3=3), step(3), step(4), submit()])
    assert m["first_divergence"] == {"call_index": 1, "step": 2, "label": "wrong_argument"}


def test_first_divergence_past_the_end_when_the_answer_is_missing():
    _, m, _ = run(ORACLE[:-1])
    assert m["first_divergence"] == {"call_index": 4, "step": None, "label": "missing_answer"}
    assert m["longest_correct_prefix"] == 4


def test_label_json_always_has_kind_call_index_and_step():
    labels, _, _ = run([step(1), step(2), submit(15)])
    for lab in labels:
        d = lab.to_json()
        assert {"kind", "call_index", "step"} <= d.keys()
        assert Label.from_json(d) == lab
