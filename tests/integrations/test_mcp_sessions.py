"""``serve-mcp`` as a server among others: one run per MCP session, a taken port, and
stopping by a signal, with the SDK's own client."""

from __future__ import annotations

import contextlib
import json
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from helpers import ORACLE, records
from mcp_script import (
    free_port,
    http_session,
    serve_argv,
    server_env,
    two_scenarios,
    wait_listening,
)

pytest.importorskip("mcp")


def start_http(suite: Path, run: Path, port: int, *extra: str) -> subprocess.Popen[str]:
    argv = serve_argv(suite, run, "--transport", "http", "--port", str(port), *extra)
    server = subprocess.Popen(argv, env=server_env(), stderr=subprocess.PIPE, text=True)
    wait_listening(port, server)
    return server


def stop(server: subprocess.Popen[str], signum: int = signal.SIGINT) -> str:
    if server.poll() is None:
        server.send_signal(signum)
    _, stderr = server.communicate(timeout=30)
    return stderr


async def faithful(session: Any) -> None:
    for name, args in ORACLE:
        assert not (await session.call_tool(name, args)).model_dump(by_alias=True)["isError"]


async def test_two_clients_over_http_each_get_their_own_scenarios_and_episodes(tmp_path: Path):
    suite, run, port = two_scenarios(tmp_path), tmp_path / "run.jsonl", free_port()
    server = start_http(suite, run, port)
    try:
        async with http_session(port, "alpha") as a, http_session(port, "beta") as b:
            await faithful(a)
            moved = await a.call_tool("next_scenario", {})
            assert moved.content[0].text.startswith("Scenario tiny-b is open")
            # beta starts at the first scenario, whatever alpha did
            prompt = await b.get_prompt("procedure")
            assert "tiny-b" not in (await b.list_prompts()).prompts[0].description
            assert prompt.messages[0].content.text
            await faithful(b)
            await faithful(a)
            await b.call_tool("next_scenario", {})
    finally:
        stderr = stop(server)
    assert server.returncode == 0, stderr
    eps = records(run)
    assert sorted((e["agent"], e["scenario_id"]) for e in eps) == [
        ("alpha", "tiny"),
        ("alpha", "tiny-b"),
        ("beta", "tiny"),
    ]
    assert all(e["verdict"] == "faithful" for e in eps), [e["labels"] for e in eps]
    assert not any(lab["kind"] == "hallucinated_call" for e in eps for lab in e["labels"])
    # alpha's second episode was open when the server stopped: answered, so finished
    (open_ep,) = (e for e in eps if e["scenario_id"] == "tiny-b")
    assert open_ep["stop_reason"] == "answer"


async def test_two_sessions_under_one_name_are_kept_apart_as_trials(tmp_path: Path):
    suite, run, port = two_scenarios(tmp_path), tmp_path / "run.jsonl", free_port()
    server = start_http(suite, run, port, "--name", "my-agent")
    try:
        for client in ("first", "second"):
            async with http_session(port, client) as session:
                await faithful(session)
                await session.call_tool("next_scenario", {})
    finally:
        stderr = stop(server)
    assert server.returncode == 0, stderr
    eps = records(run)
    assert [(e["agent"], e["scenario_id"], e.get("trial", 0)) for e in eps] == [
        ("my-agent", "tiny", 0),
        ("my-agent", "tiny", 1),
    ]


async def test_a_client_that_leaves_over_http_has_its_open_episode_written_at_once(
    tmp_path: Path,
):
    suite, run, port = two_scenarios(tmp_path), tmp_path / "run.jsonl", free_port()
    server, left = start_http(suite, run, port), None
    try:
        with contextlib.suppress(Exception):  # the server goes away under "stays"
            async with http_session(port, "stays") as stays:
                await stays.call_tool(*ORACLE[0])
                async with http_session(port, "leaves") as leaves:
                    await leaves.call_tool(*ORACLE[0])
                for _ in range(100):  # the session's end, not the server's, writes it
                    if run.exists() and records(run):
                        break
                    await anyio.sleep(0.05)
                left = [(e["agent"], e["stop_reason"]) for e in records(run)]
                server.send_signal(signal.SIGINT)
                await anyio.to_thread.run_sync(server.wait, 30)
    finally:
        stderr = stop(server)
    assert left == [("leaves", "no_tool_call")]
    assert server.returncode == 0, stderr
    assert [(e["agent"], e["stop_reason"]) for e in records(run)] == [
        ("leaves", "no_tool_call"),
        ("stays", "interrupted"),
    ]


