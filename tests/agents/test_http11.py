"""The lean HTTP/1.1 client against real sockets on 127.0.0.1."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable

import pytest

from agentproc.agents import http11
from agentproc.agents.http11 import Origin, ProtocolError, origin_of, post, proxied

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter, int], Awaitable[None]]


class Server:
    """A socket server whose ``handler(reader, writer, connection_number)`` answers by hand."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.connections = 0
        self.requests: list[bytes] = []
        self._tasks: list[asyncio.Task[None]] = []

    async def __aenter__(self) -> Origin:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        return Origin("http", "127.0.0.1", port)

    async def __aexit__(self, *exc: object) -> None:
        self._server.close()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._tasks.append(asyncio.current_task())  # type: ignore[arg-type]
        self.connections += 1
        try:
            await self.handler(reader, writer, self.connections)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    async def read_request(self, reader: asyncio.StreamReader) -> bytes:
        head = await reader.readuntil(b"\r\n\r\n")
        length = next(
            int(line.split(b":", 1)[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        )
        body = await reader.readexactly(length)
        self.requests.append(head + body)
        return body


def answer(body: bytes, extra: bytes = b"") -> bytes:
    return b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n%s\r\n%s" % (len(body), extra, body)


HEAD = b"Content-Type: application/json\r\n"


def run(coro_fn: Callable[[], Awaitable[object]]) -> object:
    return asyncio.run(coro_fn())  # type: ignore[arg-type]


def test_keep_alive_reuses_one_connection_and_sends_the_request_whole() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        while True:
            body = await server.read_request(reader)
            writer.write(answer(b"echo:" + body))
            await writer.drain()

    server = Server(handler)

    async def main() -> list[bytes]:
        async with server as origin:
            first = await post(origin, "/v1/chat/completions", HEAD, b'{"a":1}')
            second = await post(origin, "/v1/chat/completions", HEAD, b'{"a":2}')
            return [first.body, second.body]

    assert run(main) == [b'echo:{"a":1}', b'echo:{"a":2}']
    assert server.connections == 1
    request = server.requests[0]
    assert request.startswith(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:")
    assert b"Content-Type: application/json\r\nContent-Length: 7\r\n\r\n" in request


def test_chunked_answers_with_trailers_and_repeated_headers() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        while True:
            await server.read_request(reader)
            writer.write(
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-A: 1\r\nx-a: 2\r\n\r\n"
                b"5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: t\r\n\r\n"
            )
            await writer.drain()

    server = Server(handler)

    async def main() -> tuple[http11.Response, http11.Response]:
        async with server as origin:
            return (await post(origin, "/", HEAD, b"{}"), await post(origin, "/", HEAD, b"{}"))

    first, second = run(main)  # type: ignore[misc]
    assert first.body == second.body == b"hello world"
    assert first.headers["x-a"] == "1, 2"
    assert (
        server.connections == 1
    )  # the trailers were read to the end: the connection stayed usable


def test_connection_close_and_bodies_read_to_the_end_get_a_fresh_connection() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        await server.read_request(reader)
        if n == 1:
            writer.write(answer(b"one", b"Connection: close\r\n"))
        else:  # HTTP/1.0 without a length: the body runs to the end of the connection
            writer.write(b"HTTP/1.0 200 OK\r\n\r\ntwo")
        await writer.drain()

    server = Server(handler)

    async def main() -> list[bytes]:
        async with server as origin:
            return [(await post(origin, "/", HEAD, b"{}")).body for _ in range(3)]

    assert run(main) == [b"one", b"two", b"two"]
    assert server.connections == 3


def test_an_idle_connection_the_server_closed_is_replaced_without_an_error() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        await server.read_request(reader)
        writer.write(answer(b"ok%d" % n))  # keep-alive promised, then the server hangs up
        await writer.drain()

    server = Server(handler)

    async def main() -> list[bytes]:
        async with server as origin:
            bodies = [(await post(origin, "/", HEAD, b"{}")).body]
            await asyncio.sleep(0.05)  # the server's close reaches the idle connection
            bodies.append((await post(origin, "/", HEAD, b"{}")).body)
            return bodies

    assert run(main) == [b"ok1", b"ok2"]
    assert server.connections == 2


def test_a_keep_alive_connection_dropped_as_the_request_goes_out_is_retried_once() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        await server.read_request(reader)
        writer.write(answer(b"ok%d" % n))
        await writer.drain()
        if n == 1:  # keeps the connection open, then drops the next request unanswered
            await server.read_request(reader)

    server = Server(handler)

    async def main() -> list[bytes]:
        async with server as origin:
            return [(await post(origin, "/", HEAD, b"{}")).body for _ in range(2)]

    assert run(main) == [b"ok1", b"ok2"]  # the second went out again on a fresh connection
    assert server.connections == 2
    assert len(server.requests) == 3


def test_a_fresh_connection_hung_up_on_raises_connection_error() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        await server.read_request(reader)
        if n == 1:
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort")
            await writer.drain()

    server = Server(handler)

    async def main() -> None:
        async with server as origin:
            with pytest.raises(ConnectionError, match="middle of its answer"):
                await post(origin, "/", HEAD, b"{}")
            with pytest.raises(ConnectionError, match="without an answer"):
                await post(origin, "/", HEAD, b"{}")

    run(main)


def test_a_refused_connection_raises_connection_error() -> None:
    async def main() -> None:
        probe = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
        port = probe.sockets[0].getsockname()[1]
        probe.close()
        await probe.wait_closed()
        with pytest.raises(ConnectionError):
            await post(Origin("http", "127.0.0.1", port), "/", HEAD, b"{}")

    run(main)


@pytest.mark.parametrize(
    ("reply", "match"),
    [
        (b"SSH-2.0-OpenSSH_9.6\r\n\r\n", "not an HTTP answer"),
        (b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", "malformed header"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: ten\r\n\r\n", "malformed Content-Length"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "malformed chunk size"),
    ],
)
def test_garbage_raises_protocol_error(reply: bytes, match: str) -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        await server.read_request(reader)
        writer.write(reply)
        await writer.drain()

    server = Server(handler)

    async def main() -> None:
        async with server as origin:
            with pytest.raises(ProtocolError, match=match):
                await post(origin, "/", HEAD, b"{}")
            assert http11._idle(origin) == []  # a broken connection is never pooled

    run(main)


def test_interim_answers_are_skipped() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        await server.read_request(reader)
        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n" + answer(b"done"))
        await writer.drain()

    server = Server(handler)

    async def main() -> http11.Response:
        async with server as origin:
            return await post(origin, "/", HEAD, b"{}")

    response = run(main)
    assert (response.status, response.body) == (200, b"done")  # type: ignore[attr-defined]


def test_a_request_cancelled_mid_answer_leaves_no_connection_to_reuse() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        while True:
            body = await server.read_request(reader)
            if body == b"slow":
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhalf")
                await writer.drain()
                await asyncio.sleep(0.3)
                writer.write(b"-late!")
            else:
                writer.write(answer(b"fast"))
            await writer.drain()

    server = Server(handler)

    async def main() -> bytes:
        async with server as origin:
            with pytest.raises(TimeoutError):
                async with asyncio.timeout(0.1):
                    await post(origin, "/", HEAD, b"slow")
            assert http11._idle(origin) == []
            return (await post(origin, "/", HEAD, b"fast")).body

    assert run(main) == b"fast"  # not the late half of the cancelled answer
    assert server.connections == 2


def test_each_event_loop_gets_connections_of_its_own() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        while True:
            await server.read_request(reader)
            writer.write(answer(b"ok"))
            await writer.drain()

    server = Server(handler)
    server_loop = asyncio.new_event_loop()  # the server runs in a thread of its own
    thread = threading.Thread(target=server_loop.run_forever, daemon=True)
    thread.start()
    try:
        origin = asyncio.run_coroutine_threadsafe(server.__aenter__(), server_loop).result(5)

        async def one_post() -> bytes:
            return (await post(origin, "/", HEAD, b"{}")).body

        # A second asyncio.run must not touch the first (closed) loop's pooled connection.
        assert asyncio.run(one_post()) == b"ok"
        assert asyncio.run(one_post()) == b"ok"
        assert server.connections == 2
        asyncio.run_coroutine_threadsafe(server.__aexit__(), server_loop).result(5)
    finally:
        server_loop.call_soon_threadsafe(server_loop.stop)
        thread.join(5)
        server_loop.close()


def test_origin_of_and_host_header() -> None:
    assert origin_of("https://api.example.com/v1") == (
        Origin("https", "api.example.com", 443),
        "/v1",
    )
    assert Origin("https", "api.example.com", 443).host_header == "api.example.com"
    assert Origin("http", "::1", 8080).host_header == "[::1]:8080"
    with pytest.raises(ValueError, match="not an http"):
        origin_of("ftp://example.com/")


def test_proxied_follows_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    assert not proxied("https://api.example.com/v1")
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.internal:3128")
    assert proxied("https://api.example.com/v1")
    assert not proxied("http://api.example.com/v1")  # only https goes through that proxy
    monkeypatch.setenv("NO_PROXY", "api.example.com")
    assert not proxied("https://api.example.com/v1")
