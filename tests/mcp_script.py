"""A scripted MCP client for the serve-mcp tests: the same calls over any transport."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

from helpers import ORACLE, step, submit, tiny_scenario

from agentproc.workflow import Scenario

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
    seen["schema"] = next(t.inputSchema for t in tools.tools if t.name == "step_1")
    prompt = await session.get_prompt("procedure")
    seen["prompt"] = prompt.messages[0].content.text
    resource = await session.read_resource("agentproc://procedure")
    seen["resource"] = resource.contents[0].text
    seen["results"] = []
    for name, args in FAITHFUL:
        seen["results"].append((await session.call_tool(name, args)).isError)
    moved = await session.call_tool("next_scenario", {})
    seen["moved"] = moved.content[0].text
    for name, args in SKIPPED_AND_HALLUCINATED:
        seen["results"].append((await session.call_tool(name, args)).isError)
    done = await session.call_tool("next_scenario", {})
    seen["done"] = done.content[0].text
    seen["after"] = (await session.call_tool("step_1", {"S1": 2, "S2": 3})).content[0].text
    return seen


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
