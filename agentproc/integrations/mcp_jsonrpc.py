"""Every message a client sends ``serve-mcp`` checked against JSON-RPC 2.0 before the
SDK sees it, over either transport.

The SDK was measured and fell short here: on a client's malformed request, 1.x answers
nothing at all (``params`` that is not an object: the client waits forever), answers an
unknown method with -32602 instead of -32601, and logs a traceback for a line that is not
JSON. So a message that is not JSON is answered -32700, one that is not a JSON-RPC message
-32600, a request whose ``params`` is not an object -32602, a request of a method the
server does not answer -32601; a malformed notification is dropped (JSON-RPC answers no
notification). Serving goes on after each.

A message nested deeper than :data:`MAX_DEPTH` is refused before anything recurses into
it: one too deep for Python's JSON reader is answered -32700 (it cannot be read), one
that reads but nests past the limit -32600 (with its id when it has a valid one). The SDK
was measured here too: such a body got HTTP 500, and over stdio the reader stopped, so
the client waited forever for a reply.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from agentproc.integrations.mcp_compat import message

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602

MAX_DEPTH = 64
"""How deep a message's objects and arrays may nest (the message itself is level 1). A
tool call's arguments sit at level 4 (message, ``params``, ``arguments``, a value); the
SDK's own JSON reader stops at 200 levels, and Python's at about 1,000."""

Answers = Callable[[str], bool | None]
"""Whether the server answers a method (``None``: the SDK decides)."""


def check(line: bytes, answers: Answers) -> tuple[Any, dict[str, Any] | None]:
    """One line from the client: the JSON-RPC message to pass on (``None``: none), and
    the error reply to send instead (``None``: none)."""
    try:
        obj = json.loads(line)
    except RecursionError:
        return None, error(None, PARSE_ERROR, "Parse error: the JSON nests too deeply to read")
    except ValueError:
        return None, error(None, PARSE_ERROR, "Parse error: the line is not JSON")
    if not isinstance(obj, dict):
        return None, error(None, INVALID_REQUEST, "Invalid Request: not a JSON-RPC object")
    rid = obj.get("id")
    ok_id = isinstance(rid, str | int) and not isinstance(rid, bool)
    if too_deep(obj):
        why = f"Invalid Request: nested deeper than {MAX_DEPTH} levels"
        return None, error(rid if ok_id else None, INVALID_REQUEST, why)
    if obj.get("jsonrpc") != "2.0" or ("id" in obj and not ok_id):
        return None, error(rid if ok_id else None, INVALID_REQUEST, "Invalid Request")
    if "method" not in obj:
        if ("result" in obj) == ("error" in obj) or not ok_id:
            return None, error(rid if ok_id else None, INVALID_REQUEST, "Invalid Request")
        return _parsed(obj, rid)
    method, params = obj["method"], obj.get("params", {})
    if not isinstance(method, str):
        return None, error(rid if ok_id else None, INVALID_REQUEST, "Invalid Request")
    if not ok_id:  # a notification: never answered, a malformed one dropped
        return (None, None) if not isinstance(params, dict) else _parsed(obj, None)
    if answers(method) is False:
        return None, error(rid, METHOD_NOT_FOUND, f"Method not found: {method}")
    if not isinstance(params, dict):
        return None, error(rid, INVALID_PARAMS, "Invalid params: params must be an object")
    return _parsed(obj, rid)


def too_deep(value: Any) -> bool:
    """Whether ``value`` nests objects and arrays deeper than :data:`MAX_DEPTH` (walked
    with a stack of its own, never by recursion).

    >>> too_deep({"a": [[1]]}), too_deep(json.loads("[" * 64 + "]" * 64))
    (False, False)
    >>> too_deep(json.loads("[" * 65 + "]" * 65))
    True
    """
    stack = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, list):
            if level > MAX_DEPTH:
                return True
            stack.extend((child, level + 1) for child in item)
    return False


def _parsed(obj: dict[str, Any], rid: Any) -> tuple[Any, dict[str, Any] | None]:
    try:
        return message(obj), None
    except ValidationError:
        return None, (None if rid is None else error(rid, INVALID_REQUEST, "Invalid Request"))


def error(rid: Any, code: int, text: str) -> dict[str, Any]:
    """A JSON-RPC error reply."""
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": text}}


ASGI = Callable[[Any, Any, Any], Any]


def screened(app: ASGI, answers: Answers) -> ASGI:
    """The streamable-HTTP endpoint ``app``, with each POSTed message checked first: a
    malformed one is answered here (a JSON-RPC error, HTTP 400 when it has no id to answer
    to), a good one reaches ``app`` byte for byte."""

    async def endpoint(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await app(scope, receive, send)
            return
        body, more = b"", True
        while more:
            event = await receive()
            if event["type"] != "http.request":
                return  # the client left
            body, more = body + event.get("body", b""), event.get("more_body", False)
        reply = _screen(body, answers)
        if reply is not None:
            status = 400 if reply["id"] is None else 200
            data = json.dumps(reply, separators=(",", ":")).encode()
            headers = [(b"content-type", b"application/json")]
            await send({"type": "http.response.start", "status": status, "headers": headers})
            await send({"type": "http.response.body", "body": data})
            return
        replayed = False

        async def again() -> Any:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await app(scope, again, send)

    return endpoint


def _screen(body: bytes, answers: Answers) -> dict[str, Any] | None:
    """The error reply to a POSTed body, if it is one (a batch too: MCP has none)."""
    msg, reply = check(body, answers)
    if msg is None and reply is None:  # a malformed notification: accepted, dropped
        return None
    return reply
