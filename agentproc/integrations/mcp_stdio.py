"""``serve-mcp``'s standard input and output, with every request checked against JSON-RPC
2.0 before the SDK sees it.

The SDK's own stdio transport was measured and fell short on two counts. It reads
standard input in a worker thread that a cancellation cannot stop, so Ctrl-C or SIGTERM
waited for the client to close stdin. And on a client's malformed request, 1.x answers
nothing at all (``params`` that is not an object: the client waits forever), answers an
unknown method with -32602 instead of -32601, and logs a traceback for a line that is not
JSON. Here standard input is read by a daemon thread (``os.read``: no lock left held at
exit) and every line is checked first: a line that is not JSON is answered -32700, one that
is not a JSON-RPC message -32600, a request whose ``params`` is not an object -32602, a
request of a method the server does not answer -32601; a malformed notification is dropped
(JSON-RPC answers no notification). Serving goes on after each.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from agentproc.integrations.mcp_compat import message, wire

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602

Answers = Callable[[str], bool | None]
"""Whether the server answers a method (``None``: the SDK decides)."""


def check(line: bytes, answers: Answers) -> tuple[Any, dict[str, Any] | None]:
    """One line from the client: the JSON-RPC message to pass on (``None``: none), and
    the error reply to send instead (``None``: none)."""
    try:
        obj = json.loads(line)
    except ValueError:
        return None, error(None, PARSE_ERROR, "Parse error: the line is not JSON")
    if not isinstance(obj, dict):
        return None, error(None, INVALID_REQUEST, "Invalid Request: not a JSON-RPC object")
    rid = obj.get("id")
    ok_id = isinstance(rid, str | int) and not isinstance(rid, bool)
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


def _parsed(obj: dict[str, Any], rid: Any) -> tuple[Any, dict[str, Any] | None]:
    try:
        return message(obj), None
    except ValidationError:
        return None, (None if rid is None else error(rid, INVALID_REQUEST, "Invalid Request"))


def error(rid: Any, code: int, text: str) -> dict[str, Any]:
    """A JSON-RPC error reply."""
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": text}}


@contextlib.asynccontextmanager
async def stdio_streams(answers: Answers) -> AsyncIterator[tuple[Any, Any]]:
    """The server's read and write streams over this process's stdin and stdout."""
    loop = asyncio.get_running_loop()
    to_server, read = anyio.create_memory_object_stream[SessionMessage | Exception](16)
    write, from_server = anyio.create_memory_object_stream[SessionMessage](16)
    out = sys.stdout.buffer

    def send(line: str) -> None:
        out.write(line.encode("utf-8") + b"\n")
        out.flush()

    async def take(line: bytes) -> None:
        msg, reply = check(line, answers)
        if reply is not None:
            send(json.dumps(reply, separators=(",", ":")))
        if msg is not None:
            with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                await to_server.send(msg)

    async def eof() -> None:
        await to_server.aclose()

    def pump() -> None:  # a daemon thread: a blocked read never holds the process
        pending = b""
        with contextlib.suppress(Exception):
            while chunk := os.read(0, 65536):
                *lines, pending = (pending + chunk).split(b"\n")
                for line in filter(bytes.strip, lines):
                    asyncio.run_coroutine_threadsafe(take(line), loop).result()
            if pending.strip():
                asyncio.run_coroutine_threadsafe(take(pending), loop).result()
        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(eof(), loop).result()

    async def writer() -> None:
        async with from_server:
            async for msg in from_server:
                with contextlib.suppress(OSError):  # the client left
                    send(wire(msg))

    threading.Thread(target=pump, name="agentproc-stdin", daemon=True).start()
    async with anyio.create_task_group() as tg:
        tg.start_soon(writer)
        try:
            yield read, write
        finally:
            tg.cancel_scope.cancel()
