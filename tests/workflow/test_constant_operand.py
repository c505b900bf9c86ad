"""A step whose right operand is a constant written in it (look-back 1's sub and div):
shown in the step, not an argument of its tool, read by every mode of the monitor."""

from __future__ import annotations

from typing import Any

from helpers import constant_scenario

from agentproc.labelling import LabelKind
from agentproc.labelling.text import run_text_episode
from agentproc.runs import EpisodeSession
from agentproc.workflow.variant import Variant

K = LabelKind
FAITHFUL = [
    ("step_1", {"S2": 3}),
    ("step_2", {"S3": 9}),
    ("step_3", {"S4": 5}),
    ("step_4", {"S5": 2}),
    ("submit_answer", {"answer": 4}),
]


def episode(calls: list[tuple[str, Any]], variant: Variant | None = None):
    session = EpisodeSession(constant_scenario(), "me", variant=variant)
    results = [session.call(name, args).result for name, args in calls]
    return session.finish("answer"), results


def test_the_constant_is_written_in_the_step_text_and_the_prompt():
    scenario = constant_scenario()
    assert [s.text for s in scenario.steps][1:3] == ["S4 = S3 - 4.000", "S5 = S4 / 2.500"]
    assert "2. S4 = S3 - 4.000" in scenario.prompt


def test_the_step_tool_takes_only_the_variable_operand():
    tool = next(t for t in constant_scenario().tools if t["function"]["name"] == "step_2")
    assert tool["function"]["parameters"]["required"] == ["S3"]
    assert "S3 - 4.000" in tool["function"]["description"]


def test_a_faithful_run_applies_the_constant_and_is_faithful():
    ep, results = episode(FAITHFUL)
    assert results[1:3] == ["S4 = 5.000", "S5 = 2.000"]
    assert ep.labels == [] and ep.metrics["verdict"] == "faithful"


def test_passing_the_constant_as_an_argument_is_invalid_arguments():
    ep, _ = episode([FAITHFUL[0], ("step_2", {"S3": 9, "c": 4}), *FAITHFUL[1:]])
    assert ep.labels[0].kind is K.INVALID_ARGUMENTS and ep.labels[0].step == 2


def test_a_wrong_variable_operand_beside_a_constant_is_a_wrong_argument_with_its_cause():
    ep, _ = episode([FAITHFUL[0], ("step_2", {"S3": 3}), *FAITHFUL[2:]])
    wrong = ep.labels[0]
    assert (wrong.kind, wrong.argument, wrong.cause, wrong.confused_with) == (
        K.WRONG_ARGUMENT,
        "S3",
        "lookback_confusion",
        "S2",
    )


CALCULATOR = Variant(name="calc", tools="calculator")


def test_the_calculator_aligns_a_call_with_the_constant_to_its_step():
    calls = [("mul", {"a": 3, "b": 3}), ("sub", {"a": 9, "b": 4}), ("div", {"a": 5, "b": 2.5})]
    ep, _ = episode(
        [*calls, ("add", {"a": 2, "b": 2}), ("submit_answer", {"answer": 4})], CALCULATOR
    )
    assert ep.labels == [] and ep.metrics["verdict"] == "faithful"


def test_the_calculator_labels_a_wrong_constant_naming_it_as_written():
    calls = [("mul", {"a": 3, "b": 3}), ("sub", {"a": 9, "b": 4.5}), ("div", {"a": 4.5, "b": 2.5})]
    ep, _ = episode(
        [*calls, ("add", {"a": 1.8, "b": 1.8}), ("submit_answer", {"answer": 3.6})], CALCULATOR
    )
    wrong = ep.labels[0]
    assert (wrong.kind, wrong.call_index, wrong.step, wrong.argument, wrong.cause) == (
        K.WRONG_ARGUMENT,
        1,
        2,
        "4.000",
        "other",
    )
    assert (wrong.expected, wrong.got) == (4.0, 4.5)


TEXT = "S3 = 9.000\nS4 = {s4}\nS5 = 2.000\nS6 = 4.000\nAnswer: 4.000\n"


def test_text_mode_reads_a_faithful_reply_with_constants():
    labels, metrics, _ = run_text_episode(constant_scenario(), TEXT.format(s4="5.000"))
    assert labels == [] and metrics["verdict"] == "faithful"


def test_text_mode_explains_a_wrong_value_by_the_variable_operand_only():
    # S2 - 4 = -1: the variable operand S3 confused with S2.
    labels, _, _ = run_text_episode(constant_scenario(), TEXT.format(s4="-1.000"))
    assert (labels[0].cause, labels[0].confused_with) == ("lookback_confusion", "S2")
    # S3 - S2 = 6: the constant is no variable, so no confusion of it explains the value.
    labels, _, _ = run_text_episode(constant_scenario(), TEXT.format(s4="6.000"))
    assert (labels[0].kind, labels[0].cause, labels[0].confused_with) == (
        K.WRONG_ARGUMENT,
        "other",
        None,
    )


def test_a_stored_run_at_look_back_one_replays_and_relabels_unchanged(tmp_path):
    from agentproc.agents.sim import run_sim_episode
    from agentproc.analysis import relabel_run, replay_record
    from agentproc.procedures import Cell, generate_procedure
    from agentproc.runs import RunWriter, episode_record, read_run, scenario_of_record
    from agentproc.workflow import scenario_of

    path = tmp_path / "run.jsonl"
    agents = ("sim:oracle", "sim:wrong_argument", "sim:decay", "sim:reordered")
    with RunWriter(path) as w:
        for i, agent in enumerate(agents):
            p = generate_procedure(Cell(steps=8, lookback=1, ops="sub+div"), 0, i)
            assert all(s.constant is not None for s in p.steps)
            w.write(episode_record(run_sim_episode(scenario_of(p), agent)))
    for n, rec in read_run(path):
        r = replay_record(rec, scenario_of_record(path, n, rec), str(path))
        assert r.compared and r.differences == [], rec["agent"]
    result = relabel_run(path)
    assert (result.episodes, result.changed_episodes) == (4, 0)
