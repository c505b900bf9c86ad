"""The LangGraph harness: real HTTP to a scripted loopback server, and a scripted model."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage

from agentproc import Cell, generate_procedure, scenario_of
from agentproc.agents.harness import arun_model_episode
from agentproc.agents.providers import make_chat_model
from agentproc.agents.retry import RetryPolicy
from agentproc.cli import main
from tests.fakes.openai_server import ScriptedServer

FAST = RetryPolicy(attempts=4, base_delay=0.01, timeout=5.0)


@pytest.fixture(scope="module")
def scenario():
    return scenario_of(generate_procedure(Cell(steps=4, lookback=2), 0, 0))


def episode(scenario, srv: ScriptedServer, **kw: Any):
    model = make_chat_model("openai:fake", base_url=srv.base_url)
    return asyncio.run(
        arun_model_episode(scenario, model, "openai:fake", retry=kw.pop("retry", FAST), **kw)
    )


def call(name: str, arguments: Any) -> dict[str, Any]:
    return {"tool_call": {"name": name, "arguments": arguments}}


def test_oracle_server_episode_is_faithful_and_records_usage(scenario):
    with ScriptedServer() as srv:
        ep = episode(scenario, srv)
    assert ep.stop_reason == "answer" and ep.metrics["verdict"] == "faithful"
    assert [c.name for c in ep.calls] == [f"step_{k}" for k in range(1, 5)] + ["submit_answer"]
    assert ep.usage["model_calls"] == 5 and ep.usage["output_tokens"] > 0
    assert all(c["latency_s"] > 0 and c["attempts"] == 1 for c in ep.model_calls)


def test_rate_limits_and_server_errors_are_retried(scenario):
    with ScriptedServer(
        [{"status": 429}, {"status": 500}, {"status": 503}, {"content": "no tools today"}]
    ) as srv:
        ep = episode(scenario, srv)
    assert ep.stop_reason == "no_tool_call" and ep.model_calls[0]["attempts"] == 4
    assert len(ep.errors) == 3 and "429" in ep.errors[0]


def test_a_slow_reply_times_out_and_is_retried(scenario):
    with ScriptedServer([{"delay": 3.0, "content": "late"}, {"content": "on time"}]) as srv:
        ep = episode(scenario, srv, retry=RetryPolicy(attempts=2, base_delay=0.01, timeout=0.5))
    assert ep.messages[-1] == {"role": "assistant", "content": "on time"}
    assert "TimeoutError: the model call did not answer within 0.5 s (--timeout)" in ep.errors[0]


def test_giving_up_after_every_retry_ends_the_episode_with_error_not_a_crash(scenario):
    with ScriptedServer([{"status": 500}] * 3) as srv:
        ep = episode(scenario, srv, retry=RetryPolicy(attempts=3, base_delay=0.01))
    assert ep.stop_reason == "error" and ep.metrics["verdict"] == "no_answer"
    assert "Error code: 500" in ep.model_calls[0]["error"]


def test_malformed_and_hallucinated_calls_are_recorded_with_raw_arguments(scenario):
    script = [
        call("step_1", '{"S1": oops'),
        call("step_1", "[1, 2]"),
        call("step_99", "{}"),
        {"content": "done"},
    ]
    with ScriptedServer(script) as srv:
        ep = episode(scenario, srv)
    assert [(c.name, c.arguments, c.refused) for c in ep.calls] == [
        ("step_1", '{"S1": oops', "invalid_arguments"),
        ("step_1", "[1, 2]", "invalid_arguments"),
        ("step_99", "{}", "unknown_tool"),
    ]
    kinds = [lab.kind.value for lab in ep.labels if lab.call_index is not None]
    assert kinds == ["invalid_arguments", "invalid_arguments", "hallucinated_call"]
    assert ep.messages[2]["tool_calls"][0]["function"]["arguments"] == '{"S1": oops'


def test_budget_ends_a_looping_episode(scenario):
    first = scenario.steps[0].expected_call
    with ScriptedServer([call(first.name, first.arguments)] * 10) as srv:
        ep = episode(scenario, srv, budget=3)
    assert ep.stop_reason == "budget" and len(ep.calls) == 3
    assert [lab.kind.value for lab in ep.labels].count("repeated_step") == 2


def test_continue_after_answer_records_a_revised_answer(scenario):
    answer = {"answer": scenario.answer}
    script = [call(s.expected_call.name, s.expected_call.arguments) for s in scenario.steps]
    script += [
        call("submit_answer", {"answer": scenario.answer + 1}),
        call("submit_answer", answer),
        {"content": "ok"},
    ]
    with ScriptedServer(script) as srv:
        ep = episode(scenario, srv, continue_after_answer=True)
    revised = [lab for lab in ep.labels if lab.kind.value == "answer_revised"]
    assert len(revised) == 1 and revised[0].self_correction is True
    assert ep.metrics["verdict"] == "wrong" and ep.metrics["final_answer_correct"] is True


class ScriptedChatModel(GenericFakeChatModel):
    """LangChain's fake chat model, able to take tools (GenericFakeChatModel refuses them)."""

    def bind_tools(self, tools: Any, **kw: Any) -> ScriptedChatModel:
        return self


def test_any_langchain_chat_model_works(scenario):
    replies = [
        AIMessage(
            content="",
            tool_calls=[
                {
                    "name": s.expected_call.name,
                    "args": s.expected_call.arguments,
                    "id": f"c{s.step}",
                }
            ],
        )
        for s in scenario.steps
    ]
    replies.append(
        AIMessage(
            content="",
            tool_calls=[
                {"name": "submit_answer", "args": {"answer": scenario.answer}, "id": "end"}
            ],
        )
    )
    model = ScriptedChatModel(messages=iter(replies))
    ep = asyncio.run(arun_model_episode(scenario, model, "scripted"))
    assert ep.metrics["verdict"] == "faithful" and ep.stop_reason == "answer"


def test_api_key_never_reaches_the_run_file_or_the_output(
    tmp_path: Path, capsys, monkeypatch, scenario
):
    secret = "sk-test-" + "k3y" * 10
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    (tmp_path / "s.json").write_text(json.dumps(scenario.model_dump(mode="json")))
    with ScriptedServer([{"status": 500}, {"content": f"your key is {secret}"}] * 2) as srv:
        code = main(
            [
                "run",
                str(tmp_path / "s.json"),
                "--agent",
                "openai:fake",
                "--base-url",
                srv.base_url,
                "--out",
                str(tmp_path / "run.jsonl"),
                "--retries",
                "1",
            ]
        )
        seen = [r.headers.get("authorization") for r in srv.completions]
    out, err = capsys.readouterr()
    assert code == 0 and seen and all(h == f"Bearer {secret}" for h in seen)  # it was really used
    text = (tmp_path / "run.jsonl").read_text()
    assert "api_key" not in text.lower()
    assert secret not in text and secret not in out and secret not in err
    assert "[REDACTED]" in text  # the model echoed it, and it was redacted
