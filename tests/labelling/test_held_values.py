"""The cause search covers every value each variable has held (the agent's earlier outputs
included); the right value cut is never another variable's; and the edges of the core's rules
that nothing else pins down: several answers, a dependency that never ran, two operands
explained at different distances, and values that round down."""

from __future__ import annotations

from typing import Any

from helpers import kinds, run, step, submit, tiny_scenario

from agentproc.arith import Op
from agentproc.labelling.core import LabelCore
from agentproc.labelling.tools import _shortener
from agentproc.procedures import Cell, Procedure, StepDef
from agentproc.workflow import build_workflow, scenario_of

# tiny scenario (tests/helpers.py): S1=2, S2=3; S3=5; S4=15; S5=12 (dead); S6=3.


def wrong(labels: list[Any]) -> list[tuple[Any, ...]]:
    return [
        (lab.call_index, lab.argument, lab.cause, lab.confused_with, lab.truncated)
        for lab in labels
        if lab.kind.value == "wrong_argument"
    ]


def test_an_earlier_result_of_the_steps_own_output_fed_back_is_stale_output():
    # Step 2 gives S4 = 16.5 (S3 off), is redone right (S4 = 15), then run again with its
    # own earlier result 16.5 as S3: not its latest S4, but a value S4 has held.
    calls = [step(1), step(2, S3=5.5), step(2), step(2, S3=16.5)]
    labels, _, _ = run(calls)
    assert wrong(labels)[-1] == (3, "S3", "stale_output", "S4", None)


def test_an_earlier_own_value_of_the_variable_itself_is_propagated():
    # S4 was 16.5, then redone right; 16.5 passed later as S4 is the agent's own mistake.
    calls = [step(1), step(2, S3=5.5), step(2), step(3, S4=16.5)]
    labels, _, _ = run(calls)
    assert wrong(labels)[-1] == (3, "S4", "propagated", None, None)


def lookalike_scenario() -> Any:
    """S1 = 4.453, S2 = 4.457; S3 = S1 + S2 = 8.910; S4 = S3 - S2 = 4.453."""
    steps = (StepDef(1, Op.ADD, (1, 2), 8910), StepDef(2, Op.SUB, (3, 2), 4453))
    return scenario_of(Procedure("look", Cell(steps=2, lookback=2), 0, 0, steps, (4453, 4457)))


def test_the_right_value_cut_is_a_slip_even_when_another_variable_cuts_the_same():
    # S2 = 4.457 written 4.45: S1 = 4.453 also cuts to 4.45, but the right value explains it.
    labels, _, _ = run([("step_1", {"S1": 4.453, "S2": 4.45})], lookalike_scenario())
    assert wrong(labels) == [(0, "S2", "other", None, True)]


def test_a_value_that_rounds_down_is_never_read_as_a_rounding_of_the_next_value_up():
    matches, _, _ = _shortener(4.0, 1000)  # type: ignore[misc]
    assert matches(3950) and matches(4049)  # 3.950 rounds (half away) and 4.049 cuts to 4.0
    assert not matches(3949)  # 3.949 rounds to 3.9
    up, _, _ = _shortener(4.1, 1000)  # type: ignore[misc]
    assert not up(4049) and not up(4050 - 1)  # round down to 4.0, not up to 4.1
    assert up(4050)  # 4.050 rounds half away from zero to 4.1
    neg, _, _ = _shortener(-4.1, 1000)  # type: ignore[misc]
    assert not neg(-4049) and neg(-4050)


def test_self_correction_with_three_answers_compares_each_with_the_one_before():
    base = [step(1), step(2), step(3), step(4)]
    labels, metrics, _ = run([*base, submit(3), submit(4), submit(3)])
    revised = [(lab.call_index, lab.self_correction) for lab in labels]
    assert revised == [(5, False), (6, True)]
    assert metrics["final_answer"] == 3 and metrics["final_answer_correct"] is True
    labels, metrics, _ = run([*base, submit(4), submit(5), submit(3)])
    assert [lab.self_correction for lab in labels if lab.kind.value == "answer_revised"] == [
        False,
        True,
    ]
    assert metrics["answers"] == 3 and metrics["first_answer_correct"] is False
    _, metrics, _ = run([*base, submit(3), submit(3.5), submit(4)])
    assert metrics["final_answer"] == 4 and metrics["final_answer_correct"] is False


def test_reordered_step_whose_dependency_never_ran_breaks_it():
    # Step 4 reads S4 (step 2, never run) and S3 (step 1, ran before it).
    labels, _, _ = run([step(1), step(4), step(3), submit()])
    reordered = [lab for lab in labels if lab.kind.value == "reordered"]
    assert kinds(reordered) == [("reordered", 1, 4)]
    assert reordered[0].breaks_dependency is True


def test_the_nearest_of_two_operands_explanations_wins_whatever_the_order():
    core = LabelCore(build_workflow(tiny_scenario()))
    # S4 given 3 (S2, two away; S6 too, but later) and S3 given 15 (S4, one away).
    as_s2 = (4, (3000).__eq__)
    as_s4 = (3, (15000).__eq__)
    assert core.confusion([as_s2, as_s4]) == 4
    assert core.confusion([as_s4, as_s2]) == 4
    assert core.confusion([as_s2]) == 2  # at equal distance (S2, S6) the earlier wins