@pytest.mark.parametrize("overwrite", [False, True])
def test_a_taken_port_is_one_error_and_leaves_the_run_file_as_it_was(
    tmp_path: Path, overwrite: bool
):
    suite, run = two_scenarios(tmp_path), tmp_path / "run.jsonl"
    if overwrite:
        run.write_text("kept\n" * 1000, encoding="utf-8")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        extra = ["--overwrite"] if overwrite else []
        argv = serve_argv(suite, run, "--transport", "http", "--port", str(port), *extra)
        done = subprocess.run(argv, env=server_env(), capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == (
        f"agentproc: error: --port {port}: cannot listen on 127.0.0.1 (Address already in use)"
    )
    assert "Traceback" not in done.stderr
    if overwrite:
        assert run.read_text(encoding="utf-8") == "kept\n" * 1000
    else:
        assert not run.exists()


def rpc(rid: int, method: str, params: dict[str, Any]) -> bytes:
    line = {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}
    return (json.dumps(line) + "\n").encode()


def start_stdio(suite: Path, run: Path) -> subprocess.Popen[bytes]:
    """A server over stdio that has been initialized and has run ``step_1``."""
    server = subprocess.Popen(
        serve_argv(suite, run),
        env=server_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert server.stdin is not None and server.stdout is not None
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}}
    hello["clientInfo"] = {"name": "raw", "version": "1"}
    server.stdin.write(rpc(1, "initialize", hello))
    server.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    server.stdin.write(rpc(2, "tools/call", {"name": "step_1", "arguments": {"S1": 2, "S2": 3}}))
    server.stdin.flush()
    replies = [json.loads(server.stdout.readline()) for _ in range(2)]
    assert replies[1]["result"]["content"][0]["text"] == "S3 = 5.000", replies
    return server


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_over_stdio_writes_the_open_episode_as_interrupted(tmp_path: Path, signum: int):
    suite, run = two_scenarios(tmp_path), tmp_path / "run.jsonl"
    server = start_stdio(suite, run)
    server.send_signal(signum)  # stdin stays open: the client has not left
    try:
        server.wait(timeout=20)
    finally:
        server.kill()
        stderr = server.communicate()[1].decode()
    assert server.returncode == 0, stderr
    assert "Traceback" not in stderr
    (ep,) = records(run)
    assert (ep["verdict"], ep["stop_reason"]) == ("no_answer", "interrupted")
    assert [c["name"] for c in ep["calls"]] == ["step_1"]


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
async def test_a_signal_over_http_writes_the_open_episodes(tmp_path: Path, signum: int):
    suite, run, port = two_scenarios(tmp_path), tmp_path / "run.jsonl", free_port()
    server = start_http(suite, run, port)
    try:
        with contextlib.suppress(Exception):  # the server goes away under the client
            async with http_session(port, "left-open") as session:
                await session.call_tool(*ORACLE[0])
                server.send_signal(signum)
                for _ in range(200):
                    if server.poll() is not None:
                        break
                    await anyio.sleep(0.05)
    finally:
        if server.poll() is None:
            time.sleep(5)
        server.kill()
        stderr = server.communicate()[1]
    assert server.returncode == 0, stderr
    (ep,) = records(run)
    assert (ep["agent"], ep["stop_reason"], ep["verdict"]) == (
        "left-open",
        "interrupted",
        "no_answer",
    )


def test_a_run_file_another_server_is_writing_is_one_error(tmp_path: Path):
    suite, run = two_scenarios(tmp_path), tmp_path / "run.jsonl"
    first = start_stdio(suite, run)  # holds the run file's lock
    try:
        done = subprocess.run(
            serve_argv(suite, run, "--overwrite"),
            env=server_env(),
            input=b"",
            capture_output=True,
            timeout=60,
        )
    finally:
        first.send_signal(signal.SIGTERM)
        first.communicate(timeout=30)
    stderr = done.stderr.decode()
    assert done.returncode == 2, stderr
    assert stderr.splitlines()[-1].startswith(f"agentproc: error: {run}")
    assert "Traceback" not in stderr
    (ep,) = records(run)  # the first server's episode, whole
    assert ep["stop_reason"] == "interrupted"
