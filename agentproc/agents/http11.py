"""A lean HTTP/1.1 client on asyncio streams, for posting JSON to a model server.

A chat-completions request is one POST with a JSON body and one JSON answer;
a benchmark run sends thousands of them at once over a handful of servers. This
client does only that, cheaply: keep-alive connections pooled per event loop
and per origin (a second ``asyncio.run`` gets connections of its own), the
request written in one piece, the answer read by ``Content-Length``, chunks or
to the end of the connection. It sends no proxy, redirect or compression
machinery; :func:`proxied` says when a URL needs a proxy, and the caller then
uses a full client instead.

Failures are plain Python ones: :class:`ConnectionError` (refused, reset, or the
server hung up before the end of its answer), :class:`ProtocolError` (an answer
that is not HTTP). A connection that was mid-request when its task was
cancelled (a timeout) is closed, never reused. A pooled connection the server
closed just as a request went out on it (the keep-alive race every HTTP client
meets) costs nothing but a second try of that request on a fresh connection.
"""

from __future__ import annotations

import asyncio
import ssl
import urllib.parse
import urllib.request
import weakref
from dataclasses import dataclass
from functools import cache

_Connection = tuple[asyncio.StreamReader, asyncio.StreamWriter]
_POOLS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[Origin, list[_Connection]]] = (
    weakref.WeakKeyDictionary()
)
MAX_IDLE = 256
"""Idle connections kept per origin and event loop."""
HEAD_LIMIT = 1 << 16
"""Bytes a status line and its headers may take."""


class ProtocolError(ConnectionError):
    """The server answered with something that is not HTTP/1.x."""


class _Unanswered(ConnectionError):
    """The server closed the connection before a byte of its answer."""


@dataclass(frozen=True)
class Origin:
    """Where requests go: scheme, host and port."""

    scheme: str
    host: str
    port: int

    @property
    def host_header(self) -> str:
        default = 443 if self.scheme == "https" else 80
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.port == default else f"{host}:{self.port}"


@dataclass(frozen=True)
class Response:
    status: int
    headers: dict[str, str]
    """Header names in lower case; repeated headers joined with ``", "``."""
    body: bytes


def origin_of(url: str) -> tuple[Origin, str]:
    """The origin of an ``http(s)://`` URL and its path (no trailing slash).

    >>> origin_of("http://127.0.0.1:8000/v1/")
    (Origin(scheme='http', host='127.0.0.1', port=8000), '/v1')
    """
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"not an http(s) URL: {url!r}")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return Origin(parts.scheme, parts.hostname, port), parts.path.rstrip("/")


def proxied(url: str) -> bool:
    """Whether the environment routes ``url`` through a proxy (``HTTPS_PROXY`` and kin)."""
    parts = urllib.parse.urlsplit(url)
    proxies = urllib.request.getproxies()
    if parts.scheme not in proxies and "all" not in proxies:
        return False
    return not urllib.request.proxy_bypass(parts.hostname or "")


async def post(origin: Origin, path: str, head: bytes, body: bytes) -> Response:
    """POST ``body`` to ``path``; ``head`` holds the other header lines, each ending in CRLF."""
    request = b"".join(
        (
            f"POST {path} HTTP/1.1\r\nHost: {origin.host_header}\r\n".encode("latin-1"),
            head,
            b"Content-Length: %d\r\n\r\n" % len(body),
            body,
        )
    )
    idle = _idle(origin)
    conn = _reusable(idle)
    if conn is not None:
        try:
            return await _send(conn, request, idle)
        except (_Unanswered, ConnectionResetError, BrokenPipeError):
            pass  # the server closed the idle connection as the request went out: start afresh
    return await _send(await _connect(origin), request, idle)


async def _send(conn: _Connection, request: bytes, idle: list[_Connection]) -> Response:
    try:
        response, keep = await _exchange(conn, request)
    except BaseException:
        conn[1].close()  # a cancelled or failed exchange leaves the connection mid-answer
        raise
    if keep and len(idle) < MAX_IDLE:
        idle.append(conn)
    else:
        conn[1].close()
    return response


