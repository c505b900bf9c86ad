"""``openai:`` models: chat completions posted as prepared JSON.

:class:`OpenAIChat` is a LangChain chat model (``bind_tools``, ``ainvoke``) that
sends the body ``langchain_openai.ChatOpenAI`` would send (model, messages, tools,
sampling options) through :mod:`agentproc.agents.transport`, and keeps the raw
text of every tool call: a benchmark of tool use must record exactly what the
model sent, and arguments that are not a JSON object are the model's mistake
(an invalid tool call), never a crash.

:class:`CompletionsChat` is the harness's conversation with such a model: the
history kept as the JSON messages the server reads, the request's fixed part
(model, tools, sampling options) serialised once per episode.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Self

import orjson
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, convert_to_openai_messages
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict, Field, PrivateAttr, SecretStr, model_validator

from agentproc.agents.conversation import RAW_KEY, Request, Turn, tool_calls_of
from agentproc.agents.failures import MalformedResponse
from agentproc.agents.transport import HttpEndpoint, SdkEndpoint, chat_url, request_headers
from agentproc.workflow.calls import as_text

SAMPLING: tuple[str, ...] = ("temperature", "max_tokens", "top_p", "seed", "presence_penalty")
SAMPLING += ("frequency_penalty", "reasoning_effort")
"""Model options sent when set, under their own names but ``max_tokens``, which
ChatOpenAI sends as ``max_completion_tokens``."""
CHOICES = frozenset({"auto", "none", "required"})


class OpenAIChat(BaseChatModel):
    """A chat model behind an OpenAI-compatible ``/chat/completions`` endpoint.

    It never retries: the runner does, so that every attempt is counted.
    """

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    model_name: str = Field(alias="model")
    """The model the server is asked for."""
    base_url: str = "https://api.openai.com/v1"
    """The server's base URL; its query parameters are kept on every request."""
    api_key: SecretStr
    timeout: float | None = 60.0
    """Seconds a request may take, answer included."""
    temperature: float | None = 0.0
    max_tokens: int | None = None
    top_p: float | None = None
    seed: int | None = None
    presence_penalty: float | None = None
    frequency_penalty: float | None = None
    reasoning_effort: str | None = None
    stop: list[str] | None = None
    model_kwargs: dict[str, Any] = Field(default_factory=dict)
    """Other request fields, sent as given."""
    extra_body: dict[str, Any] | None = None
    """Fields merged into the body last, as the ``openai`` client merges them."""
    organization: str | None = None
    default_headers: dict[str, str] | None = None
    default_query: dict[str, str] | None = None
    http_async_client: Any = None
    """An ``httpx`` client of the user's own: requests then go through the ``openai`` SDK."""

    _endpoint: Any = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _set_agentproc_endpoint(self) -> Self:
        self._endpoint = self._make_endpoint()  # a bad header fails here, before any run
        return self

    def _make_endpoint(self) -> HttpEndpoint | SdkEndpoint:
        key = self.api_key.get_secret_value()
        headers = request_headers(key, self.base_url, self.organization, self.default_headers)
        if self.http_async_client is None:
            return HttpEndpoint(chat_url(self.base_url, self.default_query), headers, self.timeout)
        import openai

        client = openai.AsyncOpenAI(
            api_key=key,
            base_url=self.base_url,
            organization=self.organization,
            timeout=self.timeout,
            max_retries=0,
            default_headers=self.default_headers,
            default_query=self.default_query,
            http_client=self.http_async_client,
        )
        return SdkEndpoint(client, self.model_name)

    @property
    def _llm_type(self) -> str:
        return "openai-chat-completions"

    def cache_identity(self) -> dict[str, Any]:
        """What decides this model's replies, for the response cache: the request's fixed
        fields and the endpoint (no key, header, organisation or query credential)."""
        from agentproc.agents.cache import endpoint

        server = endpoint(self.base_url, self.default_query)
        return {"kind": "openai", "endpoint": server, **self.fields()}

    def fields(self, **bound: Any) -> dict[str, Any]:
        """The request body but its messages: what ``ChatOpenAI`` sends for the same options."""
        out: dict[str, Any] = {"model": self.model_name, "stream": False}
        for option in SAMPLING:
            if (value := getattr(self, option)) is not None:
                out["max_completion_tokens" if option == "max_tokens" else option] = value
        if self.stop:
            out["stop"] = self.stop
        out.update(self.model_kwargs)
        out.update({k: v for k, v in bound.items() if v is not None})
        out.update(self.extra_body or {})
        return out

    def bind_tools(self, tools: Any, *, tool_choice: Any = None, **kw: Any) -> Any:
        """The model with ``tools`` offered on every request (``tool_choice`` as ChatOpenAI
        reads it: ``auto``, ``none``, ``required``/``any``, or a tool's name)."""
        if tool_choice is not None:
            if tool_choice == "any":
                tool_choice = "required"
            elif isinstance(tool_choice, str) and tool_choice not in CHOICES:
                tool_choice = {"type": "function", "function": {"name": tool_choice}}
            kw["tool_choice"] = tool_choice
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kw)

    def lean_conversation(self, tools: Any, opening: list[dict[str, Any]]) -> CompletionsChat:
        """The harness's conversation with this model, offering ``tools`` (None: text mode)."""
        fixed = self.fields(tools=[convert_to_openai_tool(t) for t in tools] if tools else None)
        return CompletionsChat(self._endpoint, fixed, opening)

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        body = self.fields(stop=stop, **kwargs)
        body["messages"] = [_sent(m) for m in convert_to_openai_messages(messages)]
        data = await self._endpoint.create(orjson.dumps(body, default=_plain))
        return ChatResult(generations=[ChatGeneration(message=ai_message(data))])

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        # An event loop of its own, in a thread, so that a caller's running loop is no matter.
        with ThreadPoolExecutor(1) as pool:
            call = self._agenerate(messages, stop, None, **kwargs)
            return pool.submit(asyncio.run, call).result()


