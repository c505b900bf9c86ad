"""The aiohttp transport of ``openai:`` models, against servers on 127.0.0.1 that
misbehave the ways real endpoints and proxies do. None of these may score an
episode: an endpoint's fault is an ``endpoint`` error, retried where it may pass.
"""

from __future__ import annotations

import asyncio
import datetime
import gzip
import ipaddress
import json
import os
import zlib
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import openai
import pytest

from agentproc import Cell, generate_procedure, scenario_of
from agentproc.agents import transport
from agentproc.agents.failures import MalformedResponse, error_kind
from agentproc.agents.harness import arun_model_episode
from agentproc.agents.providers import is_retryable, make_chat_model
from agentproc.agents.retry import RetryPolicy
from agentproc.agents.transport import HttpEndpoint
from agentproc.errors import ConfigError

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter, int], Awaitable[None]]
FAST = RetryPolicy(attempts=3, base_delay=0.01, timeout=10.0)
PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "SSL_CERT_FILE", *PROXY_VARS):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)


class RawServer:
    """A socket server on 127.0.0.1 whose ``handler(reader, writer, connection)`` answers
    by hand, in the test's own event loop; it records each request's head and body."""

    def __init__(self, handler: Handler, ssl: Any = None) -> None:
        self.handler = handler
        self.ssl = ssl
        self.connections = 0
        self.requests: list[tuple[bytes, bytes]] = []
        self._tasks: list[asyncio.Task[None]] = []

    async def __aenter__(self) -> RawServer:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0, ssl=self.ssl)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    def url(self, path: str = "/v1", scheme: str = "http") -> str:
        return f"{scheme}://127.0.0.1:{self.port}{path}"

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

    async def read(self, reader: asyncio.StreamReader) -> bytes:
        """One request: its head is kept in :attr:`requests`; returns its body."""
        head = await reader.readuntil(b"\r\n\r\n")
        length = next(
            int(line.split(b":", 1)[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        )
        body = await reader.readexactly(length)
        self.requests.append((head, body))
        return body


def completion(text: str, **message: Any) -> bytes:
    choice = {"index": 0, "message": {"role": "assistant", "content": text, **message}}
    return json.dumps({"id": "x", "choices": [choice]}).encode()


def answer(body: bytes, head: bytes = b"", status: bytes = b"200 OK") -> bytes:
    return b"HTTP/1.1 %s\r\nContent-Length: %d\r\n%s\r\n%s" % (status, len(body), head, body)


def endpoint(url: str, timeout: float = 10.0) -> HttpEndpoint:
    return HttpEndpoint(transport.chat_url(url), {"Content-Type": "application/json"}, timeout)


# -- a second, unrequested answer --------------------------------------------------------


async def test_an_unrequested_second_answer_is_never_handed_to_the_next_request() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        while True:
            await server.read(reader)
            writer.write(answer(completion(f"answer {len(server.requests)}")))
            await writer.drain()
            await asyncio.sleep(0.02)  # the pooled connection is idle when this arrives
            writer.write(answer(completion("a stale answer nobody asked for")))
            await writer.drain()

    async with RawServer(handler) as server:
        ep = endpoint(server.url())
        said = []
        for _ in range(3):
            said.append((await ep.create(b"{}"))["choices"][0]["message"]["content"])
            await asyncio.sleep(0.05)
    assert said == ["answer 1", "answer 2", "answer 3"]
    assert server.connections == 3  # each tainted connection was closed, not reused


async def test_a_healthy_server_gets_one_kept_alive_connection() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        while True:
            await server.read(reader)
            writer.write(answer(completion("ok")))
            await writer.drain()

    async with RawServer(handler) as server:
        ep = endpoint(server.url())
        for _ in range(3):
            await ep.create(b"{}")
    assert server.connections == 1


async def test_an_idle_connection_the_server_closed_is_replaced_without_an_error() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        await server.read(reader)
        writer.write(answer(completion(f"ok {n}")))  # keep-alive promised, then a hang-up
        await writer.drain()

    async with RawServer(handler) as server:
        ep = endpoint(server.url())
        first = await ep.create(b"{}")
        await asyncio.sleep(0.05)  # the server's close reaches the idle connection
        second = await ep.create(b"{}")
    said = [d["choices"][0]["message"]["content"] for d in (first, second)]
    assert said == ["ok 1", "ok 2"]


FRAMINGS: dict[str, Callable[[bytes], bytes]] = {
    "chunked with trailers": lambda b: (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        + b"%x;ext=1\r\n%s\r\n0\r\nX-Trailer: t\r\n\r\n" % (len(b), b)
    ),
    "http/1.0 to the end": lambda b: b"HTTP/1.0 200 OK\r\n\r\n" + b,
    "an interim answer first": lambda b: b"HTTP/1.1 100 Continue\r\n\r\n" + answer(b),
}


@pytest.mark.parametrize("frame", list(FRAMINGS.values()), ids=list(FRAMINGS))
async def test_every_way_to_frame_a_body_is_read(frame: Callable[[bytes], bytes]) -> None:
    reply = frame(completion("framed"))

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        while True:
            await server.read(reader)
            writer.write(reply)
            await writer.drain()
            if reply.startswith(b"HTTP/1.0"):
                return

    async with RawServer(handler) as server:
        ep = endpoint(server.url())
        said = [(await ep.create(b"{}"))["choices"][0]["message"]["content"] for _ in range(2)]
    assert said == ["framed", "framed"]


# -- TLS ---------------------------------------------------------------------------------


def _self_signed(tmp: Path) -> tuple[Path, Path]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "agentproc test")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = tmp / "cert.pem", tmp / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


async def test_https_trusts_the_certificate_ssl_cert_file_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ssl

    cert, key = _self_signed(tmp_path)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        while True:
            await server.read(reader)
            writer.write(answer(completion("over tls")))
            await writer.drain()

    async with RawServer(handler, ssl=context) as server:
        with pytest.raises(openai.APIConnectionError) as info:  # not trusted by default
            await endpoint(server.url(scheme="https")).create(b"{}")
        assert error_kind(info.value) == "endpoint"
        monkeypatch.setenv("SSL_CERT_FILE", str(cert))
        data = await endpoint(server.url(scheme="https")).create(b"{}")
    assert data["choices"][0]["message"]["content"] == "over tls"


# -- headers and URLs ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("env", "kw", "what"),
    [
        ({"OPENAI_API_KEY": "sk-secret-abc\r\nX-Injected: yes"}, {}, "the API key"),
        ({}, {"default_headers": {"X-Team": "a\r\nX-Injected: yes"}}, "the header 'X-Team'"),
    ],
)
def test_a_line_break_in_a_key_or_header_is_a_config_error_that_never_quotes_it(
    env: dict[str, str], kw: dict[str, Any], what: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError) as info:
        make_chat_model("openai:m", base_url="http://127.0.0.1:9/v1", **kw)
    assert str(info.value) == f"{what} holds a line break or control character; fix it"
    assert "secret" not in str(info.value) and "Injected" not in str(info.value)


