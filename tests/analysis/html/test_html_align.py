"""The drill-down's call table: expected and actual calls lined up by step."""

from __future__ import annotations

from agentproc.analysis.html.align import ANSWER, Row, align

STEPS = ["step_1()", "step_2()", "step_3()"]


def table(slots: list[int | None]) -> list[tuple[str, str, int | None]]:
    return [(r.step, r.expected, r.call) for r in align(STEPS, "submit()", slots)]


def test_calls_in_order_pair_each_step_with_its_call():
    assert table([1, 2, 3, 4]) == [
        ("1", "step_1()", 0),
        ("2", "step_2()", 1),
        ("3", "step_3()", 2),
        (ANSWER, "submit()", 3),
    ]


def test_a_skipped_step_keeps_its_row_with_no_call_and_later_steps_stay_paired():
    assert table([1, 3, 4]) == [
        ("1", "step_1()", 0),
        ("2", "step_2()", None),
        ("3", "step_3()", 1),
        (ANSWER, "submit()", 2),
    ]


def test_a_reordered_call_stands_on_its_own_steps_row():
    assert table([2, 1, 3, 4]) == [
        ("1", "step_1()", 1),
        ("2", "step_2()", 0),
        ("3", "step_3()", 2),
        (ANSWER, "submit()", 3),
    ]


def test_an_extra_call_gets_a_row_of_its_own_after_the_call_made_before_it():
    assert table([1, 2, None, None, 3, 4]) == [
        ("1", "step_1()", 0),
        ("2", "step_2()", 1),
        ("", "", 2),
        ("", "", 3),
        ("3", "step_3()", 4),
        (ANSWER, "submit()", 5),
    ]


def test_an_extra_first_call_comes_first_and_a_step_out_of_range_is_extra():
    assert table([None, 1, 9, 2, 3, 4])[:3] == [("", "", 0), ("1", "step_1()", 1), ("", "", 2)]


def test_a_repeat_and_a_revised_answer_go_under_their_steps_first_call_with_no_expected_call():
    assert table([1, 1, 2, 3, 4, 4]) == [
        ("1", "step_1()", 0),
        ("1", "", 1),
        ("2", "step_2()", 2),
        ("3", "step_3()", 3),
        (ANSWER, "submit()", 4),
        (ANSWER, "", 5),
    ]


def test_no_call_at_all_leaves_every_step_and_the_answer_unrun():
    assert align(STEPS, "submit()", []) == [
        Row("1", "step_1()", None),
        Row("2", "step_2()", None),
        Row("3", "step_3()", None),
        Row(ANSWER, "submit()", None),
    ]
