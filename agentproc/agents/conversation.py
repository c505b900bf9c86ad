"""One episode's conversation with a chat model, turn by turn.

The harness asks for the model's next turn and hands back tool results; how the
history is kept and sent depends on the model:

- :class:`LangChainChat`: any LangChain chat model (``bind_tools`` and
  ``ainvoke``), the history as LangChain messages;
- :class:`~agentproc.agents.completions.CompletionsChat`: an ``openai:`` model on
  its own transport, the history as the JSON messages the server reads.

:func:`conversation` picks one. A turn that failed leaves the history as it was,
so that it can be tried again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

RAW_KEY = "agentproc_raw_tool_calls"
"""Where a model's message keeps ``(id, name, raw arguments)`` of each tool call it made."""

Request = tuple[str, str, Any]
"""``(call id, tool name, arguments)``: the raw argument text where the model's
client kept it, else the arguments as parsed."""


@dataclass
class Turn:
    """What the model said in one turn."""

    content: Any
    """Its text (LangChain content: a string or a list of parts)."""
    requests: list[Request]
    """Its tool calls, in the order sent."""
    usage_metadata: dict[str, int] = field(default_factory=dict)
    """``input_tokens`` and ``output_tokens``, where the server counted them."""
    message: dict[str, Any] | None = None
    """The assistant message as it goes back into a JSON history (``openai:`` models)."""
    cache_hit: bool | None = None
    """Served by the response cache (``None``: no cache in use)."""
    redacted: frozenset[int] = frozenset()
    """A cache hit's calls (their position) stored with a credential cut out of their name
    or arguments, as the episode session cut it before the first run ran them."""
    redacted_content: bool = False
    """A cache hit's text was stored with a credential cut out (text mode reads it)."""


class Conversation(Protocol):
    async def next_turn(self) -> Turn:
        """The model's reply to the history so far, added to the history."""
        ...

    def tool_result(self, call_id: str, text: str) -> None:
        """Add the result of one tool call to the history."""
        ...

    def take(self, turn: Turn) -> None:
        """Add a reply the model gave before (a cache hit) to the history, as its own."""
        ...


def conversation(
    model: Any, tools: list[dict[str, Any]] | None, opening: list[dict[str, Any]]
) -> Conversation:
    """A conversation with ``model`` that opens with ``opening`` (OpenAI-format
    system and user messages, then any pre-filled calls and their results), offering
    ``tools`` (none: text mode)."""
    lean = getattr(model, "lean_conversation", None)
    chat = lean(tools, opening) if lean is not None else None
    return chat if chat is not None else LangChainChat(model, tools, opening)


class LangChainChat:
    """A conversation through a LangChain chat model's ``ainvoke``."""

    def __init__(
        self, model: Any, tools: list[dict[str, Any]] | None, opening: list[dict[str, Any]]
    ) -> None:
        from langchain_core.messages import HumanMessage, SystemMessage, convert_to_messages

        self.model = model.bind_tools(tools) if tools is not None else model
        kinds = {"system": SystemMessage, "user": HumanMessage}
        self.history: list[Any] = [
            kinds[m["role"]](m["content"]) if m["role"] in kinds else convert_to_messages([m])[0]
            for m in opening  # a pre-fill's calls and results: OpenAI messages
        ]

    async def next_turn(self) -> Turn:
        from langchain_core.messages import AIMessage

        reply = await self.model.ainvoke(self.history)
        kwargs = {k: v for k, v in reply.additional_kwargs.items() if k != RAW_KEY}
        self.history.append(
            AIMessage(
                content=reply.content,
                tool_calls=reply.tool_calls,
                invalid_tool_calls=getattr(reply, "invalid_tool_calls", []),
                additional_kwargs=kwargs,
                id=reply.id,
            )
        )
        usage = getattr(reply, "usage_metadata", None) or {}
        return Turn(reply.content, _requests(reply), dict(usage))

    def take(self, turn: Turn) -> None:
        from langchain_core.messages import AIMessage

        self.history.append(AIMessage(content=turn.content, **tool_calls_of(turn.requests)))

    def tool_result(self, call_id: str, text: str) -> None:
        from langchain_core.messages import ToolMessage

        self.history.append(ToolMessage(content=text, tool_call_id=call_id))


def _requests(reply: Any) -> list[Request]:
    """``(id, name, arguments)`` of every tool call in a reply, in the order sent.

    The raw name and argument text the provider kept are used where there are
    any: ids are not trusted to be unique or present, so calls are matched by
    position, never by id.
    """
    raw = reply.additional_kwargs.get(RAW_KEY)
    if raw:
        return [(i or f"call_{n}", name, text) for n, (i, name, text) in enumerate(raw)]
    out: list[Request] = []
    for tc in list(getattr(reply, "tool_calls", [])) + list(
        getattr(reply, "invalid_tool_calls", [])
    ):
        call_id = tc.get("id") or f"call_{len(out)}"
        args = tc.get("args")
        out.append((call_id, tc.get("name") or "", args if args is not None else ""))
    return out


def tool_calls_of(requests: list[Request]) -> dict[str, list[Any]]:
    """LangChain's ``tool_calls`` and ``invalid_tool_calls`` of requests: raw argument
    text that is not a JSON object makes an invalid tool call."""
    import json

    from langchain_core.messages.tool import invalid_tool_call, tool_call

    calls, invalid = [], []
    for call_id, name, given in requests:
        error = None
        args = given
        if isinstance(given, str):
            try:
                args = json.loads(given)
            except (ValueError, RecursionError) as exc:
                error = f"the arguments are not valid JSON: {type(exc).__name__}"
        if error is None and not isinstance(args, dict):
            error = "the arguments are not a JSON object"
        if error is None:
            calls.append(tool_call(name=name, args=args, id=call_id))
        else:
            text = given if isinstance(given, str) else json.dumps(given)
            invalid.append(invalid_tool_call(name=name, args=text, id=call_id, error=error))
    return {"tool_calls": calls, "invalid_tool_calls": invalid}