def _sent(message: dict[str, Any]) -> dict[str, Any]:
    """A message as ChatOpenAI sends it: an assistant's empty text beside tool calls is null."""
    if message.get("tool_calls") and message.get("content") == "":
        return {**message, "content": None}
    return message


def ai_message(data: dict[str, Any]) -> AIMessage:
    """A chat completion as LangChain's message, with the raw text of each tool call
    kept under :data:`RAW_KEY`; arguments that are not a JSON object make an invalid
    tool call."""
    _, turn = reply_of(data)
    calls = tool_calls_of(turn.requests)
    tokens = turn.usage_metadata
    usage = {**tokens, "total_tokens": tokens["input_tokens"] + tokens["output_tokens"]}
    return AIMessage(
        content=turn.content,
        **calls,
        additional_kwargs={RAW_KEY: turn.requests},
        usage_metadata=usage,  # type: ignore[arg-type]
        response_metadata={"model_name": data.get("model"), "id": data.get("id")},
    )


def _plain(value: Any) -> Any:
    """What orjson cannot serialise itself: a pydantic model in a payload."""
    if hasattr(value, "model_dump"):
        return value.model_dump()
    raise TypeError(f"cannot send a {type(value).__name__} as JSON")


class CompletionsChat:
    """A conversation kept as the JSON messages a chat-completions server reads.

    The request's fixed part (model, tools, sampling options: exactly what the
    LangChain client would send) is serialised once; each turn appends the
    history to it.
    """

    def __init__(self, endpoint: Any, fixed: dict[str, Any], opening: list[dict[str, Any]]) -> None:
        self.endpoint = endpoint
        fields = {k: v for k, v in fixed.items() if k != "messages"}  # never empty: model
        self._fields = fields
        self._prefix = orjson.dumps(fields, default=_plain)[:-1] + b',"messages":'
        self.history: list[dict[str, Any]] = [dict(m) for m in opening]

    def request_body(self) -> dict[str, Any]:
        """The body the next turn sends (what the response cache keys on)."""
        return {**self._fields, "messages": self.history}

    async def next_turn(self) -> Turn:
        data = await self.endpoint.create(self._prefix + orjson.dumps(self.history) + b"}")
        message, turn = reply_of(data)
        self.history.append(message)
        return turn

    def tool_result(self, call_id: str, text: str) -> None:
        self.history.append({"role": "tool", "tool_call_id": call_id, "content": text})

    def take(self, turn: Turn) -> None:
        message = turn.message
        if message is None:  # stored by another kind of conversation
            message = {"role": "assistant", "content": turn.content or None}
            if turn.requests:
                message["tool_calls"] = [
                    {"id": i, "type": "function", "function": {"name": n, "arguments": as_text(a)}}
                    for i, n, a in turn.requests
                ]
        self.history.append(message)


def reply_of(data: dict[str, Any]) -> tuple[dict[str, Any], Turn]:
    """The assistant message of a chat completion, as it goes back into the history,
    and the turn it is. Names and arguments are kept as the text the model sent."""
    choice = data["choices"][0] if data["choices"] else None
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(message, dict):
        raise MalformedResponse("the endpoint's answer has no message")
    content = message.get("content")
    calls = message.get("tool_calls")
    requests: list[Request] = []
    sent: list[dict[str, Any]] = []
    for tc in calls if isinstance(calls, list) else []:
        if not isinstance(tc, dict):
            continue
        given = tc.get("function")
        fn: dict[str, Any] = given if isinstance(given, dict) else {}
        call_id = str(tc.get("id") or "") or f"call_{len(requests)}"
        name, text = as_text(fn.get("name")), as_text(fn.get("arguments"))
        requests.append((call_id, name, text))
        sent.append(
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": text}}
        )
    back: dict[str, Any] = {"role": "assistant", "content": content}
    if sent:
        back["tool_calls"] = sent
    given = data.get("usage")
    usage: dict[str, Any] = given if isinstance(given, dict) else {}
    tokens = {
        "input_tokens": _count(usage.get("prompt_tokens")),
        "output_tokens": _count(usage.get("completion_tokens")),
    }
    return back, Turn(content if content is not None else "", requests, tokens, message=back)


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
