"""The one place the MCP SDK's two low-level server APIs meet (``mcp`` 1.x and 2.x).

1.x registers handlers with decorators (``@server.list_tools()``) and reads the request's
session from ``server.request_context``; 2.x takes ``on_*`` handlers in the ``Server``
constructor, each called ``(ctx, params)`` and returning a result object, and its protocol
types are snake_case (they still accept the camelCase wire names, which is how
:mod:`~agentproc.integrations.mcp_server` builds them for both). Everything else the
server uses (``ServerSession``'s ``send_*_list_changed``, ``create_initialization_options``,
``Server.run`` over a pair of streams, ``StreamableHTTPSessionManager``) is the same.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from mcp import types
from mcp.server.lowlevel import Server
from mcp.shared.message import SessionMessage

V2 = not hasattr(Server, "list_tools")
"""Whether the installed SDK is 2.x (its ``Server`` has no decorators)."""


@dataclass(frozen=True)
class Peer:
    """The session a request came in on."""

    key: object
    """An object that lives exactly as long as the session (its connection)."""
    client: str | None
    """The client's ``clientInfo.name``, when it gave one."""
    session: Any
    """The SDK's ``ServerSession``: where ``list_changed`` notifications go."""


@dataclass(frozen=True)
class Handlers:
    """What the server answers, apart from the SDK's API."""

    list_tools: Callable[[Peer], list[types.Tool]]
    call_tool: Callable[[Peer, str, dict[str, Any] | None], Awaitable[types.CallToolResult]]
    list_prompts: Callable[[Peer], list[types.Prompt]]
    get_prompt: Callable[[Peer, str], types.GetPromptResult]
    list_resources: Callable[[Peer], list[types.Resource]]
    read_resource: Callable[[Peer, str], str]
    ended: Callable[[object], None]
    """A session has ended (its :attr:`Peer.key`)."""


def make_server(
    name: str, instructions: str, h: Handlers, version: str | None = None
) -> Server[Any]:
    """A low-level ``Server`` that answers with ``h`` on the installed SDK, saying
    ``version`` as its ``serverInfo.version`` (``None``: the SDK's own)."""
    server = _server_v2(name, instructions, h) if V2 else _server_v1(name, instructions, h)
    if version is not None:
        server.version = version  # both lines read it when they answer ``initialize``
    return server


def message(obj: Any) -> SessionMessage:
    """A JSON-RPC message (already parsed JSON) as the SDK's session reads it."""
    if V2:
        adapter = types.jsonrpc_message_adapter  # type: ignore[attr-defined]
        return SessionMessage(adapter.validate_python(obj, by_name=False))
    return SessionMessage(types.JSONRPCMessage.model_validate(obj))


def wire(msg: SessionMessage) -> str:
    """A message the SDK sends, as one line of JSON."""
    if V2:
        return str(msg.message.model_dump_json(by_alias=True, exclude_unset=True))
    return str(msg.message.model_dump_json(by_alias=True, exclude_none=True))


def answers(server: Server[Any], method: str) -> bool | None:
    """Whether ``server`` answers requests of ``method``; ``None``: the SDK decides (2.x
    answers an unknown method with -32601 itself; 1.x with -32602)."""
    if V2:
        return None
    if method == "initialize":
        return True
    kinds = {_method_of(kind): kind for kind in server.request_handlers}
    return method in kinds


def _method_of(kind: type[Any]) -> str:
    return str(kind.model_fields["method"].default)


def _peer_v1(server: Server[Any]) -> Peer:
    ctx = server.request_context
    params = ctx.session.client_params
    client = params.clientInfo.name if params is not None else None
    return Peer(ctx.lifespan_context, client, ctx.session)


def _server_v1(name: str, instructions: str, h: Handlers) -> Server[Any]:
    @contextlib.asynccontextmanager
    async def session_life(_: Any) -> AsyncIterator[object]:
        # 1.x enters the lifespan once per session (``Server.run``): its object is the key
        key = object()
        try:
            yield key
        finally:
            h.ended(key)

    server: Server[Any] = Server(name, instructions=instructions, lifespan=session_life)

    @server.list_tools()  # type: ignore[untyped-decorator,no-untyped-call,misc,unused-ignore]
    async def list_tools() -> list[types.Tool]:
        return h.list_tools(_peer_v1(server))

    @server.call_tool(validate_input=False)  # type: ignore[untyped-decorator,misc,unused-ignore]
    async def call_tool(tool: str, arguments: dict[str, Any] | None) -> types.CallToolResult:
        return await h.call_tool(_peer_v1(server), tool, arguments)

    @server.list_prompts()  # type: ignore[untyped-decorator,no-untyped-call,misc,unused-ignore]
    async def list_prompts() -> list[types.Prompt]:
        return h.list_prompts(_peer_v1(server))

    @server.get_prompt()  # type: ignore[untyped-decorator,no-untyped-call,misc,unused-ignore]
    async def get_prompt(prompt: str, _: dict[str, str] | None) -> types.GetPromptResult:
        return h.get_prompt(_peer_v1(server), prompt)

    @server.list_resources()  # type: ignore[untyped-decorator,no-untyped-call,misc,unused-ignore]
    async def list_resources() -> list[types.Resource]:
        return h.list_resources(_peer_v1(server))

    @server.read_resource()  # type: ignore[untyped-decorator,no-untyped-call,misc,unused-ignore]
    async def read_resource(uri: Any) -> str:
        return h.read_resource(_peer_v1(server), str(uri))

    return server


def _server_v2(name: str, instructions: str, h: Handlers) -> Server[Any]:
    def _peer_v2(ctx: Any) -> Peer:
        session = ctx.session  # one per request; the connection is the session's own
        params = session.client_params
        key = getattr(session, "_connection", session)
        if isinstance(getattr(key, "state", None), dict) and "agentproc" not in key.state:
            key.state["agentproc"] = True  # its teardown (the session's end) tells the run
            key.exit_stack.callback(h.ended, key)
        return Peer(key, params.client_info.name if params is not None else None, session)

    async def list_tools(ctx: Any, _: Any) -> Any:
        return types.ListToolsResult(tools=h.list_tools(_peer_v2(ctx)))

    async def call_tool(ctx: Any, params: Any) -> Any:
        return await h.call_tool(_peer_v2(ctx), params.name, params.arguments)

    async def list_prompts(ctx: Any, _: Any) -> Any:
        return types.ListPromptsResult(prompts=h.list_prompts(_peer_v2(ctx)))

    async def get_prompt(ctx: Any, params: Any) -> Any:
        return h.get_prompt(_peer_v2(ctx), params.name)

    async def list_resources(ctx: Any, _: Any) -> Any:
        return types.ListResourcesResult(resources=h.list_resources(_peer_v2(ctx)))

    async def read_resource(ctx: Any, params: Any) -> Any:
        text = h.read_resource(_peer_v2(ctx), str(params.uri))
        contents = types.TextResourceContents(uri=params.uri, mimeType="text/plain", text=text)
        return types.ReadResourceResult(contents=[contents])

    make: Any = Server
    server: Server[Any] = make(
        name,
        instructions=instructions,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
    )
    return server