def _idle(origin: Origin) -> list[_Connection]:
    pools = _POOLS.setdefault(asyncio.get_running_loop(), {})
    return pools.setdefault(origin, [])


def _reusable(idle: list[_Connection]) -> _Connection | None:
    """An idle connection the server has not closed in the meantime."""
    while idle:
        reader, writer = idle.pop()
        if not reader.at_eof() and not writer.is_closing():
            return reader, writer
        writer.close()
    return None


async def _connect(origin: Origin) -> _Connection:
    if origin.scheme == "https":
        return await asyncio.open_connection(
            origin.host, origin.port, ssl=_tls(), server_hostname=origin.host, limit=HEAD_LIMIT
        )
    return await asyncio.open_connection(origin.host, origin.port, limit=HEAD_LIMIT)


@cache
def _tls() -> ssl.SSLContext:
    try:
        import certifi  # the CA bundle the rest of the Python HTTP world uses

        return ssl.create_default_context(cafile=certifi.where())
    except ImportError:  # pragma: no cover - certifi comes with httpx
        return ssl.create_default_context()


async def _exchange(conn: _Connection, request: bytes) -> tuple[Response, bool]:
    reader, writer = conn
    writer.write(request)
    await writer.drain()
    while True:
        status, version, headers = await _read_head(reader)
        if not 100 <= status < 200:  # an interim answer (100 Continue) is skipped
            break
    body, to_eof = await _read_body(reader, headers)
    keep = not to_eof and _keep_alive(version, headers.get("connection", ""))
    return Response(status, headers, body), keep


async def _read_head(reader: asyncio.StreamReader) -> tuple[int, str, dict[str, str]]:
    try:
        raw = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as exc:
        kind = ConnectionError if exc.partial else _Unanswered
        raise kind("the server closed the connection without an answer") from exc
    except asyncio.LimitOverrunError as exc:
        raise ProtocolError("the answer's headers are too long") from exc
    lines = raw.decode("latin-1").split("\r\n")
    version, _, rest = lines[0].partition(" ")
    code = rest[:3]
    if not version.startswith("HTTP/1.") or not code.isdigit():
        raise ProtocolError(f"not an HTTP answer: {lines[0][:80]!r}")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if not line:
            continue
        name, sep, value = line.partition(":")
        if not sep:
            raise ProtocolError(f"a malformed header line: {line[:80]!r}")
        key, value = name.strip().lower(), value.strip()
        headers[key] = f"{headers[key]}, {value}" if key in headers else value
    return int(code), version, headers


async def _read_body(reader: asyncio.StreamReader, headers: dict[str, str]) -> tuple[bytes, bool]:
    """The body, and whether it ran to the end of the connection."""
    try:
        if "chunked" in headers.get("transfer-encoding", "").lower():
            return await _read_chunks(reader), False
        length = headers.get("content-length")
        if length is not None:
            if not length.isdigit():
                raise ProtocolError(f"a malformed Content-Length: {length!r}")
            return await reader.readexactly(int(length)), False
        return await reader.read(), True
    except asyncio.IncompleteReadError as exc:
        raise ConnectionError(
            "the server closed the connection in the middle of its answer"
        ) from exc


async def _read_chunks(reader: asyncio.StreamReader) -> bytes:
    parts: list[bytes] = []
    while True:
        line = await reader.readuntil(b"\r\n")
        size_text = line.split(b";", 1)[0].strip()
        try:
            size = int(size_text, 16)
        except ValueError:
            raise ProtocolError(f"a malformed chunk size: {size_text[:20]!r}") from None
        if size == 0:
            while await reader.readuntil(b"\r\n") != b"\r\n":  # trailers
                pass
            return b"".join(parts)
        parts.append(await reader.readexactly(size))
        await reader.readexactly(2)


def _keep_alive(version: str, connection: str) -> bool:
    tokens = {t.strip() for t in connection.lower().split(",")}
    if version == "HTTP/1.0":
        return "keep-alive" in tokens
    return "close" not in tokens
