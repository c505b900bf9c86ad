"""Outages are not agent failures, and whatever a model returns is labelled, not lost.

Everything runs against the scripted OpenAI-compatible server on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import json
import socket
from pathlib import Path
from typing import Any

import pytest

from agentproc import Cell, generate_procedure, scenario_of
from agentproc.agents.failures import MalformedResponse, error_kind
from agentproc.agents.harness import arun_model_episode
from agentproc.agents.providers import make_chat_model
from agentproc.agents.retry import RetryPolicy
from agentproc.agents.text import arun_text_episode
from agentproc.cli import main
from agentproc.procedures import Block, Grid, write_suite
from agentproc.runs import episode_record, read_run
from tests.fakes.openai_server import ScriptedServer

FAST = RetryPolicy(attempts=2, base_delay=0.01, timeout=5.0)


@pytest.fixture(scope="module")
def scenario():
    return scenario_of(generate_procedure(Cell(steps=2, lookback=2), 0, 0))


@pytest.fixture()
def suite(tmp_path: Path) -> Path:
    write_suite(Grid(blocks=[Block(steps=[2])], count=6), tmp_path / "suite", jobs=1)
    return tmp_path / "suite"


def episode(scenario, srv: ScriptedServer, **kw: Any):
    model = make_chat_model("openai:fake", base_url=srv.base_url)
    return asyncio.run(arun_model_episode(scenario, model, "openai:fake", retry=FAST, **kw))


def message(*calls: dict[str, Any]) -> dict[str, Any]:
    return {"message": {"role": "assistant", "content": None, "tool_calls": list(calls)}}


def tool_call(name: Any, arguments: Any, call_id: str = "a") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def run(capsys, *argv: Any) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# -- 1. an outage is not a wrong answer ------------------------------------------------


def test_an_endpoint_that_fails_every_retry_ends_the_episode_with_an_endpoint_error(scenario):
    with ScriptedServer([{"status": 503}] * 4) as srv:
        ep = episode(scenario, srv)
    assert ep.stop_reason == "error"
    assert ep.error is not None and (ep.error.kind, ep.error.attempts) == ("endpoint", 2)
    assert "503" in ep.error.message
    assert episode_record(ep)["error"]["kind"] == "endpoint"


def test_a_refused_connection_is_an_endpoint_error(scenario):
    model = make_chat_model("openai:fake", base_url=f"http://127.0.0.1:{free_port()}/v1")
    ep = asyncio.run(arun_model_episode(scenario, model, "x", retry=FAST))
    assert ep.error is not None and ep.error.kind == "endpoint"


def test_a_context_overflow_reported_by_the_server_is_its_own_kind(scenario):
    too_long = "This model's maximum context length is 4096 tokens; you asked for 9000."
    with ScriptedServer([{"status": 400, "message": too_long}]) as srv:
        ep = episode(scenario, srv)
    assert ep.error is not None and ep.error.kind == "context_overflow"


def test_errored_episodes_count_in_no_figure_and_the_run_says_so(capsys, suite, tmp_path):
    out = tmp_path / "r.jsonl"
    # the first episode succeeds, so the run does not stop; the rest fail at the endpoint
    script = [{"tool_call": {"name": "submit_answer", "arguments": {"answer": 1}}}]
    script += [{"status": 500}] * 40
    with ScriptedServer(script) as srv:
        code, stdout, err = run(
            capsys, "run", suite, "--agent", "openai:m", "--base-url", srv.base_url,
            "--retries", "0", "--out", out,
        )  # fmt: skip
    assert code == 3
    assert "5 episodes errored (endpoint 5; the first: OpenAIAPIError: Error code: 500" in err
    assert "and count in no figure; --resume runs them again" in err
    records = [r for _, r in read_run(out)]
    assert [r["stop_reason"] for r in records].count("error") == 5
    code, stdout, err = run(capsys, "report", out, "--json")
    agent = json.loads(stdout)["agents"]["openai:m"]
    assert agent["overall"]["n"] == 1 and agent["errors"] == {
        "total": 5,
        "by_kind": {"endpoint": 5},
    }
    assert "5 episodes errored" in err
    code, stdout, _ = run(capsys, "report", out)
    assert "errored 5 of 6" in stdout
    assert "warning: 5 episodes of openai:m could not be run (endpoint 5)" in stdout


def test_a_run_that_cannot_start_stops_after_the_first_few_episodes(capsys, suite, tmp_path):
    out = tmp_path / "r.jsonl"
    with ScriptedServer([{"status": 401, "message": "invalid api key"}] * 40) as srv:
        code, _, err = run(
            capsys, "run", suite, "--agent", "openai:m", "--base-url", srv.base_url,
            "--out", out,
        )  # fmt: skip
    assert code == 3
    assert "the endpoint failed on each of the first 3 episodes, so the run stopped" in err
    assert "invalid api key" in err
    assert len(list(read_run(out))) == 3


def test_resume_runs_errored_episodes_again_and_the_last_record_counts(capsys, suite, tmp_path):
    out = tmp_path / "r.jsonl"
    with ScriptedServer([{"status": 503}] * 40) as srv:
        run(capsys, "run", suite, "--agent", "openai:m", "--base-url", srv.base_url,
            "--retries", "0", "--limit", "2", "--out", out)  # fmt: skip
        port = srv.port
    assert all(r["stop_reason"] == "error" for _, r in read_run(out))
    # the oracle, healthy again at the same address (the endpoint is part of the agent)
    with ScriptedServer(port=port) as srv:
        code, stdout, _ = run(
            capsys, "run", suite, "--agent", "openai:m", "--base-url", srv.base_url,
            "--limit", "2", "--resume", "--out", out,
        )  # fmt: skip
    assert code == 0 and "wrote 2 episodes" in stdout
    assert len(list(read_run(out))) == 4
    code, stdout, err = run(capsys, "report", out, "--json")
    agent = json.loads(stdout)["agents"]["openai:m"]
    assert (agent["overall"]["n"], agent["overall"]["accuracy"], agent["errors"]["total"]) == (
        2,
        1.0,
        0,
    )
    assert "2 records were superseded" in err
    code, stdout, _ = run(capsys, "replay", out)
    assert "2 episodes replayed" in stdout


def test_a_fault_of_the_harness_is_a_harness_error_not_a_crash(
    capsys, suite, tmp_path, monkeypatch
):
    import agentproc.agents.harness as harness

    async def broken(*a: Any, **k: Any) -> Any:
        raise RuntimeError("a bug in the harness")

    monkeypatch.setattr(harness, "arun_model_episode", broken)
    with ScriptedServer() as srv:
        code, _, _ = run(capsys, "run", suite, "--agent", "openai:m", "--base-url",
                           srv.base_url, "--limit", "2", "--out", tmp_path / "r.jsonl")  # fmt: skip
    records = [r for _, r in read_run(tmp_path / "r.jsonl")]
    assert code == 3 and [r["error"]["kind"] for r in records] == ["harness", "harness"]
    assert "a bug in the harness" in records[0]["error"]["message"]


def test_error_kinds_of_common_exceptions():
    assert error_kind(TimeoutError()) == "endpoint"
    assert error_kind(MalformedResponse("html")) == "endpoint"
    assert error_kind(ConnectionRefusedError()) == "endpoint"
    assert error_kind(KeyError("bug")) == "harness"


# -- 2. every model mistake is labelled, and the reply is kept -----------------------------


def test_arguments_nested_too_deeply_are_invalid_arguments_with_the_text_kept(scenario):
    deep = '{"S1": ' + "[" * 100_000 + "]" * 100_000 + "}"
    with ScriptedServer([message(tool_call("step_1", deep)), {"content": "done"}]) as srv:
        ep = episode(scenario, srv)
    assert ep.stop_reason == "no_tool_call" and ep.error is None
    assert ep.calls[0].arguments == deep and ep.calls[0].refused == "invalid_arguments"
    assert ep.labels[0].kind.value == "invalid_arguments"


def test_arguments_sent_as_an_object_are_read_as_their_json(scenario):
    args = dict(scenario.steps[0].expected_call.arguments)
    with ScriptedServer([message(tool_call("step_1", args)), {"content": "done"}]) as srv:
        ep = episode(scenario, srv)
    assert ep.error is None and ep.calls[0].refused is None
    assert json.loads(ep.calls[0].arguments) == args


def test_a_tool_name_that_is_a_number_is_a_hallucinated_call(scenario):
    with ScriptedServer([message(tool_call(5, "{}")), {"content": "done"}]) as srv:
        ep = episode(scenario, srv)
    assert ep.error is None and ep.calls[0].name == "5"
    assert ep.labels[0].kind.value == "hallucinated_call"


def test_duplicate_call_ids_keep_each_call_its_own_name_and_arguments(scenario):
    first = json.dumps(dict(scenario.steps[0].expected_call.arguments))
    second = json.dumps(dict(scenario.steps[1].expected_call.arguments))
    reply = message(tool_call("step_1", first, "same"), tool_call("step_2", second, "same"))
    with ScriptedServer([reply, {"content": "done"}]) as srv:
        ep = episode(scenario, srv)
    assert [(c.name, c.arguments) for c in ep.calls] == [("step_1", first), ("step_2", second)]
    assert [c.refused for c in ep.calls] == [None, None]


def test_an_html_page_with_status_200_is_an_endpoint_failure_after_retries(scenario):
    page = {"body": "<html><body>Sign in to the proxy</body></html>"}
    with ScriptedServer([page] * 4) as srv:
        ep = episode(scenario, srv)
    assert ep.error is not None and ep.error.kind == "endpoint" and ep.error.attempts == 2
    assert "Sign in to the proxy" in ep.error.message


def test_a_truncated_body_is_retried(scenario):
    cut = {"body": '{"id": "x", "choi', "content_type": "application/json"}
    with ScriptedServer([cut, {"content": "done"}]) as srv:
        ep = episode(scenario, srv)
    assert ep.error is None and ep.stop_reason == "no_tool_call"
    assert ep.model_calls is not None and ep.model_calls[0]["attempts"] == 2


def test_a_text_reply_with_a_five_thousand_digit_number_is_read_and_stored(scenario, tmp_path):
    reply = {"content": "S3 = " + "9" * 5000 + "\nS4 = " + "8" * 5000 + "\nAnswer: 1"}
    with ScriptedServer([reply]) as srv:
        model = make_chat_model("openai:fake", base_url=srv.base_url)
        ep = asyncio.run(arun_text_episode(scenario, model, "x", retry=FAST))
    assert ep.error is None and ep.metrics["verdict"] == "wrong"
    path = tmp_path / "t.jsonl"
    from agentproc.runs import RunWriter

    with RunWriter(path) as w:
        w.write(episode_record(ep))
    assert [r["verdict"] for _, r in read_run(path)] == ["wrong"]


def test_one_model_serves_episodes_under_successive_event_loops(scenario):
    with ScriptedServer() as srv:
        model = make_chat_model("openai:fake", base_url=srv.base_url)
        for _ in range(2):
            ep = asyncio.run(arun_model_episode(scenario, model, "x", retry=FAST))
            assert (ep.stop_reason, ep.error) == ("answer", None)
