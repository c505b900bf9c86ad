"""``serve-mcp``'s standard input and output, every line checked first
(:mod:`~agentproc.integrations.mcp_jsonrpc`).

The SDK's own stdio transport was measured and fell short: it reads standard input in a
worker thread that a cancellation cannot stop, so Ctrl-C or SIGTERM waited for the client
to close stdin, and it passes a malformed line on for the SDK to mishandle. Here standard
input is read by a daemon thread (``os.read``: no lock left held at exit).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import threading
from collections.abc import AsyncIterator
from typing import Any

import anyio
from mcp.shared.message import SessionMessage

from agentproc.integrations.mcp_compat import wire
from agentproc.integrations.mcp_jsonrpc import Answers, check


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
