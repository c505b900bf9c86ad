"""The local chat model's prompt and reply format (:mod:`agentproc.agents.local`).

Rendering. SmolLM2's chat template knows only system, user and assistant turns,
so the conversation is rendered into those (:func:`render_chat`):

- the bound tools are listed in the system message, one line each
  (``step_1(S1: number, S2: number): <description>``), followed by the reply
  format;
- an assistant tool call is the JSON the model itself emits,
  ``{"name": "step_3", "arguments": {"S4": 1.5, "S3": 0.5}}``, and an assistant
  text reply is ``{"content": "..."}``;
- a tool result is a user turn ``Result of step_3: S5 = 1.000``.

Decoding. The reply is constrained by a JSON schema compiled to a grammar
(:func:`reply_schema`): an ``anyOf`` with one object per tool (its
name as a ``const``, its ``parameters`` schema as ``arguments``) plus
``{"content": string}``. Every reply therefore parses as a call of an offered
tool with schema-valid arguments, or as a text answer; only a reply cut off by
``max_tokens`` does not parse, and it comes back as raw text.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ChatMessage, SystemMessage, ToolMessage

from agentproc.runs import text_of

# --- rendering ---------------------------------------------------------------

REPLY_FORMAT = (
    "Reply with one JSON object and nothing else:\n"
    '{"name": "<tool name>", "arguments": {"<argument>": <value>, ...}} to call a tool, or\n'
    '{"content": "<text>"} to reply without calling a tool.'
)


def _signature(function: dict[str, Any]) -> str:
    props = function.get("parameters", {}).get("properties", {})
    args = ", ".join(
        f"{k}: {v.get('type', 'any')}" if isinstance(v, dict) else k for k, v in props.items()
    )
    return f"{function['name']}({args})"


def tool_block(tools: Sequence[dict[str, Any]], *, describe: bool = True) -> str:
    """The system-message text that lists the tools and the reply format."""
    lines = []
    for tool in tools:
        function = tool["function"]
        description = function.get("description", "")
        line = _signature(function)
        lines.append(f"{line}: {description}" if describe and description else line)
    listing = "You can call these tools:\n" + "\n".join(lines) + "\n" if lines else ""
    return listing + REPLY_FORMAT


def render_chat(
    messages: Sequence[BaseMessage], tools: Sequence[dict[str, Any]], *, describe_tools: bool = True
) -> list[dict[str, str]]:
    """The conversation as system/user/assistant turns for SmolLM2's chat template.

    >>> from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
    >>> call = {"name": "step_1", "args": {"S1": 2}, "id": "c0", "type": "tool_call"}
    >>> turns = render_chat([HumanMessage("go"), AIMessage("", tool_calls=[call]),
    ...                      ToolMessage("S3 = 4", tool_call_id="c0")], [])
    >>> [t["role"] for t in turns]
    ['system', 'user', 'assistant', 'user']
    >>> turns[2]["content"], turns[3]["content"]
    ('{"name": "step_1", "arguments": {"S1": 2}}', 'Result of step_1: S3 = 4')
    """
    block = tool_block(tools, describe=describe_tools)
    turns: list[dict[str, str]] = []
    names: dict[str, str] = {}
    for i, m in enumerate(messages):
        text = text_of(m.content)
        if isinstance(m, SystemMessage):
            content = f"{text}\n\n{block}" if i == 0 and text else block if i == 0 else text
            turns.append({"role": "system", "content": content})
        elif isinstance(m, AIMessage):
            lines = [json.dumps({"content": text})] if text or not m.tool_calls else []
            for call in m.tool_calls:
                names[call.get("id") or ""] = call["name"]
                lines.append(json.dumps({"name": call["name"], "arguments": call["args"]}))
            turns.append({"role": "assistant", "content": "\n".join(lines)})
        elif isinstance(m, ToolMessage):
            name = names.get(m.tool_call_id) or m.name or "the tool"
            turns.append({"role": "user", "content": f"Result of {name}: {text}"})
        elif isinstance(m, ChatMessage) and m.role in ("system", "assistant"):
            turns.append({"role": m.role, "content": text})
        else:
            turns.append({"role": "user", "content": text})
    if not turns or turns[0]["role"] != "system":
        # Without a system turn the template inserts its own ("You are SmolLM ...").
        turns.insert(0, {"role": "system", "content": block})
    return turns


# --- output schema -------------------------------------------------------------

_CONTENT = {
    "type": "object",
    "properties": {"content": {"type": "string"}},
    "required": ["content"],
    "additionalProperties": False,
}


def reply_schema(tools: Sequence[dict[str, Any]], *, allow_content: bool = True) -> dict[str, Any]:
    """The JSON schema every reply satisfies: a call of one offered tool, or a text answer."""
    alternatives = [
        {
            "type": "object",
            "properties": {
                "name": {"const": t["function"]["name"]},
                "arguments": t["function"].get("parameters")
                or {"type": "object", "properties": {}},
            },
            "required": ["name", "arguments"],
            "additionalProperties": False,
        }
        for t in tools
    ]
    if allow_content or not alternatives:
        alternatives.append(_CONTENT)
    return {"anyOf": alternatives}
