"""What the demo endpoint refuses, and how: a request it cannot read gets an error in
OpenAI's shape (400, 411 or 413) naming what is wrong, never a crashed handler thread.

A body is read only when its ``Content-Length`` is a whole number up to :data:`MAX_BODY`;
it is parsed by :func:`agentproc.jsonio.loads` (a number of thousands of digits, ``NaN``
or bytes that are not UTF-8 are refused there) and may nest at most :data:`MAX_DEPTH`
deep; a chat completion's fields are checked for the types the planners read
(:func:`check_chat`), each refusal naming the field (``messages[2].tool_calls[0]``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentproc.jsonio import loads

MAX_BODY = 32 << 20
"""Bytes of a request body read at most (a long procedure's conversation is well under 1 MB)."""
MAX_DEPTH = 64
"""How deep a body's objects and arrays may nest (a chat request nests about 8 deep)."""
MAX_DIGITS = 60
"""Digits of a number a message may give a variable (``S1 = ...``) that the planners read."""


class BadRequest(Exception):
    """A request the endpoint will not read: the status to answer and why."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def content_length(headers: Mapping[str, str]) -> int:
    """The body's length by its headers: 0 without one; a :class:`BadRequest` for a
    chunked body (411), a length that is not a whole number of at least 0 (400) or one
    above :data:`MAX_BODY` (413)."""
    if "chunked" in (headers.get("transfer-encoding") or "").lower():
        raise BadRequest(411, "a chunked body is not supported: send a Content-Length")
    text = (headers.get("content-length") or "0").strip()
    if not (text.isascii() and text.isdigit()) or len(text) > 20:
        raise BadRequest(400, f"Content-Length must be a whole number of bytes (not {text[:20]!r})")
    length = int(text)
    if length > MAX_BODY:
        raise BadRequest(413, f"the body is {length:,} bytes; at most {MAX_BODY:,} are read")
    return length


def parse_body(raw: bytes) -> Any:
    """The JSON of a body (``None`` for none); a :class:`BadRequest` (400) saying why not."""
    if not raw:
        return None
    try:
        body = loads(raw)
    except ValueError as exc:
        raise BadRequest(400, f"the body is not valid JSON ({exc})") from None
    if _depth(body) > MAX_DEPTH:
        raise BadRequest(400, f"the body nests deeper than {MAX_DEPTH} levels")
    return body


def _depth(value: Any) -> int:
    """How deep ``value`` nests, found without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, depth)
        if depth > MAX_DEPTH:
            break
        stack.extend((child, depth + 1) for child in children)
    return deepest


def check_chat(body: Any) -> None:
    """A :class:`BadRequest` (400) naming the first field of a chat-completion body that is
    not of the type the endpoint reads: ``messages`` a list of objects (``role`` and
    ``tool_call_id`` strings, ``content`` text, ``null`` or a list of parts (strings, or
    objects whose ``text`` is a string),
    ``tool_calls`` a list of objects whose ``function`` is an object with a string
    ``name``), ``tools`` a list of objects (``function`` an object: ``name`` a string,
    ``description`` a string or ``null``, ``parameters`` an object whose ``properties``
    is an object)."""
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        raise BadRequest(400, "the body must be a JSON object with messages")
    for i, msg in enumerate(body["messages"]):
        at = f"messages[{i}]"
        _want(msg, dict, at, "an object")
        for key in ("role", "tool_call_id", "name"):
            _want(msg.get(key), (str, type(None)), f"{at}.{key}", "a string")
        _want(msg.get("content"), (str, list, type(None)), f"{at}.content", "text or a list")
        for j, part in enumerate(_list(msg.get("content"), f"{at}.content", str)):
            _want(part, (str, dict), f"{at}.content[{j}]", "a string or an object")
            if isinstance(part, dict):
                _want(part.get("text"), (str, type(None)), f"{at}.content[{j}].text", "a string")
        for j, call in enumerate(_list(msg.get("tool_calls"), f"{at}.tool_calls")):
            where = f"{at}.tool_calls[{j}]"
            _want(call, dict, where, "an object")
            _want(call.get("id"), (str, type(None)), f"{where}.id", "a string")
            _function(call.get("function"), f"{where}.function")
    for i, tool in enumerate(_list(body.get("tools"), "tools")):
        _want(tool, dict, f"tools[{i}]", "an object")
        fn = _function(tool.get("function"), f"tools[{i}].function")
        _want(
            fn.get("description"), (str, type(None)), f"tools[{i}].function.description", "a string"
        )
        params = fn.get("parameters")
        _want(params, (dict, type(None)), f"tools[{i}].function.parameters", "an object")
        props = (params or {}).get("properties")
        where = f"tools[{i}].function.parameters.properties"
        _want(props, (dict, type(None)), where, "an object")


def _function(fn: Any, at: str) -> dict[str, Any]:
    _want(fn, (dict, type(None)), at, "an object")
    fn = fn or {}
    _want(fn.get("name"), (str, type(None)), f"{at}.name", "a string")
    return fn  # type: ignore[no-any-return]


def _list(value: Any, at: str, other: type | None = None) -> list[Any]:
    """``value`` as a list (``None``: empty; ``other``, a type also allowed: empty too)."""
    if other is not None and isinstance(value, other):
        return []
    _want(value, (list, type(None)), at, "a list")
    return value or []  # type: ignore[no-any-return]


def _want(value: Any, kinds: type | tuple[type, ...], at: str, what: str) -> None:
    if not isinstance(value, kinds) or isinstance(value, bool):
        raise BadRequest(400, f"{at}: expected {what}, not {_kind(value)}")


def _kind(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}
    if value is None:
        return "null"
    return names.get(type(value), "a number")


def number_text(value: str) -> str:
    """``value`` (a number a message gives a variable) if the planners can read it; a
    :class:`BadRequest` for one of more than :data:`MAX_DIGITS` characters."""
    if len(value) > MAX_DIGITS:
        raise BadRequest(
            400, f"a number of {len(value):,} characters in messages (at most {MAX_DIGITS})"
        )
    return value
