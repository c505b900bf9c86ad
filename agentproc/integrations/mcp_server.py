"""``agentproc serve-mcp``: a suite's scenarios as an MCP tool server (extra ``[mcp]``).

Built on the official ``mcp`` SDK's low-level :class:`mcp.server.lowlevel.Server`, not
FastMCP: the tool set changes with each scenario and its JSON Schemas are the scenario's
own (FastMCP derives schemas from Python signatures), and arguments must reach the mock
tools as sent (``validate_input=False``) so that a malformed call is labelled like any
other agent mistake instead of being refused by the SDK before the monitor sees it.

What a client sees: the open scenario's tools (the step tools and ``submit_answer``, or a
variant's tool set) plus :data:`~agentproc.integrations.serving.NEXT_SCENARIO`; the
procedure as the prompt ``procedure`` and the resource :data:`PROCEDURE_URI`. Moving on
changes the tools, the prompt and the resource, and the server says so with
``list_changed`` notifications.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

from mcp import types
from mcp.server.lowlevel import NotificationOptions, Server

from agentproc.integrations.serving import NEXT_SCENARIO, ServedRun

PROCEDURE_URI = "agentproc://procedure"
"""The resource that holds the open scenario's procedure (plain text)."""
PROMPT = "procedure"
"""The prompt that holds the open scenario's procedure."""
NEXT_TOOL = types.Tool(
    name=NEXT_SCENARIO,
    description=(
        "Finish the current scenario (its calls are scored as they are) and open the next "
        "one: the tools change and the reply holds the new procedure."
    ),
    inputSchema={"type": "object", "properties": {}, "additionalProperties": False},
)


def build_server(run: ServedRun) -> Server[Any, Any]:
    """The MCP server over ``run`` (one scenario open at a time)."""
    server: Server[Any, Any] = Server("agentproc", instructions=_instructions())

    def client_name() -> None:
        params = server.request_context.session.client_params
        run.name_client(params.clientInfo.name if params is not None else None)

    @server.list_tools()  # type: ignore[no-untyped-call,untyped-decorator]
    async def list_tools() -> list[types.Tool]:
        return [*(_tool(t) for t in run.tools), NEXT_TOOL]

    @server.call_tool(validate_input=False)  # type: ignore[untyped-decorator]
    async def call_tool(name: str, arguments: dict[str, Any] | None) -> types.CallToolResult:
        client_name()
        if name == NEXT_SCENARIO:
            text, error = run.next_scenario(), False
            await _changed(server)
        else:
            reply = run.call(name, arguments)
            text, error = reply.text, reply.error
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)], isError=error
        )

    @server.list_prompts()  # type: ignore[no-untyped-call,untyped-decorator]
    async def list_prompts() -> list[types.Prompt]:
        return [types.Prompt(name=PROMPT, description=_about(run))]

    @server.get_prompt()  # type: ignore[no-untyped-call,untyped-decorator]
    async def get_prompt(name: str, arguments: dict[str, str] | None) -> types.GetPromptResult:
        if name != PROMPT:
            raise ValueError(f"unknown prompt {name!r}; the prompt is {PROMPT!r}")
        text = types.TextContent(type="text", text=run.prompt)
        return types.GetPromptResult(
            description=_about(run), messages=[types.PromptMessage(role="user", content=text)]
        )

    @server.list_resources()  # type: ignore[no-untyped-call,untyped-decorator]
    async def list_resources() -> list[types.Resource]:
        return [
            types.Resource(
                uri=PROCEDURE_URI,  # type: ignore[arg-type]
                name=PROMPT,
                description=_about(run),
                mimeType="text/plain",
            )
        ]

    @server.read_resource()  # type: ignore[no-untyped-call,untyped-decorator]
    async def read_resource(uri: Any) -> str:
        if str(uri) != PROCEDURE_URI:
            raise ValueError(f"unknown resource {uri}; the resource is {PROCEDURE_URI}")
        return run.prompt

    return server


def _instructions() -> str:
    return (
        "Each scenario is a procedure to execute with the tools offered. Read it from the "
        f"prompt {PROMPT!r} (or the resource {PROCEDURE_URI}), call the tools, submit the "
        f"answer, then call {NEXT_SCENARIO} to move to the next scenario."
    )


def _about(run: ServedRun) -> str:
    return f"the procedure of scenario {run.scenario_id or '(none: the run is complete)'}"


def _tool(tool: dict[str, Any]) -> types.Tool:
    fn = tool["function"]
    return types.Tool(
        name=fn["name"], description=fn.get("description"), inputSchema=fn["parameters"]
    )


async def _changed(server: Server[Any, Any]) -> None:
    """Tell the client the tools, prompt and resource changed (a client that left or does
    not listen is no fault of the run)."""
    session = server.request_context.session
    with contextlib.suppress(Exception):
        await session.send_tool_list_changed()
        await session.send_prompt_list_changed()
        await session.send_resource_list_changed()


def _quiet() -> None:
    """A call of a tool that is not offered is the agent's mistake, labelled in the run
    file: the SDK's warning about it would only clutter the server's log."""
    logging.getLogger("mcp.server.lowlevel.server").setLevel(logging.ERROR)


def _options(server: Server[Any, Any]) -> Any:
    changes = NotificationOptions(prompts_changed=True, resources_changed=True, tools_changed=True)
    return server.create_initialization_options(changes)


async def serve_stdio(run: ServedRun) -> None:
    """Serve over standard input and output until the client closes them."""
    from mcp.server.stdio import stdio_server

    _quiet()
    server = build_server(run)
    async with stdio_server() as (read, write):
        await server.run(read, write, _options(server))


def http_app(run: ServedRun) -> Any:
    """The Starlette app serving ``run`` over streamable HTTP at ``/mcp``."""
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from mcp.server.transport_security import TransportSecuritySettings
    from starlette.applications import Starlette
    from starlette.routing import Route

    _quiet()
    server = build_server(run)
    # Only this machine may reach it, under its own names (DNS-rebinding protection).
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=["127.0.0.1:*", "localhost:*"],
        allowed_origins=["http://127.0.0.1:*", "http://localhost:*"],
    )
    manager = StreamableHTTPSessionManager(app=server, security_settings=security)

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        async with manager.run():
            yield

    class Endpoint:  # an ASGI app: Starlette routes to it without a redirect to /mcp/
        async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
            await manager.handle_request(scope, receive, send)

    routes = [Route("/mcp", endpoint=Endpoint())]
    return Starlette(routes=routes, lifespan=lifespan)


async def serve_http(run: ServedRun, port: int) -> None:
    """Serve over streamable HTTP on ``127.0.0.1:port`` until interrupted."""
    import uvicorn

    config = uvicorn.Config(http_app(run), host="127.0.0.1", port=port, log_level="warning")
    await uvicorn.Server(config).serve()
