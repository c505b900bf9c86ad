"""``openai:`` models (``agentproc.agents.completions``), against the loopback server.

They post their requests with aiohttp rather than through the ``openai`` SDK;
these tests hold them to what LangChain's ``ChatOpenAI`` on the SDK does: the same
request body, the same error types, the same failure kinds.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
from pathlib import Path
from typing import Any

import openai
import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_openai import ChatOpenAI

from agentproc import Cell, generate_procedure, scenario_of
from agentproc.agents.completions import CompletionsChat
from agentproc.agents.conversation import conversation
from agentproc.agents.failures import MalformedResponse, error_kind
from agentproc.agents.harness import arun_model_episode
from agentproc.agents.providers import is_retryable, make_chat_model
from agentproc.agents.retry import RetryPolicy
from agentproc.agents.suite import ModelRunOptions, model_episodes
from agentproc.agents.transport import SdkEndpoint
from agentproc.runs import arun_suite
from agentproc.workflow import Scenario
from tests.fakes import ScriptedServer

KEY = "sk-test-0123456789abcdefghijklmnop"
FAST = RetryPolicy(attempts=3, base_delay=0.01, timeout=5.0)
PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", *PROXY_VARS):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)


@pytest.fixture(scope="module")
def scenario() -> Scenario:
    return scenario_of(generate_procedure(Cell(steps=4, lookback=2), 0, 0))


def _model(srv: ScriptedServer, **kw: Any) -> Any:
    return make_chat_model("openai:test-model", base_url=srv.base_url, **kw)


def _ask(model: Any, s: Scenario) -> Any:
    messages = [SystemMessage("Follow the tools."), HumanMessage(s.prompt)]
    return asyncio.run(model.bind_tools(s.tools).ainvoke(messages))


def _sdk(srv: ScriptedServer, **kw: Any) -> ChatOpenAI:
    """LangChain's own OpenAI model on the openai SDK: what ours must match."""
    return ChatOpenAI(
        model="test-model",
        base_url=srv.base_url,
        api_key=os.environ.get("OPENAI_API_KEY", "unused"),
        max_retries=0,
        use_responses_api=False,
        **kw,
    )


