"""``agentproc serve-mcp``: an MCP client from the SDK drives it over stdio and streamable
HTTP, and the run file it writes holds the labels ``replay`` gives on the same calls."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from helpers import cli, records
from mcp_script import (
    FAITHFUL,
    SKIPPED_AND_HALLUCINATED,
    drive,
    free_port,
    scenarios,
    two_scenarios,
)

from agentproc.analysis import replay_calls

mcp = pytest.importorskip("mcp")
from mcp import ClientSession, StdioServerParameters, types  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
CLIENT = types.Implementation(name="scripted-client", version="1.0")


def env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def replayed_labels(calls: list[tuple[str, Any]], index: int) -> list[dict[str, Any]]:
    """The labels ``replay`` gives on the same calls of scenario ``index``."""
    text = [(name, json.dumps(args, separators=(",", ":"))) for name, args in calls]
    return [lab.to_json() for lab in replay_calls(scenarios()[index], text).labels]


def check_run_file(run: Path, agent: str) -> None:
    eps = records(run)
    assert [e["scenario_id"] for e in eps] == ["tiny", "tiny-b"]
    assert {e["agent"] for e in eps} == {agent}
    assert eps[0]["labels"] == replayed_labels(FAITHFUL, 0)
    assert eps[1]["labels"] == replayed_labels(SKIPPED_AND_HALLUCINATED, 1)
    assert eps[0]["verdict"] == "faithful"
    kinds = {lab["kind"] for lab in eps[1]["labels"]}
    assert {"skipped_step", "hallucinated_call", "invalid_arguments"} <= kinds
    # and replay of the file itself finds nothing to differ
    done = subprocess.run(
        [sys.executable, "-m", "agentproc", "replay", str(run)],
        env=env(),
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def check_seen(seen: dict[str, Any]) -> None:
    assert seen["tools"] == [
        "step_1",
        "step_2",
        "step_3",
        "step_4",
        "submit_answer",
        "next_scenario",
    ]
    assert seen["schema"]["required"] == ["S1", "S2"]
    assert (
        "submit_answer with the value of S6" in seen["prompt"]
        and seen["prompt"] == seen["resource"]
    )
    # refusals reach the client as tool errors: the hallucinated and malformed calls
    assert seen["results"] == [False] * 5 + [False, False, True, True, False]
    assert seen["moved"].startswith("Scenario tiny-b is open")
    assert seen["done"] == "The run is complete: 2 episodes written."
    assert seen["after"].startswith("Error: the run is complete")


async def test_a_client_over_stdio_gets_the_labels_replay_gives(tmp_path: Path):
    suite, run = two_scenarios(tmp_path), tmp_path / "run.jsonl"
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "agentproc", "serve-mcp", str(suite), "--out", str(run)],
        env=env(),
    )
    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write, client_info=CLIENT) as session,
    ):
        await session.initialize()
        seen = await drive(session)
    check_seen(seen)
    for _ in range(100):  # the server writes its last line as the client leaves
        if run.exists() and len(records(run)) == 2:
            break
        time.sleep(0.05)
    check_run_file(run, "scripted-client")


async def test_a_client_over_streamable_http_gets_the_labels_replay_gives(tmp_path: Path):
    from mcp.client.streamable_http import streamable_http_client

    suite, run, port = two_scenarios(tmp_path), tmp_path / "run.jsonl", free_port()
    argv = ["serve-mcp", str(suite), "--transport", "http", "--port", str(port)]
    server = subprocess.Popen(
        [sys.executable, "-m", "agentproc", *argv, "--out", str(run), "--name", "my-agent"],
        env=env(),
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        seen = None
        for _ in range(100):  # until it listens
            try:
                async with (
                    streamable_http_client(url) as (read, write, *_),  # 1.x: a third item
                    ClientSession(read, write, client_info=CLIENT) as session,
                ):
                    await session.initialize()
                    seen = await drive(session)
                break
            except Exception:
                if server.poll() is not None:
                    raise
                time.sleep(0.1)
        assert seen is not None
        check_seen(seen)
    finally:
        server.send_signal(signal.SIGINT)
        _, stderr = server.communicate(timeout=30)
    assert server.returncode == 0, stderr
    assert "wrote 2 episodes" in stderr
    check_run_file(run, "my-agent")  # --name wins over the client's name


def test_an_unknown_scenario_id_is_one_error_before_serving(tmp_path: Path, capsys):
    suite = two_scenarios(tmp_path)
    code, _, err = cli(capsys, "serve-mcp", suite, "--scenario", "nope", "--out", tmp_path / "r")
    assert code == 2
    assert "no scenario with id 'nope'" in err and "Traceback" not in err
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--guard", "strict"], "unknown guard 'strict'"),
        (["--port", "9000"], "--port goes with --transport http"),
        (["--per-cell", "0"], "argument --per-cell: must be at least 1 (not 0)"),
        (["--variant", "nope"], "variant"),
    ],
)
def test_bad_options_are_one_error(tmp_path: Path, capsys, argv: list[str], said: str):
    suite = two_scenarios(tmp_path)
    code, _, err = cli(capsys, "serve-mcp", suite, "--out", tmp_path / "r.jsonl", *argv)
    assert code == 2
    assert said in err and "Traceback" not in err


def test_without_the_extra_it_says_which_to_install(tmp_path: Path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "mcp", None)
    monkeypatch.delitem(sys.modules, "agentproc.integrations.mcp_server", raising=False)
    suite = two_scenarios(tmp_path)
    code, _, err = cli(capsys, "serve-mcp", suite, "--out", tmp_path / "r.jsonl")
    assert code == 2
    assert "pip install 'agentproc[mcp]'" in err
    assert not (tmp_path / "r.jsonl").exists()  # refused before the run file is made


async def test_over_stdio_it_says_it_waits_for_a_client_and_gives_its_own_version(
    tmp_path: Path,
):
    from importlib.metadata import version

    suite, run, log = two_scenarios(tmp_path), tmp_path / "run.jsonl", tmp_path / "stderr"
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "agentproc", "serve-mcp", str(suite), "--out", str(run)],
        env=env(),
    )
    with open(log, "w", encoding="utf-8") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write, client_info=CLIENT) as session,
        ):
            result = await session.initialize()
    info = getattr(result, "serverInfo", None) or result.server_info  # 1.x, 2.x
    assert (info.name, info.version) == ("agentproc", version("agentproc"))
    assert version("agentproc") != version("mcp")  # the SDK's is not said in its place
    first = log.read_text(encoding="utf-8").splitlines()[0]
    assert first == (
        f"agentproc: serving {suite} over stdio: waiting for an MCP client on stdin/stdout "
        "(an MCP client starts this command itself; see docs/integrations.md)"
    )
