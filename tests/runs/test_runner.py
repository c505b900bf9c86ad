"""The runner loses nothing: kill -9 and Ctrl-C keep every finished episode; resume the rest."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import records

from agentproc.cli import main
from tests.fakes.openai_server import ScriptedServer

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    assert (
        main(
            [
                "generate",
                "--steps",
                "3",
                "--lookback",
                "2",
                "--count",
                "12",
                "--out",
                str(tmp_path / "s"),
            ]
        )
        == 0
    )
    return tmp_path / "s"


def start_run(suite: Path, out: Path, url: str, *extra: str) -> subprocess.Popen[bytes]:
    cmd = [
        sys.executable,
        "-m",
        "agentproc",
        "run",
        str(suite),
        "--agent",
        "openai:fake",
        "--base-url",
        url,
        "--out",
        str(out),
        *extra,
    ]
    return subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def wait_for_lines(path: Path, n: int, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_bytes().count(b"\n") >= n:
            return
        time.sleep(0.02)
    raise AssertionError(f"{path} did not reach {n} lines")


def ids(path: Path) -> list[str]:
    return [
        json.loads(line)["scenario_id"]
        for line in path.read_text().splitlines()
        if line.endswith("}")
    ]


def test_kill_9_then_resume_loses_and_duplicates_nothing(suite: Path, tmp_path: Path, capsys):
    out = tmp_path / "run.jsonl"
    with ScriptedServer(latency=0.05) as srv:
        proc = start_run(suite, out, srv.base_url, "--concurrency", "2")
        wait_for_lines(out, 3)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        before = ids(out)
        assert 3 <= len(before) < 12
        assert (
            main(
                [
                    "run",
                    str(suite),
                    "--agent",
                    "openai:fake",
                    "--base-url",
                    srv.base_url,
                    "--out",
                    str(out),
                    "--resume",
                    "--concurrency",
                    "4",
                ]
            )
            == 0
        )
    after = ids(out)
    assert len(after) == len(set(after)) == 12
    assert after[: len(before)] == before  # what was written stays as it was
    assert all(json.loads(line)["verdict"] == "faithful" for line in out.read_text().splitlines())
    assert f"({len(before)} already done)" in capsys.readouterr().out


def test_ctrl_c_stops_cleanly_keeping_every_finished_episode(suite: Path, tmp_path: Path):
    out = tmp_path / "run.jsonl"
    with ScriptedServer(latency=0.05) as srv:
        proc = start_run(suite, out, srv.base_url)
        wait_for_lines(out, 2)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=20)
    assert proc.returncode == 130
    assert b"Traceback" not in err
    text = out.read_text()
    assert text.endswith("\n")
    assert all(json.loads(line)["verdict"] == "faithful" for line in text.splitlines())
    saved = len(text.splitlines())  # said: how many were saved, and how to go on
    assert err.decode().splitlines()[-1] == (
        f"agentproc: interrupted; {saved} episode{'s' * (saved != 1)} of this run saved to "
        f"{out}; run the same command with --resume to go on"
    )


def test_ctrl_c_of_a_run_replacing_its_file_says_the_file_is_as_it_was(suite: Path, tmp_path: Path):
    out = tmp_path / "run.jsonl"
    out.write_text("precious\n")
    with ScriptedServer(latency=0.05) as srv:
        proc = start_run(suite, out, srv.base_url, "--overwrite")
        deadline = time.monotonic() + 60  # until the run beside it holds two episodes
        while not any(p.read_bytes().count(b"\n") >= 2 for p in tmp_path.glob(".run.jsonl.*")):
            assert time.monotonic() < deadline, "the run wrote nothing"
            time.sleep(0.02)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=20)
    assert proc.returncode == 130 and out.read_text() == "precious\n"
    assert err.decode().splitlines()[-1] == (
        f"agentproc: interrupted; {out} is left as it was (--overwrite replaces it only when "
        "a run ends)"
    )


def test_concurrency_overlaps_model_calls(suite: Path, tmp_path: Path):
    timings = {}
    with ScriptedServer(latency=0.25) as srv:
        for n in (1, 6):
            start = time.perf_counter()
            assert (
                main(
                    [
                        "run",
                        str(suite),
                        "--agent",
                        "openai:fake",
                        "--base-url",
                        srv.base_url,
                        "--limit",
                        "6",
                        "--concurrency",
                        str(n),
                        "--out",
                        str(tmp_path / f"c{n}.jsonl"),
                    ]
                )
                == 0
            )
            timings[n] = time.perf_counter() - start
    assert sorted(ids(tmp_path / "c1.jsonl")) == sorted(ids(tmp_path / "c6.jsonl"))
    assert timings[1] > 2.5 * timings[6]  # 6 x 4 turns x 0.25 s in sequence, overlapped 6 ways


def test_an_unparseable_reply_is_the_models_output_not_a_crash(suite: Path, tmp_path: Path):
    out = tmp_path / "run.jsonl"
    with ScriptedServer(
        [
            {"tool_call": {"name": "step_1", "arguments": "not json at all"}},
            {"content": "I give up"},
        ],
        per_conversation=True,
    ) as srv:
        assert (
            main(
                [
                    "run",
                    str(suite),
                    "--agent",
                    "openai:fake",
                    "--base-url",
                    srv.base_url,
                    "--limit",
                    "2",
                    "--out",
                    str(out),
                ]
            )
            == 0
        )
    for rec in records(out):
        assert (
            rec["calls"][0]["arguments"] == "not json at all"
            and rec["stop_reason"] == "no_tool_call"
        )
        assert rec["labels"][0]["kind"] == "invalid_arguments"


@pytest.mark.skipif(os.cpu_count() is None, reason="needs cpu count")
def test_report_merges_shards_run_on_different_machines(suite: Path, tmp_path: Path, capsys):
    with ScriptedServer() as srv:
        for i in (1, 2):
            main(
                [
                    "run",
                    str(suite),
                    "--agent",
                    "openai:fake",
                    "--base-url",
                    srv.base_url,
                    "--shard",
                    f"{i}/2",
                    "--out",
                    str(tmp_path / f"part{i}.jsonl"),
                ]
            )
    capsys.readouterr()
    assert (
        main(["report", str(tmp_path / "part1.jsonl"), str(tmp_path / "part2.jsonl"), "--json"])
        == 0
    )
    assert json.loads(capsys.readouterr().out)["episodes"] == 12