def test_the_body_and_headers_are_those_langchains_client_sends(
    scenario: Scenario, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    kw = {"temperature": 0.3, "max_tokens": 64, "top_p": 0.9, "extra_body": {"top_k": 5}}
    history = [
        SystemMessage("Follow the tools."),
        HumanMessage(scenario.prompt),
        AIMessage("", tool_calls=[{"name": "step_1", "args": {"S1": 1.5}, "id": "c1"}]),
        ToolMessage("S2 = 3", tool_call_id="c1"),
    ]
    with ScriptedServer([{"content": "a"}, {"content": "b"}, {"content": "c"}]) as srv:
        ours = make_chat_model("openai:test-model", base_url=srv.base_url, **kw)
        sdk = _sdk(srv, **kw).bind_tools(scenario.tools).invoke(history)
        mine = ours.bind_tools(scenario.tools).invoke(history)
        opening = [{"role": "system", "content": "sys"}, {"role": "user", "content": "go"}]
        lean = asyncio.run(conversation(ours, scenario.tools, opening).next_turn())
        via_sdk, via_ours, via_lean = srv.completions
    assert (sdk.content, mine.content, lean.content) == ("a", "b", "c")
    assert via_ours.body == via_sdk.body
    assert {**via_lean.body, "messages": None} == {**via_sdk.body, "messages": None}
    assert via_ours.body["tools"] and via_ours.body["top_k"] == 5
    assert via_ours.body["max_completion_tokens"] == 64
    for header in ("authorization", "content-type", "accept"):
        assert via_ours.headers[header] == via_sdk.headers[header]
    assert via_ours.headers["authorization"] == f"Bearer {KEY}"


@pytest.mark.parametrize(
    ("reply", "error", "kind", "retryable"),
    [
        ({"status": 500}, openai.InternalServerError, "endpoint", True),
        ({"status": 429}, openai.RateLimitError, "endpoint", True),
        ({"status": 404}, openai.NotFoundError, "endpoint", False),
        (
            {"status": 400, "message": "This model's maximum context length is 4096 tokens"},
            openai.BadRequestError,
            "context_overflow",
            False,
        ),
    ],
)
def test_status_errors_arrive_as_the_sdk_raises_them(
    scenario: Scenario,
    reply: dict[str, Any],
    error: type[BaseException],
    kind: str,
    retryable: bool,
) -> None:
    messages = [HumanMessage(scenario.prompt)]
    with ScriptedServer([reply, reply]) as srv:
        with pytest.raises(error) as via_sdk:
            _sdk(srv).bind_tools(scenario.tools).invoke(messages)
        with pytest.raises(error) as via_lean:
            asyncio.run(_model(srv).bind_tools(scenario.tools).ainvoke(messages))
        assert len(srv.completions) == 2  # the model itself never retries
    assert type(via_lean.value) is type(via_sdk.value)  # LangChain's own mapping included
    assert str(via_lean.value) == str(via_sdk.value)
    assert error_kind(via_lean.value) == kind
    assert is_retryable(via_lean.value) == retryable


def test_a_status_error_carries_the_server_message(scenario: Scenario) -> None:
    srv = ScriptedServer([{"status": 400, "message": "unknown parameter: foo"}])
    with srv, pytest.raises(openai.BadRequestError, match="unknown parameter: foo") as info:
        _ask(_model(srv), scenario)
    assert info.value.status_code == 400


def test_a_slow_answer_raises_a_retryable_timeout(scenario: Scenario) -> None:
    srv = ScriptedServer([{"delay": 2.0, "content": "late"}])
    with srv, pytest.raises(openai.APITimeoutError) as info:
        _ask(_model(srv, timeout=0.3), scenario)
    assert is_retryable(info.value)
    assert error_kind(info.value) == "endpoint"


def test_a_refused_connection_is_an_endpoint_failure(scenario: Scenario) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    model = make_chat_model("openai:test-model", base_url=f"http://127.0.0.1:{port}/v1")
    with pytest.raises(openai.APIConnectionError, match="Connection error") as info:
        _ask(model, scenario)
    assert error_kind(info.value) == "endpoint"
    assert is_retryable(info.value)


@pytest.mark.parametrize(
    "reply",
    [
        {"body": "<html>502 Bad Gateway</html>", "content_type": "text/html"},
        {"body": '{"choices": [{"message": {"content": "cut', "content_type": "application/json"},
        {"body": '{"object": "list", "data": []}', "content_type": "application/json"},
    ],
)
def test_an_answer_that_is_no_chat_completion_is_malformed(
    scenario: Scenario, reply: dict[str, Any]
) -> None:
    with ScriptedServer([reply]) as srv, pytest.raises(MalformedResponse) as info:
        _ask(_model(srv), scenario)
    assert error_kind(info.value) == "endpoint"


def test_a_proxy_in_the_environment_is_honoured(
    scenario: Scenario, monkeypatch: pytest.MonkeyPatch
) -> None:
    with ScriptedServer([{"content": "direct"}]) as srv:
        model = _model(srv)
        monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")  # nothing listens there
        with pytest.raises(openai.APIConnectionError, match=r"127\.0\.0\.1:9"):
            _ask(model, scenario)
        assert srv.completions == []  # the request went to the proxy, not to the server
        monkeypatch.setenv("NO_PROXY", "127.0.0.1")
        assert _ask(model, scenario).content == "direct"


def test_a_client_of_the_users_own_is_kept(scenario: Scenario) -> None:
    import httpx2

    with ScriptedServer([{"content": "via the user's client"}]) as srv:
        model = _model(srv, http_async_client=httpx2.AsyncClient(headers={"X-Team": "evals"}))
        assert isinstance(model._endpoint, SdkEndpoint)
        assert _ask(model, scenario).content == "via the user's client"
        assert srv.completions[0].headers["x-team"] == "evals"


def test_a_client_of_the_users_own_is_never_swapped_under_a_second_event_loop(
    scenario: Scenario,
) -> None:
    import httpx2

    from agentproc.errors import ConfigError

    with ScriptedServer([{"content": "first run"}, {"content": "never sent"}]) as srv:
        model = _model(srv, http_async_client=httpx2.AsyncClient(headers={"X-Team": "evals"}))
        assert _ask(model, scenario).content == "first run"
        with pytest.raises(ConfigError, match="new client for each run") as info:
            _ask(model, scenario)
        assert len(srv.completions) == 1  # nothing went out without the user's settings
    assert srv.completions[0].headers["x-team"] == "evals"
    assert error_kind(info.value) == "harness"  # not the endpoint's, and never the agent's


def test_a_new_model_never_inherits_the_event_loop_of_a_collected_one(scenario: Scenario) -> None:
    # CPython hands a freed model's address to the next model made; a model that is
    # new must never be taken for one used under an earlier asyncio.run.
    import gc

    import httpx2

    rounds = 30
    with ScriptedServer([{"content": f"run {i}"} for i in range(rounds)]) as srv:
        ids = set()
        for i in range(rounds):
            model = _model(srv, http_async_client=httpx2.AsyncClient())
            ids.add(id(model))
            assert _ask(model, scenario).content == f"run {i}"
            del model
            gc.collect()
    assert len(srv.completions) == rounds
    if len(ids) == rounds:  # pragma: no cover - depends on the allocator
        pytest.skip("no address was reused, so the case did not arise")


def test_the_history_keeps_the_raw_arguments_and_fills_in_missing_ids(scenario: Scenario) -> None:
    raw = '{"a": 1.50,  "b": 2}'
    script = [
        {"message": {"role": "assistant", "content": None, "tool_calls": [
            {"type": "function", "function": {"name": "step_3", "arguments": raw}},
        ]}},
        {"content": "done"},
    ]  # fmt: skip
    with ScriptedServer(script) as srv:
        opening = [{"role": "system", "content": "sys"}, {"role": "user", "content": "go"}]
        chat = conversation(_model(srv), scenario.tools, opening)
        assert isinstance(chat, CompletionsChat)

        async def two_turns() -> list[Any]:
            first = await chat.next_turn()
            chat.tool_result(first.requests[0][0], "S3 = 3.5")
            return [first, await chat.next_turn()]

        first, second = asyncio.run(two_turns())
        sent = srv.completions[1].body["messages"]
    assert first.requests == [("call_0", "step_3", raw)]
    assert second.content == "done"
    assert sent[2]["tool_calls"][0]["function"]["arguments"] == raw  # not re-serialised
    assert sent[2]["tool_calls"][0]["id"] == "call_0"
    assert sent[3] == {"role": "tool", "tool_call_id": "call_0", "content": "S3 = 3.5"}
    assert srv.completions[0].body["tools"] == srv.completions[1].body["tools"]


def test_an_oracle_episode_is_faithful(scenario: Scenario) -> None:
    with ScriptedServer(mode="oracle") as srv:
        ep = asyncio.run(arun_model_episode(scenario, _model(srv), "openai:oracle", retry=FAST))
    assert ep.metrics["verdict"] == "faithful"
    assert ep.usage is not None and ep.usage["model_calls"] == len(srv.completions)


def test_a_second_asyncio_run_of_a_suite_reuses_the_model(
    scenario: Scenario, tmp_path: Path
) -> None:
    """One model object across two event loops: no "Event loop is closed"."""
    scenarios = [scenario_of(generate_procedure(Cell(steps=3, lookback=2), 0, i)) for i in range(3)]
    options = ModelRunOptions(concurrency=3, retry=FAST)
    with ScriptedServer(mode="oracle") as srv:
        model = _model(srv)
        for run in ("first", "second"):
            out = tmp_path / f"{run}.jsonl"
            episodes = model_episodes(model, "openai:oracle", options)
            summary = asyncio.run(
                arun_suite(scenarios, "openai:oracle", episodes, out, concurrency=3)
            )
            assert summary.errors == {}, run
            assert summary.verdicts == {"faithful": 3}, run
            assert [json.loads(line)["stop_reason"] for line in out.read_text().splitlines()] == [
                "answer"
            ] * 3
