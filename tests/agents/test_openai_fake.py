"""The fake OpenAI server, exercised over real HTTP through the openai client."""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import openai
import pytest

from agentproc.labelling import label_calls
from agentproc.procedures import Cell, generate_procedure
from agentproc.workflow import Scenario, Toolkit, build_workflow, scenario_of
from tests.fakes import ScriptedServer


def _client(srv: ScriptedServer, timeout: float = 5.0) -> openai.OpenAI:
    return openai.OpenAI(base_url=srv.base_url, api_key="test", timeout=timeout, max_retries=0)


def _ask(client: openai.OpenAI, text: str = "go", **kw: Any) -> Any:
    return client.chat.completions.create(
        model="fake", messages=[{"role": "user", "content": text}], **kw
    )


def _scenario(mode: str = "decimal") -> Scenario:
    return scenario_of(generate_procedure(Cell(steps=5, lookback=3, mode=mode), 0, 0))


def test_scripted_replies_come_back_in_order() -> None:
    script = [
        {"tool_call": {"name": "step_1", "arguments": '{"S1": 1.5, "S2": 3.0}'}},
        {"content": "thinking"},
        {"tool_call": {"name": "step_2", "arguments": '{"S3": 4.5'}},
    ]
    with ScriptedServer(script) as srv:
        client = _client(srv)
        first, second, third = (_ask(client).choices[0] for _ in range(3))

    call = first.message.tool_calls[0]
    assert (call.type, call.function.name, call.function.arguments) == (
        "function",
        "step_1",
        '{"S1": 1.5, "S2": 3.0}',
    )
    assert first.finish_reason == "tool_calls"
    assert (second.message.content, second.message.tool_calls, second.finish_reason) == (
        "thinking",
        None,
        "stop",
    )
    assert third.message.tool_calls[0].function.arguments == '{"S3": 4.5'  # malformed, as sent


def test_completion_reports_usage_and_model() -> None:
    with ScriptedServer([{"content": "hi"}]) as srv:
        resp = _ask(_client(srv))
    assert resp.object == "chat.completion"
    assert resp.model == "fake"
    assert resp.usage.total_tokens == resp.usage.prompt_tokens + resp.usage.completion_tokens > 0


def test_script_per_conversation_restarts_for_each_first_user_message() -> None:
    script = [{"content": "one"}, {"content": "two"}]
    with ScriptedServer(script, per_conversation=True) as srv:
        client = _client(srv)
        replies = [_ask(client, text).choices[0].message.content for text in ("a", "b", "a", "b")]
    assert replies == ["one", "one", "two", "two"]


def test_exhausted_script_answers_bad_request() -> None:
    with ScriptedServer([]) as srv, pytest.raises(openai.BadRequestError, match="script exhausted"):
        _ask(_client(srv))


@pytest.mark.parametrize(
    ("status", "error"),
    [
        (429, openai.RateLimitError),
        (500, openai.InternalServerError),
        (400, openai.BadRequestError),
    ],
)
def test_error_statuses_arrive_as_openai_errors(status: int, error: type[Exception]) -> None:
    with ScriptedServer([{"status": status}]) as srv, pytest.raises(error) as info:
        _ask(_client(srv))
    assert info.value.status_code == status  # type: ignore[attr-defined]
    assert info.value.body["message"] == f"server error {status}"  # type: ignore[attr-defined]


def test_delay_past_the_client_timeout_raises_api_timeout_error() -> None:
    with ScriptedServer([{"delay": 2.0, "content": "late"}]) as srv:
        started = time.monotonic()
        with pytest.raises(openai.APITimeoutError):
            _ask(_client(srv, timeout=0.3))
        assert time.monotonic() - started < 1.5


def test_models_are_listed() -> None:
    with ScriptedServer([], model="smol") as srv:
        models = _client(srv).models.list()
    assert [m.id for m in models.data] == ["smol"]


def test_requests_are_recorded_with_headers_and_body() -> None:
    with ScriptedServer([{"content": "hi"}]) as srv:
        _ask(_client(srv), "hello", temperature=0)
    (req,) = srv.completions
    assert (req.method, req.path) == ("POST", "/v1/chat/completions")
    assert req.headers["authorization"] == "Bearer test"
    assert req.body["messages"] == [{"role": "user", "content": "hello"}]
    assert req.body["temperature"] == 0


