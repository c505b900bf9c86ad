"""Calculator mode: each generic call aligned to the step it computes, then labelled."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import constant_scenario, tiny_scenario

from agentproc.agents.sim import INJECTORS
from agentproc.agents.sim.selfcheck import run_selfcheck
from agentproc.errors import ConfigError
from agentproc.labelling import LabelKind
from agentproc.labelling.calculator import CalculatorMonitor
from agentproc.runs import EpisodeSession
from agentproc.workflow.variant import Variant, load_variant

K = LabelKind
CALCULATOR = Variant(name="calc", tools="calculator")
# tiny: S1 = 2, S2 = 3; S3 = S1 + S2 = 5; S4 = S3 * S2 = 15; S5 = S4 - S2 = 12; S6 = S4 / S3 = 3
FAITHFUL = [
    ("add", {"a": 2, "b": 3}),
    ("mul", {"a": 5, "b": 3}),
    ("sub", {"a": 15, "b": 3}),
    ("div", {"a": 15, "b": 5}),
    ("submit_answer", {"answer": 3}),
]


def episode(calls: list[tuple[str, Any]]):
    session = EpisodeSession(tiny_scenario(), "me", variant=CALCULATOR)
    assert isinstance(session.monitor, CalculatorMonitor)
    for name, args in calls:
        session.call(name, args)
    return session.finish("answer")


def kinds(ep) -> list[tuple[str, int | None, int | None]]:
    return [(lab.kind.value, lab.call_index, lab.step) for lab in ep.labels]


def test_the_right_operations_on_the_right_values_are_faithful():
    ep = episode(FAITHFUL)
    assert ep.labels == [] and ep.metrics["verdict"] == "faithful"
    assert ep.metrics["executed_steps"] == 4 and ep.metrics["longest_correct_prefix"] == 4


def test_add_and_mul_may_take_their_operands_in_either_order():
    calls = [("add", {"a": 3, "b": 2}), ("mul", {"a": 3, "b": 5}), *FAITHFUL[2:]]
    assert episode(calls).labels == []
    swapped_sub = [FAITHFUL[0], FAITHFUL[1], ("sub", {"a": 3, "b": 15}), *FAITHFUL[3:]]
    ep = episode(swapped_sub)  # 3 - 15 is not S4 - S2: both operands wrong at step 3
    assert ("wrong_argument", 2, 3) in kinds(ep)


def test_a_wrong_operand_is_a_wrong_argument_with_its_cause_and_carries_forward():
    calls = [("add", {"a": 2, "b": 4}), ("mul", {"a": 6, "b": 3}), *FAITHFUL[2:]]
    ep = episode(calls)
    wrong = [lab for lab in ep.labels if lab.kind is K.WRONG_ARGUMENT]
    assert (wrong[0].call_index, wrong[0].step, wrong[0].argument, wrong[0].cause) == (
        0,
        1,
        "S2",
        "other",
    )
    assert (wrong[1].call_index, wrong[1].step, wrong[1].argument, wrong[1].cause) == (
        1,
        2,
        "S3",
        "propagated",
    )


def test_a_confused_operand_is_read_as_the_variable_it_belongs_to():
    calls = [FAITHFUL[0], ("mul", {"a": 5, "b": 2}), *FAITHFUL[2:]]  # S1 for S2
    ep = episode(calls)
    lab = next(lab for lab in ep.labels if lab.kind is K.WRONG_ARGUMENT)
    assert (lab.step, lab.argument, lab.cause, lab.confused_with) == (
        2,
        "S2",
        "lookback_confusion",
        "S1",
    )


def test_computing_a_step_again_is_a_repeat_and_out_of_order_is_reordered():
    repeat = episode([FAITHFUL[0], FAITHFUL[0], *FAITHFUL[1:]])
    assert kinds(repeat) == [("repeated_step", 1, 1)]
    swap = episode([FAITHFUL[0], FAITHFUL[2 - 1], FAITHFUL[3], FAITHFUL[2], FAITHFUL[4]])
    assert ("reordered", 2, 4) in kinds(swap)


def test_a_computation_the_procedure_does_not_have_is_a_hallucinated_call():
    ep = episode([*FAITHFUL[:4], ("add", {"a": 100, "b": 200}), FAITHFUL[4]])
    assert kinds(ep) == [("hallucinated_call", 4, None)]


def test_the_right_operation_at_the_right_place_with_no_right_value_is_that_step():
    ep = episode([("add", {"a": 7, "b": 8}), *FAITHFUL[1:]])
    assert ("wrong_argument", 0, 1) in kinds(ep) and ("hallucinated_call", 0, None) not in kinds(ep)


def test_invalid_arguments_are_labelled_on_the_step_expected_next():
    ep = episode([FAITHFUL[0], ("mul", {"x": 5}), *FAITHFUL[1:]])
    assert kinds(ep) == [("invalid_arguments", 1, 2)]


def test_skipping_a_step_and_answering_early_are_found_as_with_step_tools():
    ep = episode([FAITHFUL[0], FAITHFUL[1], FAITHFUL[3], FAITHFUL[4]])
    assert kinds(ep) == [("skipped_step", None, 3)]
    early = episode([FAITHFUL[0], ("submit_answer", {"answer": 5})])
    assert ("premature_finish", 1, None) in kinds(early)


def test_calculator_selfcheck_has_precision_and_recall_one_for_every_label():
    grid = {
        "steps": (1, 3, 10, 25),
        "lookback": (1, 4),
        "range": ((0.0, 1.0), (1.0, 10.0), (10.0, 100.0)),
        "mode": ("decimal", "integer"),
    }
    result = run_selfcheck(count=1, grid=grid, variant=load_variant("calculator"))
    assert result.episodes == 48 * len(INJECTORS) and result.mismatches == []
    assert result.perfect  # every label kind occurred, every kind and cause at 1.0


def test_selfcheck_refuses_a_variant_whose_guard_refuses_calls():
    with pytest.raises(ConfigError, match="guard 'feedback' refuses calls"):
        run_selfcheck(count=1, variant=load_variant("feedback"))


# -- a constant operand (look-back 1): S3 = S2 * S2 = 9; S4 = S3 - 4; S5 = S4 / 2.5; S6 = S5 + S5

CONSTANT_FAITHFUL = [
    ("mul", {"a": 3, "b": 3}),
    ("sub", {"a": 9, "b": 4}),
    ("div", {"a": 5, "b": 2.5}),
    ("add", {"a": 2, "b": 2}),
    ("submit_answer", {"answer": 4}),
]


def constant_episode(calls: list[tuple[str, Any]]):
    session = EpisodeSession(constant_scenario(), "me", variant=CALCULATOR)
    for name, args in calls:
        session.call(name, args)
    return session.finish("answer")


def wrong(ep) -> list[tuple[Any, ...]]:
    return [
        (
            lab.call_index,
            lab.step,
            lab.argument,
            lab.expected,
            lab.got,
            lab.cause,
            lab.confused_with,
        )
        for lab in ep.labels
        if lab.kind is K.WRONG_ARGUMENT
    ]


def test_constant_steps_read_right_are_faithful():
    assert constant_episode(CONSTANT_FAITHFUL).labels == []


def test_a_mistyped_constant_is_a_wrong_argument_named_by_the_constant_as_written():
    calls = [*CONSTANT_FAITHFUL]
    calls[2] = ("div", {"a": 5, "b": 2.4})
    ep = constant_episode(calls)
    assert wrong(ep)[0] == (2, 3, "2.500", 2.5, 2.4, "other", None)


def test_a_swapped_constant_is_explained_by_the_variable_operand_it_equals():
    """``sub(4, 9)`` for ``S4 = S3 - 4``: the constant's place holds S3's value exactly."""
    calls = [*CONSTANT_FAITHFUL]
    calls[1] = ("sub", {"a": 4, "b": 9})
    ep = constant_episode(calls)
    assert wrong(ep) == [
        (1, 2, "4.000", 4.0, 9, "lookback_confusion", "S3"),  # the constant's place: S3
        (1, 2, "S3", 9.0, 4, "stale_output", "S6"),  # 4 is also S6's value (the answer)
    ]
