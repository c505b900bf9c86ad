"""What a wrong argument's cause names: the value the agent saw, searched among every
variable; values cut to fewer decimals; and what counts as correct at half a unit."""

from __future__ import annotations

from typing import Any

from helpers import run, step, submit

from agentproc.arith import Op
from agentproc.procedures import Cell, Procedure, StepDef
from agentproc.workflow import Scenario, scenario_of


def decimal_scenario() -> Scenario:
    """S1 = 2.5, S2 = 1.25; S3 = S1 * S2 = 3.125; S4 = S3 + S2 = 4.375; S5 = S4 - S1 = 1.875."""
    steps = (
        StepDef(1, Op.MUL, (1, 2), 3125),
        StepDef(2, Op.ADD, (3, 2), 4375),
        StepDef(3, Op.SUB, (4, 1), 1875),
    )
    return scenario_of(Procedure("dec", Cell(steps=3, lookback=2), 0, 0, steps, (2500, 1250)))


def negative_scenario() -> Scenario:
    """S1 = 0.5, S2 = 1.131; S3 = S1 - S2 = -0.631; S4 = S3 * S1 = -0.316 (rounded)."""
    steps = (StepDef(1, Op.SUB, (1, 2), -631), StepDef(2, Op.MUL, (3, 1), -316))
    return scenario_of(Procedure("neg", Cell(steps=2, lookback=2), 0, 0, steps, (500, 1131)))


def wrong(labels: list[Any]) -> list[tuple[Any, ...]]:
    return [
        (lab.call_index, lab.argument, lab.cause, lab.confused_with, lab.truncated)
        for lab in labels
        if lab.kind.value == "wrong_argument"
    ]


# tiny scenario (tests/helpers.py): S1=2, S2=3; S3=5; S4=15; S5=12; S6=3.


def test_the_steps_own_output_value_fed_back_is_a_stale_output():
    labels, _, _ = run([step(1), step(2), step(3, S2=12), step(4), submit()])
    assert wrong(labels) == [(2, "S2", "stale_output", "S5", None)]


def test_a_later_variables_value_is_a_stale_output():
    labels, _, _ = run([step(1, S1=15), step(2), step(3), step(4), submit()])
    assert wrong(labels)[0] == (0, "S1", "stale_output", "S4", None)


def test_an_earlier_variables_value_is_still_a_lookback_confusion():
    labels, _, _ = run([step(1), step(2), step(3, S4=5), step(4), submit()])
    assert wrong(labels)[0] == (2, "S4", "lookback_confusion", "S3", None)


def test_a_previous_result_of_the_same_step_fed_back_names_that_output():
    # step 2 again, its S3 argument replaced by S4 = 15, the value step 2 itself returned
    labels, _, _ = run([step(1), step(2), step(2, S3=15), step(3), step(4), submit()])
    assert wrong(labels) == [(2, "S3", "stale_output", "S4", None)]


def test_the_agents_own_wrong_value_carried_forward_is_propagated():
    labels, _, _ = run([step(1, S1=4), step(2, S3=7), step(3), step(4), submit()])
    assert wrong(labels)[:2] == [
        (0, "S1", "other", None, None),
        (1, "S3", "propagated", None, None),
    ]


def test_a_value_cut_to_fewer_decimals_is_read_as_the_value_it_cuts():
    s = decimal_scenario()
    calls = [("step_1", {"S1": 2.5, "S2": 1.25}), ("step_2", {"S3": 4.3, "S2": 1.25})]
    labels, _, _ = run(calls, s)
    assert wrong(labels) == [(1, "S3", "stale_output", "S4", True)]


def test_a_cut_copy_of_the_agents_own_wrong_value_is_propagated_and_truncated():
    s = decimal_scenario()
    calls = [("step_1", {"S1": 2.6, "S2": 1.25}), ("step_2", {"S3": 3.2, "S2": 1.25})]
    labels, _, _ = run(calls, s)
    assert wrong(labels)[1] == (1, "S3", "propagated", None, True)


def test_a_cut_copy_of_the_right_value_is_an_other_slip():
    s = decimal_scenario()
    calls = [("step_1", {"S1": 2.5, "S2": 1.25}), ("step_2", {"S3": 3.1, "S2": 1.25})]
    labels, _, _ = run(calls, s)
    assert wrong(labels) == [(1, "S3", "other", None, True)]


def test_a_value_written_with_every_decimal_is_never_read_as_cut():
    s = decimal_scenario()
    calls = [("step_1", {"S1": 2.5, "S2": 1.25}), ("step_2", {"S3": 4.371, "S2": 1.25})]
    labels, _, _ = run(calls, s)
    assert wrong(labels) == [(1, "S3", "other", None, None)]


def test_half_a_unit_off_away_from_the_value_is_wrong_and_the_tool_agrees():
    s = negative_scenario()
    calls = [("step_1", {"S1": 0.5, "S2": 1.131}), ("step_2", {"S3": -0.6315, "S1": 0.5})]
    labels, _, records = run(calls, s)
    assert [(lab.kind.value, lab.got) for lab in labels if lab.call_index == 1] == [
        ("wrong_argument", -0.6315)
    ]
    assert records[1].result == "S4 = -0.316"  # -0.632 * 0.5, as the tool read -0.6315


def test_half_a_unit_off_towards_zero_reads_as_the_value_and_is_correct():
    s = negative_scenario()
    calls = [("step_1", {"S1": 0.5, "S2": 1.131}), ("step_2", {"S3": -0.6305, "S1": 0.5})]
    labels, _, records = run(calls, s)
    assert [lab for lab in labels if lab.call_index == 1] == []
    assert records[1].value == -316


def test_skipping_a_step_and_inventing_its_output_diverges_at_the_skip():
    _, metrics, _ = run([step(1), step(3, S4=99), step(4), submit()])
    assert metrics["first_divergence"] == {"call_index": 1, "step": 2, "label": "skipped_step"}


def test_running_a_step_early_diverges_as_reordered_even_with_a_wrong_argument():
    _, metrics, _ = run([step(1), step(3, S4=99), step(2), step(4), submit()])
    assert metrics["first_divergence"] == {"call_index": 1, "step": 2, "label": "reordered"}


def test_a_wrong_argument_on_the_expected_step_is_the_divergence():
    _, metrics, _ = run([step(1), step(2, S3=6), step(3), step(4), submit()])
    assert metrics["first_divergence"] == {"call_index": 1, "step": 2, "label": "wrong_argument"}