def _run_oracle_episode(srv: ScriptedServer, s: Scenario) -> Toolkit:
    """Drive one episode: the server chooses the calls, the mock tools execute them."""
    client = _client(srv)
    tk = Toolkit(build_workflow(s))
    messages: list[dict[str, Any]] = [{"role": "user", "content": s.prompt}]
    for _ in range(2 * len(s.steps) + 4):
        message = _ask_messages(client, messages, s.tools)
        calls = message.tool_calls or []
        messages.append(
            {
                "role": "assistant",
                "content": message.content,
                "tool_calls": [c.model_dump(exclude_none=True) for c in calls],
            }
        )
        for call in calls:
            rec = tk.call(call.function.name, call.function.arguments)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": rec.result})
        if tk.answers:
            return tk
    raise AssertionError("the oracle never submitted an answer")


def _ask_messages(client: openai.OpenAI, messages: list[dict[str, Any]], tools: list[Any]) -> Any:
    resp = client.chat.completions.create(model="oracle", messages=messages, tools=tools)
    return resp.choices[0].message


@pytest.mark.parametrize("mode", ["decimal", "integer"])
def test_oracle_executes_the_reference_trace(mode: str) -> None:
    s = _scenario(mode)
    with ScriptedServer(mode="oracle") as srv:
        tk = _run_oracle_episode(srv, s)

    expected = [(st.expected_call.name, st.expected_call.arguments) for st in s.steps]
    expected.append((s.finish.tool, {s.finish.argument: s.answer}))
    assert [(rec.name, rec.args) for rec in tk.calls] == expected
    assert tk.answers == [s.answer]
    labels, _ = label_calls(tk.workflow, tk.calls)
    assert labels == []


def test_oracle_says_done_after_the_answer() -> None:
    s = _scenario()
    with ScriptedServer(mode="oracle") as srv:
        tk = _run_oracle_episode(srv, s)
        history = srv.completions[-1].body["messages"]
        finish = tk.calls[-1]
        history += [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_x",
                        "type": "function",
                        "function": {"name": finish.name, "arguments": finish.arguments},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_x", "content": finish.result},
        ]
        last = _ask_messages(_client(srv), history, s.tools)
    assert (last.content, last.tool_calls) == ("Done.", None)


def test_oracle_reads_values_from_tool_results_not_its_own_arithmetic() -> None:
    # the first procedure whose second step reads the first step's output
    cell = Cell(steps=5, lookback=3, mode="decimal")
    s = next(
        sc
        for i in range(50)
        if (sc := scenario_of(generate_procedure(cell, 0, i))).steps[0].output
        in sc.steps[1].expected_call.arguments
    )
    step_1 = s.steps[0]
    messages = [
        {"role": "user", "content": s.prompt},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {
                        "name": "step_1",
                        "arguments": json.dumps(step_1.expected_call.arguments),
                    },
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": f"{step_1.output} = 123.456"},
    ]
    with ScriptedServer(mode="oracle") as srv:
        message = _ask_messages(_client(srv), messages, s.tools)
    args = json.loads(message.tool_calls[0].function.arguments)
    assert message.tool_calls[0].function.name == "step_2"
    assert args[step_1.output] == 123.456


def test_latency_does_not_serialise_concurrent_requests() -> None:
    n, latency = 8, 0.3
    with ScriptedServer([{"content": "ok"}] * n, latency=latency) as srv:
        client = _client(srv)
        started = time.monotonic()
        with ThreadPoolExecutor(n) as pool:
            replies = list(pool.map(lambda _: _ask(client).choices[0].message.content, range(n)))
        elapsed = time.monotonic() - started
    assert replies == ["ok"] * n
    assert latency <= elapsed < n * latency / 2


def test_stop_ends_a_pending_delay_at_once() -> None:
    srv = ScriptedServer([{"delay": 30.0, "content": "never"}]).start()
    with ThreadPoolExecutor(1) as pool:
        pending = pool.submit(_ask, _client(srv, timeout=10.0))
        while not srv.completions:
            time.sleep(0.01)
        started = time.monotonic()
        srv.stop()
        assert time.monotonic() - started < 2.0
        with pytest.raises(openai.APIConnectionError):
            pending.result(timeout=5)