def test_an_injected_key_never_reaches_a_server_through_the_cli(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from agentproc.cli import main

    pinned = Path(__file__).parents[2] / "scenarios" / "pinned"
    scenario = sorted(pinned.glob("*.json"))[0]
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-abc\r\nX-Injected: yes")

    async def serve() -> int:
        async def handler(r: asyncio.StreamReader, w: asyncio.StreamWriter, n: int) -> None:
            await server.read(r)

        async with RawServer(handler) as server:
            argv = ["run", str(scenario), "--agent", "openai:m", "--base-url", server.url(),
                    "--out", str(tmp_path / "r.jsonl")]  # fmt: skip
            code = await asyncio.to_thread(main, argv)
        assert server.connections == 0
        return code

    assert asyncio.run(serve()) == 2
    err = capsys.readouterr().err
    assert "the API key holds a line break" in err and "secret" not in err


async def test_a_base_url_with_a_query_posts_to_the_chat_path_with_the_query() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        await server.read(reader)
        writer.write(answer(completion("ok")))
        await writer.drain()

    async with RawServer(handler) as server:
        base = server.url("/openai/deployments/gpt/?api-version=2024-06-01")
        model = make_chat_model("openai:gpt", base_url=base, default_query={"x": "1"})
        reply = await model.ainvoke("hi")
    assert reply.content == "ok"
    request_line = server.requests[0][0].split(b"\r\n")[0]
    assert request_line == (
        b"POST /openai/deployments/gpt/chat/completions?api-version=2024-06-01&x=1 HTTP/1.1"
    )


def test_credentials_in_the_base_url_are_sent_as_basic_auth_never_in_the_url() -> None:
    headers = transport.request_headers("k", "http://ann:hunter2@127.0.0.1:9/v1", None, None)
    assert headers["Authorization"] == "Basic YW5uOmh1bnRlcjI="
    assert transport.chat_url("http://ann:hunter2@127.0.0.1:9/v1") == (
        "http://127.0.0.1:9/v1/chat/completions"
    )


# -- bodies --------------------------------------------------------------------------------


@pytest.mark.parametrize("chunked", [False, True], ids=["declared length", "chunked"])
async def test_a_huge_body_stops_at_the_cap_before_the_server_has_sent_it(chunked: bool) -> None:
    sent = 0
    giga = 1 << 30
    block = b" " * (1 << 20)
    framed = b"%x\r\n%s\r\n" % (len(block), block) if chunked else block
    head = b"Transfer-Encoding: chunked" if chunked else b"Content-Length: %d" % giga

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        nonlocal sent
        await server.read(reader)
        writer.write(b"HTTP/1.1 200 OK\r\n%s\r\n\r\n" % head)
        while sent < giga:
            writer.write(framed)
            await writer.drain()
            sent += len(block)

    async with RawServer(handler) as server:
        with pytest.raises(MalformedResponse, match="larger than 67108864 bytes") as info:
            await endpoint(server.url()).create(b"{}")
        at_error = sent
    assert at_error < transport.MAX_BODY + (16 << 20)  # what the socket buffers hold, at most
    assert error_kind(info.value) == "endpoint"


async def test_a_compressed_body_is_capped_once_decoded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(transport, "MAX_BODY", 1 << 20)
    bomb = gzip.compress(b" " * (8 << 20))  # a few kilobytes on the wire

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        await server.read(reader)
        writer.write(answer(bomb, b"Content-Encoding: gzip\r\n"))
        await writer.drain()

    async with RawServer(handler) as server:
        with pytest.raises(MalformedResponse, match="larger than 1048576 bytes"):
            await endpoint(server.url()).create(b"{}")


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
async def test_compressed_bodies_are_decoded(encoding: str) -> None:
    packed = {"gzip": gzip.compress, "deflate": zlib.compress}[encoding](completion("squeezed"))

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        await server.read(reader)
        writer.write(answer(packed, b"Content-Encoding: %s\r\n" % encoding.encode()))
        await writer.drain()

    async with RawServer(handler) as server:
        data = await endpoint(server.url()).create(b"{}")
    assert data["choices"][0]["message"]["content"] == "squeezed"


# -- malformed HTTP: an endpoint error, retried ---------------------------------------------


MALFORMED = {
    "negative chunk size": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-5\r\nhello\r\n",
    "64 KiB chunk-size line": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    + b"1" * (64 << 10)
    + b"\r\n",
    "not HTTP": b"SSH-2.0-OpenSSH_9.6\r\n\r\n",
    "cut short": b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort",
}


@pytest.mark.parametrize("reply", list(MALFORMED.values()), ids=list(MALFORMED))
async def test_a_malformed_answer_is_a_retryable_endpoint_error(reply: bytes) -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        await server.read(reader)
        writer.write(reply)
        await writer.drain()

    async with RawServer(handler) as server:
        with pytest.raises(openai.APIConnectionError) as info:
            await endpoint(server.url()).create(b"{}")
    assert (error_kind(info.value), is_retryable(info.value)) == ("endpoint", True)


@pytest.mark.parametrize("reply", list(MALFORMED.values()), ids=list(MALFORMED))
async def test_an_episode_retries_a_malformed_answer_and_is_never_scored_on_it(
    reply: bytes,
) -> None:
    scenario = scenario_of(generate_procedure(Cell(steps=2, lookback=2), 0, 0))

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        await server.read(reader)
        first = len(server.requests) == 1
        writer.write(reply if first else answer(completion("done"), b"Connection: close\r\n"))
        await writer.drain()

    async with RawServer(handler) as server:
        model = make_chat_model("openai:m", base_url=server.url())
        ep = await arun_model_episode(scenario, model, "openai:m", retry=FAST)
    assert (ep.stop_reason, ep.error) == ("no_tool_call", None)
    assert ep.model_calls is not None and ep.model_calls[0]["attempts"] == 2


async def test_an_episode_whose_endpoint_is_always_malformed_is_an_endpoint_error() -> None:
    scenario = scenario_of(generate_procedure(Cell(steps=2, lookback=2), 0, 0))

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        await server.read(reader)
        writer.write(MALFORMED["negative chunk size"])
        await writer.drain()

    async with RawServer(handler) as server:
        model = make_chat_model("openai:m", base_url=server.url())
        ep = await arun_model_episode(scenario, model, "openai:m", retry=FAST)
    assert ep.stop_reason == "error" and ep.error is not None
    assert (ep.error.kind, ep.error.attempts) == ("endpoint", 3)
    assert ep.calls == []


# -- redirects -------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [b"307 Temporary Redirect", b"308 Permanent Redirect"])
async def test_a_redirect_is_refused_with_a_clear_endpoint_error(status: bytes) -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        while True:
            await server.read(reader)
            writer.write(answer(b"", b"Location: https://elsewhere.example/v1\r\n", status))
            await writer.drain()

    async with RawServer(handler) as server:
        with pytest.raises(openai.APIStatusError) as info:
            await endpoint(server.url()).create(b"{}")
    assert info.value.status_code == int(status[:3])
    assert "redirected to https://elsewhere.example/v1" in str(info.value)
    assert "give that URL as the base URL" in str(info.value)
    assert len(server.requests) == 1  # not followed
    # Retrying would be redirected again: the base URL is what must change.
    assert (error_kind(info.value), is_retryable(info.value)) == ("endpoint", False)


# -- sessions per event loop -------------------------------------------------------------------


def test_each_event_loop_gets_a_session_of_its_own_closed_with_the_loop() -> None:
    async def one_post(ep: HttpEndpoint) -> Any:
        async def handler(r: asyncio.StreamReader, w: asyncio.StreamWriter, n: int) -> None:
            await server.read(r)
            w.write(answer(completion("ok")))
            await w.drain()

        async with RawServer(handler) as server:
            ep.url = transport.chat_url(server.url())
            await ep.create(b"{}")
        ((session, *_),) = ep._sessions.values()
        return session

    ep = endpoint("http://127.0.0.1:9/v1")
    first = asyncio.run(one_post(ep))
    second = asyncio.run(one_post(ep))  # no "Event loop is closed"
    assert first is not second
    assert first.closed and second.closed
    assert len(ep._sessions) == 0  # nothing of a closed loop is kept


DROPPED_MODELS = """
import asyncio, gc, threading
from tests.fakes.openai_server import ScriptedServer
from agentproc.agents.providers import make_chat_model
from agentproc.runs.loop import run_on_loop

with ScriptedServer([{"content": "ok"}] * 10) as srv:
    def ask(held):
        held["model"] = make_chat_model("openai:m", base_url=srv.base_url)
        return run_on_loop(held["model"].ainvoke("hi")).content

    print(ask({}))  # dropped as soon as asked, the loop idle until exit
    worker = threading.Thread(target=ask, args=({},))  # on a thread's loop, the thread gone
    worker.start()
    worker.join()
    cycle = {}
    cycle["self"] = cycle  # dropped in a reference cycle: the garbage collector frees it
    print(ask(cycle))
    del cycle
    gc.collect()
    print(run_on_loop(asyncio.sleep(0, "next run")))
"""


def test_a_dropped_models_sessions_are_closed_on_their_loops() -> None:
    import subprocess
    import sys

    root = Path(__file__).parents[2]
    out = subprocess.run(
        [sys.executable, "-W", "always::ResourceWarning", "-c", DROPPED_MODELS],
        capture_output=True,
        text=True,
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
        timeout=120,
    )
    assert out.stdout.split() == ["ok", "ok", "next", "run"]
    assert "Unclosed" not in out.stderr and "destroyed but it is pending" not in out.stderr, (
        out.stderr
    )
