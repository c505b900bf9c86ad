"""Under every variant, labels name variables as the agent was shown them: a label's
``argument`` and ``confused_with`` are the names in the prompt and the tool results, in the
live monitor, in replay and in relabel (:func:`~agentproc.labelling.shown_label`)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from helpers import tiny_scenario

from agentproc.analysis.stored.relabel import label_record
from agentproc.analysis.stored.replay import replay_calls
from agentproc.labelling import Label, LabelKind
from agentproc.procedures import Cell, generate_procedure
from agentproc.runs import EpisodeSession, episode_record
from agentproc.workflow import Scenario, scenario_of
from agentproc.workflow.present import Presented, present
from agentproc.workflow.variant import Variant

K = LabelKind
SHUFFLED = Variant(name="shuffled", order="shuffled")
# Seed 0, index 21 of this cell shuffles to a listed step 6 that reads S5 and S6 inside, shown
# as S5 and S7 (the name S6 stands for what was generated as S7). (Index 0 did until procedure
# format 4, which draws it again: one of its steps equalled an input up to sign.)
SHUFFLED_SCENARIO = scenario_of(generate_procedure(Cell(steps=6, lookback=3), 0, 21))


def _number(units: int, scale: int) -> Any:
    return units // scale if scale == 1 else units / scale


def _faithful(presented: Presented) -> list[tuple[str, dict[str, Any]]]:
    """The right calls, as the agent would make them under the variant."""
    scale = 1000 if presented.scenario.mode == "decimal" else 1
    out = []
    for s in presented.scenario.steps:
        args = {p: _number(s.expected_call.arguments[p] * scale, scale) for p in s.params}
        out.append(presented.outbound(s.name, args))
    return out


def _episode(scenario: Scenario, variant: Variant, calls: list[tuple[str, Any]]) -> Any:
    session = EpisodeSession(scenario, "me", variant=variant)
    for name, args in calls:
        session.call(name, args)
    return session.finish("answer")


def _wrong(labels: list[Label]) -> list[Label]:
    return [lab for lab in labels if lab.kind is K.WRONG_ARGUMENT]


def test_shuffled_order_labels_the_argument_by_the_name_in_the_call():
    presented = present(SHUFFLED_SCENARIO, SHUFFLED)
    step6 = presented.scenario.steps[5]
    assert step6.operands == ["S5", "S6"] and presented.shown("S6") == "S7"
    calls = _faithful(presented)
    name, args = calls[5]
    args = {**args, "S7": 1.5}  # a slip in the argument the agent knows as S7
    calls[5] = (name, args)
    ep = _episode(SHUFFLED_SCENARIO, SHUFFLED, calls)
    (lab,) = _wrong(ep.labels)
    assert (lab.step, lab.argument, lab.cause) == (6, "S7", "other")


def test_shuffled_order_names_the_confused_variable_as_shown():
    presented = present(SHUFFLED_SCENARIO, SHUFFLED)
    calls = _faithful(presented)
    wf_values = {s.output: s.value for s in presented.scenario.steps}
    name, args = calls[5]
    # Canonical S6 given the value of canonical S7 (shown as S6): a look-back confusion.
    assert presented.shown("S7") == "S6"
    calls[5] = (name, {**args, "S7": wf_values["S7"]})
    ep = _episode(SHUFFLED_SCENARIO, SHUFFLED, calls)
    (lab,) = _wrong(ep.labels)
    assert (lab.argument, lab.cause, lab.confused_with) == (
        "S7",
        "lookback_confusion",
        "S6",
    )


def test_replay_and_relabel_of_a_shuffled_episode_speak_the_shown_names():
    presented = present(SHUFFLED_SCENARIO, SHUFFLED)
    calls = _faithful(presented)
    name, args = calls[5]
    calls[5] = (name, {**args, "S7": 1.5})
    replayed = replay_calls(SHUFFLED_SCENARIO, calls, variant=SHUFFLED)
    assert [lab.argument for lab in _wrong(replayed.labels)] == ["S7"]
    ep = _episode(SHUFFLED_SCENARIO, SHUFFLED, calls)
    rec = json.loads(json.dumps(episode_record(ep)))  # as a reader gets it back
    labels, _ = label_record(rec)
    assert [lab.argument for lab in _wrong(labels)] == ["S7"]


RANDOM = Variant(name="random", names="random")


def test_renamed_variables_label_the_argument_and_confusion_by_their_random_names():
    scenario = tiny_scenario()
    presented = present(scenario, RANDOM)
    s1, s2 = presented.shown("S1"), presented.shown("S2")
    # step 2 reads S3 and S2; S2 given S1's value (2): a look-back confusion.
    calls = _faithful(presented)
    name, args = calls[1]
    calls[1] = (name, {**args, s2: 2})
    ep = _episode(scenario, RANDOM, calls)
    (lab, *_) = _wrong(ep.labels)
    assert (lab.argument, lab.confused_with) == (s2, s1)
    assert s1 != "S1"


def test_calculator_labels_name_the_variable_an_operand_stands_for_as_shown():
    variant = Variant(name="calc", tools="calculator", names="descriptive")
    scenario = tiny_scenario()
    presented = present(scenario, variant)
    # S3 = S1 + S2 computed as 2 + 4: the operand that stands for S2 is off.
    ep = _episode(scenario, variant, [("add", {"a": 2, "b": 4})])
    (lab,) = _wrong(ep.labels)
    assert lab.argument == presented.shown("S2") == "input_2"


@pytest.mark.parametrize(
    "variant",
    [SHUFFLED, RANDOM, Variant(name="calc", tools="calculator", names="random")],
    ids=["shuffled", "random-names", "calculator"],
)
def test_selfcheck_is_perfect_under_a_variant_that_renames(variant: Variant):
    from agentproc.agents.sim.selfcheck import run_selfcheck

    grid = {"steps": (3, 10), "lookback": (1, 3), "range": ((1.0, 10.0),), "mode": ("decimal",)}
    result = run_selfcheck(count=2, grid=grid, variant=variant)
    assert all(
        s.precision == 1.0 and s.recall == 1.0
        for s in (*result.scores.values(), *result.causes.values())
    ), result.mismatches
