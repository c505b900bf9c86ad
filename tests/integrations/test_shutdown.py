"""``serve-mcp`` stopped by a signal and then signalled again while it shuts down: the
first signal writes the open episode, the ones after it are ignored, and the exit
status stays 0 over either transport."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from helpers import records
from mcp_script import free_port, serve_argv, server_env, two_scenarios, wait_listening

from agentproc.integrations.shutdown import SIGNALS, Shutdown

HELLO = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
STEP_1 = {
    "jsonrpc": "2.0",
    "id": 2,
    "method": "tools/call",
    "params": {"name": "step_1", "arguments": {"S1": 2, "S2": 3}},
}


def stdio_server(suite: Path, run: Path) -> subprocess.Popen[bytes]:
    """A server over stdio that has been initialized and has run ``step_1``."""
    server = subprocess.Popen(
        serve_argv(suite, run),
        env=server_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert server.stdin is not None and server.stdout is not None
    server.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in (HELLO, INITIALIZED)))
    server.stdin.write(json.dumps(STEP_1).encode() + b"\n")
    server.stdin.flush()
    replies = [json.loads(server.stdout.readline()) for _ in range(2)]
    assert replies[1]["result"]["content"][0]["text"] == "S3 = 5.000", replies
    return server


def post(port: int, message: dict[str, Any], session: str = "") -> str:
    """POST one message; the session id the server answers with."""
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if session:
        headers |= {"Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-06-18"}
    body = json.dumps(message).encode()
    request = urllib.request.Request(f"http://127.0.0.1:{port}/mcp", body, headers)
    with urllib.request.urlopen(request, timeout=30) as response:
        response.read()
        return str(response.headers.get("mcp-session-id", session))


def http_server(suite: Path, run: Path) -> subprocess.Popen[bytes]:
    """A server over HTTP with one session that has run ``step_1``."""
    port = free_port()
    argv = serve_argv(suite, run, "--transport", "http", "--port", str(port))
    server = subprocess.Popen(argv, env=server_env(), stderr=subprocess.PIPE)
    wait_listening(port, server)  # type: ignore[arg-type]
    session = post(port, HELLO)
    post(port, INITIALIZED, session)
    post(port, STEP_1, session)
    return server


def signal_again_and_again(server: subprocess.Popen[bytes], first: int, then: int) -> None:
    """``first``, then ``then`` every 10 ms until the server has gone (or 20 s)."""
    server.send_signal(first)
    for _ in range(2000):
        time.sleep(0.01)
        if server.poll() is not None:
            return
        server.send_signal(then)


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize(
    ("first", "then"),
    [
        (signal.SIGINT, signal.SIGINT),
        (signal.SIGTERM, signal.SIGTERM),
        (signal.SIGINT, signal.SIGTERM),
    ],
    ids=["int-int", "term-term", "int-term"],
)
def test_a_signal_repeated_while_shutting_down_is_ignored_and_the_exit_is_0(
    tmp_path: Path, transport: str, first: int, then: int
):
    pytest.importorskip("mcp")
    suite, run = two_scenarios(tmp_path), tmp_path / "run.jsonl"
    server = (stdio_server if transport == "stdio" else http_server)(suite, run)
    try:
        signal_again_and_again(server, first, then)
        server.wait(timeout=30)
    finally:
        server.kill()
        stderr = server.communicate()[1].decode()
    assert server.returncode == 0, stderr
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr
    assert stderr.splitlines()[-1].endswith(f"(stopped by {signal.Signals(first).name})")
    (ep,) = records(run)
    assert (ep["stop_reason"], [c["name"] for c in ep["calls"]]) == ("interrupted", ["step_1"])


@pytest.fixture
def own_handlers():
    """This process's SIGINT and SIGTERM handlers, put back after the test."""
    kept = {s: signal.getsignal(s) for s in SIGNALS}
    yield
    for s, handler in kept.items():
        signal.signal(s, handler)


def test_the_first_signal_stops_serving_and_the_ones_after_it_are_ignored(own_handlers):
    marked: list[str] = []
    stops: list[str] = []

    async def serve(shutdown: Shutdown) -> None:
        done = asyncio.Event()
        with shutdown.serving(lambda: (stops.append("stop"), done.set())):
            os.kill(os.getpid(), signal.SIGINT)
            await done.wait()
            os.kill(os.getpid(), signal.SIGTERM)  # would end this process if not ignored
            os.kill(os.getpid(), signal.SIGINT)
            await asyncio.sleep(0)

    with Shutdown(lambda: marked.append("interrupted")) as shutdown:
        asyncio.run(serve(shutdown))
        os.kill(os.getpid(), signal.SIGINT)  # between serving and the command's end
    assert (shutdown.signal, marked, stops) == (signal.SIGINT, ["interrupted"], ["stop"])
    assert [signal.getsignal(s) for s in SIGNALS] == [signal.SIG_IGN] * 2  # until it exits


def test_a_signal_before_serving_stops_it_as_soon_as_it_starts(own_handlers):
    stops: list[str] = []

    async def serve(shutdown: Shutdown) -> None:
        with shutdown.serving(lambda: stops.append("stop")):
            pass

    with Shutdown() as shutdown:
        os.kill(os.getpid(), signal.SIGTERM)
        asyncio.run(serve(shutdown))
    assert (shutdown.signal, stops) == (signal.SIGTERM, ["stop"])


def test_without_a_signal_the_earlier_handlers_are_put_back(own_handlers):
    before = [signal.getsignal(s) for s in SIGNALS]
    with Shutdown():
        assert [signal.getsignal(s) for s in SIGNALS] != before
    assert [signal.getsignal(s) for s in SIGNALS] == before
