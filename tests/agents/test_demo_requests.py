"""The demo endpoint answers every request, over a real socket: a body, header or value it
cannot read gets a JSON error in OpenAI's shape (400, 411 or 413) and it keeps serving;
and its ids are a function of the conversation, so identical runs count identical tokens."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest

from agentproc.agents.demo import demo_server
from agentproc.agents.demo.checks import MAX_DEPTH
from tests.helpers import cli, records

TOOL = {
    "type": "function",
    "function": {
        "name": "step_1",
        "description": "compute S3 = S1 + S2",
        "parameters": {"type": "object", "properties": {"S1": {}, "S2": {}}},
    },
}
GOOD = {"model": "demo", "messages": [{"role": "user", "content": "Inputs: S1 = 2, S2 = 3"}]}


def exchange(port: int, raw: bytes) -> tuple[int, dict[str, Any]]:
    """Send ``raw`` on a new connection; the status and JSON body of the reply."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
        conn.sendall(raw)
        conn.shutdown(socket.SHUT_WR)
        data = b""
        while chunk := conn.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    assert b"content-type: application/json" in head.lower()
    return status, json.loads(body)


def post(port: int, body: bytes, length: bytes | None = None) -> tuple[int, dict[str, Any]]:
    size = str(len(body)).encode() if length is None else length
    head = b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    return exchange(port, head + b"Content-Length: " + size + b"\r\n\r\n" + body)


def as_json(body: dict[str, Any]) -> bytes:
    return json.dumps(body).encode()


def with_tools(tools: Any) -> bytes:
    return as_json({**GOOD, "tools": tools})


BAD_BODIES = {
    "messages of numbers": as_json({"messages": [1, 2, 3]}),
    "tools as strings": with_tools(["step_1", "step_2"]),
    "tools as an object": with_tools({"step_1": TOOL}),
    "parameters as a list": with_tools(
        [{"type": "function", "function": {"name": "step_1", "parameters": ["S1", "S2"]}}]
    ),
    "a tool call as a string": as_json(
        {
            "messages": [
                GOOD["messages"][0],
                {"role": "assistant", "content": None, "tool_calls": ["step_1"]},
            ]
        }
    ),
    "a number of 5,000 digits": b'{"messages": [], "temperature": ' + b"9" * 5000 + b"}",
    "a number of 5,000 digits in a message": as_json(
        {
            "messages": [{"role": "user", "content": "Inputs: S1 = " + "7" * 5000 + ", S2 = 1"}],
            "tools": [TOOL],
        }
    ),
    "a body nested 100,000 deep": b"[" * 100_000 + b"]" * 100_000,
    "nested past the cap": as_json({**GOOD, "x": json.loads("[" * MAX_DEPTH + "]" * MAX_DEPTH)}),
    "not JSON": b"{messages",
    "not UTF-8": b'{"messages": ["\xff"]}',
    "a role that is a number": as_json({"messages": [{"role": 5, "content": "hi"}]}),
    "content as a number": as_json({"messages": [{"role": "user", "content": 5}]}),
    "a content part's text as a number": as_json(
        {"messages": [{"role": "user", "content": [{"type": "text", "text": 5}]}]}
    ),
    "a content part as a number": as_json({"messages": [{"role": "user", "content": [7]}]}),
    "a description as a list": with_tools([{"function": {"name": "f", "description": []}}]),
}


@pytest.fixture(scope="module")
def server():
    with demo_server("faithful") as srv:
        yield srv


def assert_error(status: int, reply: dict[str, Any], expected: int) -> None:
    assert status == expected
    error = reply["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert error["type"] == "invalid_request_error"
    assert isinstance(error["message"], str) and 0 < len(error["message"]) < 300


def assert_still_serving(port: int) -> None:
    status, reply = post(port, with_tools([TOOL]))
    assert status == 200
    assert reply["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "step_1"


@pytest.mark.parametrize("body", list(BAD_BODIES.values()), ids=list(BAD_BODIES))
def test_a_body_it_cannot_read_gets_a_400_and_it_keeps_serving(server, body):
    assert_error(*post(server.port, body), 400)
    assert_still_serving(server.port)


@pytest.mark.parametrize(
    ("length", "expected"),
    [(b"abc", 400), (b"-5", 400), (b"1.5", 400), (b"10000000000000", 413), (b"9" * 5000, 400)],
    ids=["abc", "-5", "1.5", "10^13", "5,000 digits"],
)
def test_a_bad_content_length_gets_an_error_without_reading_the_body(server, length, expected):
    assert_error(*post(server.port, b"{}", length), expected)
    assert_still_serving(server.port)


def test_a_chunked_body_is_refused_with_411(server):
    raw = b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
    assert_error(*exchange(server.port, raw + b"2\r\n{}\r\n0\r\n\r\n"), 411)
    assert_still_serving(server.port)


@pytest.mark.parametrize(
    "raw",
    [
        b"POST /v1/chat/completions HTTP/1.1\r\nX-Long: " + b"a" * 70_000 + b"\r\n\r\n",
        b"POST /v1/chat/completions HTTP/9.9\r\n\r\n",
        b"GARBAGE\r\n\r\n",
    ],
    ids=["a header line too long", "an unknown HTTP version", "no request line"],
)
def test_a_malformed_request_line_or_header_gets_a_json_error(server, raw):
    status, reply = exchange(server.port, raw)
    assert 400 <= status < 500 or status == 505  # HTTP Version Not Supported
    assert set(reply["error"]) == {"message", "type", "param", "code"}
    assert_still_serving(server.port)


def demo_run(capsys: Any, suite: Path, url: str, out: Path) -> list[tuple[str, int, int]]:
    code, _, err = cli(
        capsys, "run", suite, "--agent", "openai:demo", "--base-url", url, "--out", out
    )
    assert code == 0, err
    return sorted(
        (r["scenario_id"], r["usage"]["input_tokens"], r["usage"]["output_tokens"])
        for r in records(out)
    )


def test_two_identical_runs_count_identical_tokens(capsys, tmp_path):
    suite = tmp_path / "suite"
    argv = ["generate", "--steps", "10", "--lookback", "3", "--count", "12", "--out", suite]
    assert cli(capsys, *argv)[0] == 0
    with demo_server("faithful") as srv:
        first = demo_run(capsys, suite, srv.base_url, tmp_path / "a.jsonl")
        second = demo_run(capsys, suite, srv.base_url, tmp_path / "b.jsonl")
    assert first == second
    with demo_server("faithful") as srv:  # a fresh server: the same again
        assert demo_run(capsys, suite, srv.base_url, tmp_path / "c.jsonl") == first
