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
import socket
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
from mcp import types
from mcp.server.lowlevel import NotificationOptions, Server

from agentproc.integrations import mcp_compat
from agentproc.integrations.mcp_compat import Handlers, Peer
from agentproc.integrations.mcp_jsonrpc import screened
from agentproc.integrations.serving import NEXT_SCENARIO, ServedRun, ServedRuns
from agentproc.integrations.shutdown import Shutdown

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


def build_server(runs: ServedRuns) -> Server[Any]:
    """The MCP server over ``runs``: each session its own run, one scenario open at a time."""

    def run(peer: Peer) -> ServedRun:
        return runs.session(peer.key, peer.client)

    async def call_tool(peer: Peer, name: str, arguments: dict[str, Any] | None) -> Any:
        served = run(peer)
        if name == NEXT_SCENARIO:
            text, error = served.next_scenario(), False
            await _changed(peer.session)
        else:
            reply = served.call(name, arguments)
            text, error = reply.text, reply.error
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)], isError=error
        )

    def get_prompt(peer: Peer, name: str) -> types.GetPromptResult:
        if name != PROMPT:
            raise ValueError(f"unknown prompt {name!r}; the prompt is {PROMPT!r}")
        served = run(peer)
        text = types.TextContent(type="text", text=served.prompt)
        return types.GetPromptResult(
            description=_about(served), messages=[types.PromptMessage(role="user", content=text)]
        )

    def list_resources(peer: Peer) -> list[types.Resource]:
        about = _about(run(peer))
        resource = {"uri": PROCEDURE_URI, "name": PROMPT, "description": about}
        return [types.Resource.model_validate({**resource, "mimeType": "text/plain"})]

    def read_resource(peer: Peer, uri: str) -> str:
        if uri != PROCEDURE_URI:
            raise ValueError(f"unknown resource {uri}; the resource is {PROCEDURE_URI}")
        return run(peer).prompt

    handlers = Handlers(
        list_tools=lambda peer: [*(_tool(t) for t in run(peer).tools), NEXT_TOOL],
        call_tool=call_tool,
        list_prompts=lambda peer: [types.Prompt(name=PROMPT, description=_about(run(peer)))],
        get_prompt=get_prompt,
        list_resources=list_resources,
        read_resource=read_resource,
        ended=runs.end,
    )
    return mcp_compat.make_server("agentproc", _instructions(), handlers, package_version())


def package_version() -> str:
    """agentproc's installed version: what ``serverInfo.version`` says (not the SDK's)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("agentproc")
    except PackageNotFoundError:  # pragma: no cover - run from a source tree
        return "unknown"


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


async def _changed(session: Any) -> None:
    """Tell the client the tools, prompt and resource changed (a client that left or does
    not listen is no fault of the run)."""
    with contextlib.suppress(Exception):
        await session.send_tool_list_changed()
        await session.send_prompt_list_changed()
        await session.send_resource_list_changed()


def _quiet() -> None:
    """A call of a tool that is not offered is the agent's mistake, labelled in the run
    file; a client that leaves mid-request is no fault of the server: the SDK's warnings
    about either would only clutter the server's log."""
    for name in ("mcp.server.lowlevel.server", "mcp.server.runner", "mcp.shared.session"):
        logging.getLogger(name).setLevel(logging.CRITICAL)


def _options(server: Server[Any]) -> Any:
    changes = NotificationOptions(prompts_changed=True, resources_changed=True, tools_changed=True)
    return server.create_initialization_options(changes)


async def serve_stdio(runs: ServedRuns, shutdown: Shutdown) -> None:
    """Serve over standard input and output until the client closes them, or a signal
    (:class:`~agentproc.integrations.shutdown.Shutdown` says which)."""
    from agentproc.integrations.mcp_stdio import stdio_streams

    _quiet()
    server = build_server(runs)
    answers: Callable[[str], bool | None] = lambda m: mcp_compat.answers(server, m)  # noqa: E731
    with anyio.CancelScope() as scope, shutdown.serving(scope.cancel):
        async with stdio_streams(answers) as (read, write):
            await server.run(read, write, _options(server))


def http_app(runs: ServedRuns) -> Any:
    """The Starlette app serving ``runs`` over streamable HTTP at ``/mcp``."""
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from mcp.server.transport_security import TransportSecuritySettings
    from starlette.applications import Starlette
    from starlette.routing import Route

    _quiet()
    server = build_server(runs)
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

    endpoint = screened(manager.handle_request, lambda m: mcp_compat.answers(server, m))

    class Endpoint:  # an ASGI app: Starlette routes to it without a redirect to /mcp/
        async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
            await endpoint(scope, receive, send)

    routes = [Route("/mcp", endpoint=Endpoint())]
    return Starlette(routes=routes, lifespan=lifespan)


def listen(port: int) -> socket.socket:
    """A socket bound to ``127.0.0.1:port`` (``OSError``: the port is taken, or not ours)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    return sock


async def serve_http(runs: ServedRuns, sock: socket.socket, shutdown: Shutdown) -> None:
    """Serve over streamable HTTP on the bound ``sock`` until a signal."""
    import uvicorn

    class Server(uvicorn.Server):  # the signals are ours: the open episodes come first
        def install_signal_handlers(self) -> None:
            pass

        @contextlib.contextmanager
        def capture_signals(self) -> Any:
            yield

    app = http_app(runs)
    config = uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=1)
    server = Server(config)
    with shutdown.serving(lambda: setattr(server, "should_exit", True)):
        await server.serve(sockets=[sock])
