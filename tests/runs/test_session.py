"""The episode session: calls executed, labelled and logged; the budget; text mode."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from helpers import ORACLE, step, submit, tiny_scenario

from agentproc.labelling import label_calls, run_text_episode
from agentproc.procedures import Cell, generate_procedure
from agentproc.runs import (
    BudgetExhausted,
    EpisodeSession,
    default_budget,
    episode_seed,
    harness_error,
    text_of,
)
from agentproc.workflow import build_workflow, opening_messages, scenario_of, text_messages
from agentproc.workflow.variant import Variant

TEXT_REPLY = "S3 = 5.000\nS4 = 16.000\nS5 = 12.000\nS6 = 3.000\nAnswer: 3"


def session(**options) -> EpisodeSession:
    return EpisodeSession(tiny_scenario(), "mine", **options)


# -- call ----------------------------------------------------------------------


def test_call_executes_on_the_mock_tools():
    s = session()
    rec = s.call("step_1", '{"S1": 2, "S2": 3}')
    assert rec.value == 5000 and rec.result == "S3 = 5.000"
    assert s.calls == [rec]


def test_call_logs_an_assistant_tool_call_and_its_tool_result_with_the_call_id():
    s = session()
    before = len(s.messages)
    s.call("step_1", '{"S1": 2, "S2": 3}', call_id="call_abc")
    assert s.messages[before:] == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_abc",
                    "type": "function",
                    "function": {"name": "step_1", "arguments": '{"S1": 2, "S2": 3}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_abc", "content": "S3 = 5.000"},
    ]


def test_call_without_an_id_logs_one_numbered_by_the_call():
    s = session()
    s.call(*step(1))
    s.call(*step(2))
    assert s.messages[-2]["tool_calls"][0]["id"] == "call_1"
    assert s.messages[-1]["tool_call_id"] == "call_1"


def test_call_keeps_the_raw_argument_text():
    s = session()
    s.call("step_1", '{"S1":2,  "S2":3}')
    assert s.messages[-2]["tool_calls"][0]["function"]["arguments"] == '{"S1":2,  "S2":3}'


def test_call_labels_as_it_goes():
    s = session()
    s.call(*step(1, S1=4))
    assert [lab.kind.value for lab in s.monitor.labels] == ["wrong_argument"]


def test_a_session_opens_with_the_tool_mode_messages():
    assert session().messages == opening_messages(tiny_scenario())


def test_a_variant_session_opens_with_its_system_message_and_presented_prompt():
    template = "Do {procedure} now."
    s = session(variant=Variant(prompt={"user": template, "system": "Be exact."}))
    assert s.messages == [
        {"role": "system", "content": "Be exact."},
        {"role": "user", "content": s.presented.scenario.prompt},
    ]
    assert s.messages[1]["content"].startswith("Do 1. S3 = ")


def test_answered_once_an_answer_is_accepted():
    s = session()
    assert not s.answered
    s.call(*submit())
    assert s.answered


# -- budget --------------------------------------------------------------------


def test_default_budget_is_twice_a_faithful_run_plus_five():
    wf = build_workflow(tiny_scenario())
    assert default_budget(wf) == 2 * (4 + 1) + 5 == 15


@pytest.mark.parametrize("steps", [1, 7, 30])
def test_default_budget_grows_with_the_steps(steps: int):
    wf = build_workflow(scenario_of(generate_procedure(Cell(steps=steps), 0, 0)))
    assert default_budget(wf) == 2 * (steps + 1) + 5


def test_a_session_uses_the_default_budget_unless_given_one():
    assert session().budget == 15
    assert session(budget=3).budget == 3


def test_exhausted_after_budget_calls():
    s = session(budget=2)
    s.call(*step(1))
    assert not s.exhausted
    s.call(*step(2))
    assert s.exhausted


def test_a_call_past_the_budget_raises_and_executes_nothing():
    s = session(budget=2)
    s.call(*step(1))
    s.call(*step(2))
    messages = len(s.messages)
    with pytest.raises(BudgetExhausted, match="budget of 2"):
        s.call(*step(3))
    assert len(s.calls) == 2 and len(s.messages) == messages


def test_over_budget_is_set_only_by_a_refused_call():
    s = session(budget=1)
    s.call(*step(1))
    assert s.exhausted and not s.over_budget
    with pytest.raises(BudgetExhausted):
        s.call(*step(2))
    assert s.over_budget


def test_the_stop_reason_is_no_tool_call_until_an_answer_is_accepted():
    s = session()
    s.call(*step(1))
    assert s.stop_reason == "no_tool_call"
    s.call(*submit())
    assert s.stop_reason == "answer"


def test_a_call_refused_for_the_budget_makes_the_stop_reason_budget_even_after_an_answer():
    s = session(budget=1)
    s.call(*submit())
    assert s.exhausted and s.stop_reason == "answer"
    with pytest.raises(BudgetExhausted):
        s.call(*step(1))
    assert s.stop_reason == "budget"


def test_a_zero_budget_refuses_the_first_call():
    s = session(budget=0)
    with pytest.raises(BudgetExhausted):
        s.call(*step(1))
    assert s.calls == []


# -- finish --------------------------------------------------------------------


@pytest.mark.parametrize(
    "calls",
    [
        ORACLE,
        [step(1), step(2, S3=3), ("step_9", {}), step(4, S4=9), submit(1.8)],
        [step(2), step(1), step(1), submit(2)],
        [],
    ],
)
def test_finish_labels_match_label_calls_on_the_same_calls(calls):
    s = session()
    for name, args in calls:
        s.call(name, args)
    ep = s.finish("answer")
    assert (ep.labels, ep.metrics) == label_calls(build_workflow(tiny_scenario()), ep.calls)


def test_finish_gives_the_episode_of_the_session():
    s = session(guard="enforce")
    for name, args in ORACLE:
        s.call(name, args)
    ep = s.finish("answer", usage={"input_tokens": 1})
    assert ep.agent == "mine" and ep.mode == "tools" and ep.guard == "enforce"
    assert ep.stop_reason == "answer" and ep.usage == {"input_tokens": 1}
    assert ep.calls == s.calls and ep.messages is s.messages
    assert ep.metrics["verdict"] == "faithful" and ep.output is None


def test_finish_after_the_budget_keeps_the_executed_calls():
    s = session(budget=2)
    s.call(*step(1))
    s.call(*step(2))
    with pytest.raises(BudgetExhausted):
        s.call(*step(3))
    ep = s.finish("budget")
    assert ep.stop_reason == "budget" and len(ep.calls) == 2
    assert ep.metrics["verdict"] == "no_answer"


def test_say_logs_an_assistant_text_message():
    s = session()
    s.say([{"type": "text", "text": "All "}, {"type": "text", "text": "done."}])
    assert s.messages[-1] == {"role": "assistant", "content": "All done."}


def test_fail_logs_the_error_redacted(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("FOO_API_KEY", "foo-secret-0123456789")
    s = session()
    s.fail(harness_error(RuntimeError("bad key foo-secret-0123456789")))
    assert s.messages[-1] == {
        "role": "assistant",
        "content": None,
        "error": "RuntimeError: bad key [REDACTED]",
    }


# -- text mode -----------------------------------------------------------------


def test_a_text_session_opens_with_the_text_mode_messages():
    assert session(mode="text").messages == text_messages(tiny_scenario())


def test_text_mode_finish_gives_a_text_episode_without_calls():
    s = session(mode="text")
    s.read_text(TEXT_REPLY)
    ep = s.finish("answer")
    assert ep.mode == "text" and ep.calls == [] and ep.output == TEXT_REPLY


def test_text_mode_labels_and_metrics_equal_run_text_episode():
    s = session(mode="text")
    s.read_text(TEXT_REPLY)
    ep = s.finish("answer")
    labels, metrics, _ = run_text_episode(tiny_scenario(), TEXT_REPLY)
    assert ep.labels == labels and ep.metrics == metrics
    assert [lab.kind.value for lab in ep.labels] == ["wrong_argument"]


def test_read_text_logs_the_reply_as_an_assistant_message():
    s = session(mode="text")
    s.read_text(TEXT_REPLY)
    assert s.messages[-1] == {"role": "assistant", "content": TEXT_REPLY}


def test_text_mode_finish_without_a_reply_labels_an_empty_one():
    ep = session(mode="text").finish("error")
    labels, metrics, _ = run_text_episode(tiny_scenario(), "")
    assert ep.output == ""
    assert ep.labels == labels and ep.metrics == metrics
    assert ep.metrics["verdict"] == "no_answer"


# -- text_of -------------------------------------------------------------------


def test_text_of_a_string_is_itself():
    assert text_of("S3 = 5") == "S3 = 5"


def test_text_of_none_is_empty():
    assert text_of(None) == ""


def test_text_of_content_parts_joins_their_text():
    parts = [{"type": "text", "text": "S3 = "}, {"type": "image_url"}, "5", {"text": "!"}]
    assert text_of(parts) == "S3 = 5!"


def test_text_of_another_value_is_its_string():
    assert text_of(12.5) == "12.5"


# -- seeds ---------------------------------------------------------------------


def test_episode_seed_is_the_same_for_the_same_run_scenario_and_agent():
    a = episode_seed(3, "s-0001", "sim:decay")
    b = episode_seed(3, "s-0001", "sim:decay")
    assert [a.random() for _ in range(5)] == [b.random() for _ in range(5)]


@pytest.mark.parametrize(
    "other", [(4, "s-0001", "sim:decay"), (3, "s-0002", "sim:decay"), (3, "s-0001", "sim:oracle")]
)
def test_episode_seed_differs_when_any_part_differs(other: tuple[int, str, str]):
    assert episode_seed(3, "s-0001", "sim:decay").random() != episode_seed(*other).random()


def test_episode_seed_is_the_same_in_another_process_with_another_hash_seed():
    code = "from agentproc.runs import episode_seed; print(episode_seed(0, 'x', 'y').random())"
    outs = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        ).stdout.strip()
        for seed in ("1", "2")
    }
    assert outs == {repr(episode_seed(0, "x", "y").random())}
