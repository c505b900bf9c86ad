"""``serve-mcp`` over stdio answers every malformed JSON-RPC request with the error the
spec names, goes on serving, and never shows a client's mistake as a traceback."""

from __future__ import annotations

import json
import signal
import subprocess
import threading
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from helpers import records
from mcp_script import free_port, serve_argv, server_env, two_scenarios, wait_listening

pytest.importorskip("mcp")

HELLO = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
STEP_1 = {"name": "step_1", "arguments": {"S1": 2, "S2": 3}}


def line(obj: Any) -> bytes:
    return (obj if isinstance(obj, str) else json.dumps(obj)).encode() + b"\n"


def exchange(
    tmp_path: Path, *lines: Any, replies: int = 2
) -> tuple[list[dict[str, Any]], str, int]:
    """Initialize, write ``lines``, read ``replies`` replies, then close stdin: the
    replies (the initialize reply left out), stderr and the exit status."""
    suite, run = two_scenarios(tmp_path), tmp_path / "run.jsonl"
    server = subprocess.Popen(
        serve_argv(suite, run),
        env=server_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert server.stdin is not None and server.stdout is not None
    server.stdin.write(b"".join(line(x) for x in (HELLO, INITIALIZED, *lines)))
    server.stdin.flush()
    watchdog = threading.Timer(60, server.kill)  # a request left unanswered fails, not hangs
    watchdog.start()
    try:
        got = [json.loads(server.stdout.readline() or "null") for _ in range(replies + 1)]
        _, stderr = server.communicate(timeout=60)
    finally:
        watchdog.cancel()
    assert got[0] is not None and got[0]["id"] == 0 and "result" in got[0], got
    assert None not in got, f"unanswered: {got}"
    return got[1:], stderr.decode(), server.returncode


def nested(rid: int, depth: int) -> str:
    """A ``tools/list`` request whose params hold arrays ``depth`` deep."""
    deep = "[" * depth + "]" * depth
    return f'{{"jsonrpc": "2.0", "id": {rid}, "method": "tools/list", "params": {{"a": {deep}}}}}'


CASES = [
    ("{not json", None, -32700),
    ("[1, 2]", None, -32600),
    ('"a string"', None, -32600),
    ({"jsonrpc": "1.0", "id": 5, "method": "tools/list"}, 5, -32600),
    ({"jsonrpc": "2.0", "id": 6, "method": 7}, 6, -32600),
    ({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": "S1=2"}, 7, -32602),
    ({"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": [1]}, 8, -32602),
    ({"jsonrpc": "2.0", "id": 9, "method": "no/such_method", "params": {}}, 9, -32601),
    ({"jsonrpc": "2.0", "id": 10, "method": "tools/call", "params": {"name": 5}}, 10, -32602),
    (
        {
            "jsonrpc": "2.0",
            "id": 11,
            "method": "tools/call",
            "params": {"name": "step_1", "arguments": "S1=2"},
        },
        11,
        -32602,
    ),
    (nested(12, 100_000), None, -32700),  # too deep for Python's JSON reader
    (nested(13, 150), 13, -32600),  # read, but past MAX_DEPTH (and the SDK's 200)
]


@pytest.mark.parametrize(
    ("bad", "rid", "code"), CASES, ids=[str(c[2]) + ":" + str(c[0])[:30] for c in CASES]
)
def test_a_malformed_request_gets_its_json_rpc_error_and_serving_goes_on(
    tmp_path: Path, bad: Any, rid: int | None, code: int
):
    after = {"jsonrpc": "2.0", "id": 99, "method": "tools/call", "params": STEP_1}
    replies, stderr, status = exchange(tmp_path, bad, after)
    assert [(r["id"], r.get("error", {}).get("code")) for r in replies] == [(rid, code), (99, None)]
    assert replies[1]["result"]["content"][0]["text"] == "S3 = 5.000"
    assert status == 0, stderr
    assert "Traceback" not in stderr and "Error" not in stderr, stderr
    (ep,) = records(tmp_path / "run.jsonl")  # the good call is recorded, the bad one not
    assert [c["name"] for c in ep["calls"]] == ["step_1"]


def test_a_malformed_notification_is_dropped_without_a_reply(tmp_path: Path):
    bad = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": "x"}
    after = {"jsonrpc": "2.0", "id": 99, "method": "tools/list", "params": {}}
    replies, stderr, status = exchange(tmp_path, bad, after, replies=1)
    assert [r["id"] for r in replies] == [99]
    assert status == 0 and "Traceback" not in stderr


def test_two_malformed_lines_and_a_quick_disconnect_end_quietly(tmp_path: Path):
    suite, run = two_scenarios(tmp_path), tmp_path / "run.jsonl"
    done = subprocess.run(
        serve_argv(suite, run),
        env=server_env(),
        input=b"{garbage\n\x00\xff not even text\n",
        capture_output=True,
        timeout=60,
    )
    stderr = done.stderr.decode()
    assert done.returncode == 0, stderr
    assert "Traceback" not in stderr and "ExceptionGroup" not in stderr
    assert [json.loads(x)["error"]["code"] for x in done.stdout.splitlines()] == [-32700, -32700]
    assert stderr.splitlines()[-1].startswith("agentproc: wrote 0 episodes")


def post(port: int, body: bytes, session: str | None = None) -> tuple[int, dict[str, Any], str]:
    """POST ``body`` to the server's endpoint: the status, the JSON-RPC reply (from JSON or
    from the event stream) and the session id."""
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if session:
        headers |= {"Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-06-18"}
    request = urllib.request.Request(f"http://127.0.0.1:{port}/mcp", body, headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            status, text, sid = response.status, response.read().decode(), response.headers
    except urllib.error.HTTPError as exc:
        status, text, sid = exc.code, exc.read().decode(), exc.headers
    data = [x[5:] for x in text.splitlines() if x.startswith("data:")]
    reply = json.loads(data[-1] if data else text) if text.strip() else {}
    return status, reply, sid.get("mcp-session-id", "")


def test_a_malformed_request_over_http_gets_its_json_rpc_error_and_serving_goes_on(
    tmp_path: Path,
):
    suite, run, port = two_scenarios(tmp_path), tmp_path / "run.jsonl", free_port()
    argv = serve_argv(suite, run, "--transport", "http", "--port", str(port))
    server = subprocess.Popen(argv, env=server_env(), stderr=subprocess.PIPE, text=True)
    try:
        wait_listening(port, server)
        _, hello, session = post(port, line(HELLO))
        assert "result" in hello and session
        post(port, line(INITIALIZED), session)
        got = [post(port, line(bad), session)[:2] for bad, _, _ in CASES]
        after = {"jsonrpc": "2.0", "id": 99, "method": "tools/call", "params": STEP_1}
        _, good, _ = post(port, line(after), session)
    finally:
        server.send_signal(signal.SIGINT)
        _, stderr = server.communicate(timeout=30)
    assert [(reply["id"], reply["error"]["code"]) for _, reply in got] == [
        (rid, code) for _, rid, code in CASES
    ]
    assert all(status == (400 if reply["id"] is None else 200) for status, reply in got)
    assert good["result"]["content"][0]["text"] == "S3 = 5.000"
    assert server.returncode == 0 and "Traceback" not in stderr, stderr


def test_a_message_nested_to_the_limit_is_passed_on_and_one_level_more_is_refused():
    from agentproc.integrations.mcp_jsonrpc import MAX_DEPTH, check

    # the message is level 1 and params level 2: arrays MAX_DEPTH - 2 deep reach the limit
    msg, reply = check(nested(1, MAX_DEPTH - 2).encode(), lambda method: True)
    assert reply is None and msg is not None
    msg, reply = check(nested(1, MAX_DEPTH - 1).encode(), lambda method: True)
    assert msg is None and reply is not None
    assert (reply["id"], reply["error"]["code"]) == (1, -32600)
    assert reply["error"]["message"] == f"Invalid Request: nested deeper than {MAX_DEPTH} levels"
