"""A scripted MCP client for the serve-mcp tests: the same calls over any transport."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from helpers import ORACLE, step, submit, tiny_scenario

from agentproc.workflow import Scenario

ROOT = Path(__file__).resolve().parents[1]

FAITHFUL = ORACLE
"""Scenario 1: every step, right, then the answer."""
SKIPPED_AND_HALLUCINATED = [
    step(1),
    step(3, S4=15),  # step 2 skipped
    ("step_9", {"S1": 2}),  # no such tool
    ("step_2", {"S3": "five", "S2": 3}),  # malformed: fails the schema
    submit(3),
]
"""Scenario 2: a skipped step, a hallucinated tool, malformed arguments, an answer."""


def two_scenarios(folder: Path) -> Path:
    """A ``.jsonl`` of two copies of the tiny scenario (ids ``tiny`` and ``tiny-b``)."""
    first = tiny_scenario()
    second = first.model_copy(update={"id": "tiny-b"})
    path = folder / "two.jsonl"
    path.write_text(
        "".join(json.dumps(s.model_dump(mode="json")) + "\n" for s in (first, second)),
        encoding="utf-8",
    )
    return path


def scenarios() -> list[Scenario]:
    first = tiny_scenario()
    return [first, first.model_copy(update={"id": "tiny-b"})]


async def drive(session: Any) -> dict[str, Any]:
    """Play the script on an initialized ``ClientSession``; what the client saw."""
    seen: dict[str, Any] = {}
    tools = await session.list_tools()
    seen["tools"] = [t.name for t in tools.tools]
    seen["schema"] = next(wire(t)["inputSchema"] for t in tools.tools if t.name == "step_1")
    prompt = await session.get_prompt("procedure")
    seen["prompt"] = prompt.messages[0].content.text
    resource = await session.read_resource("agentproc://procedure")
    seen["resource"] = resource.contents[0].text
    seen["results"] = []
    for name, args in FAITHFUL:
        seen["results"].append(wire(await session.call_tool(name, args))["isError"])
    moved = await session.call_tool("next_scenario", {})
    seen["moved"] = moved.content[0].text
    for name, args in SKIPPED_AND_HALLUCINATED:
        seen["results"].append(wire(await session.call_tool(name, args))["isError"])
    done = await session.call_tool("next_scenario", {})
    seen["done"] = done.content[0].text
    seen["after"] = (await session.call_tool("step_1", {"S1": 2, "S2": 3})).content[0].text
    return seen


def wire(obj: Any) -> dict[str, Any]:
    """An SDK object as sent on the wire (camelCase: the SDK's 1.x and 2.x agree there)."""
    return dict(obj.model_dump(mode="json", by_alias=True))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve_argv(suite: Path, run: Path, *extra: str) -> list[str]:
    """The command line of a ``serve-mcp`` process."""
    return [sys.executable, "-m", "agentproc", "serve-mcp", str(suite), "--out", str(run), *extra]


def server_env() -> dict[str, str]:
    """This checkout's agentproc, for a server process."""
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def wait_listening(port: int, server: subprocess.Popen[str]) -> None:
    """Until the server process listens on ``port`` (it failing is an error)."""
    for _ in range(300):
        if server.poll() is not None:
            raise RuntimeError(f"the server exited {server.returncode}: {server.stderr}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise TimeoutError(f"nothing listens on {port}")


@contextlib.asynccontextmanager
async def http_session(port: int, name: str) -> AsyncIterator[Any]:
    """An initialized SDK client session over streamable HTTP, named ``name``."""
    from mcp import ClientSession, types
    from mcp.client.streamable_http import streamable_http_client

    info = types.Implementation(name=name, version="1")
    async with (
        streamable_http_client(f"http://127.0.0.1:{port}/mcp") as (read, write, *_),
        ClientSession(read, write, client_info=info) as session,
    ):
        await session.initialize()
        yield session
