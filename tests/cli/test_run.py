"""What ``agentproc run`` says in the first hour: a workflow file where a suite goes, an
endpoint that is down, the options that change its agent written to the run file."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from helpers import records

from agentproc.cli import main

ROOT = Path(__file__).resolve().parents[2]
REFUNDS = ROOT / "scenarios" / "workflows" / "refund_approval.toml"


def cli(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("run") / "s"
    assert main(["generate", "--steps", "3", "--count", "3", "--out", str(out)]) == 0
    return out


def dead_port() -> int:
    """A port nothing listens on (connections to it are refused)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("form", ["toml", "json"])
def test_a_workflow_file_given_as_the_suite_says_how_to_make_one(capsys, tmp_path, form):
    import tomllib

    workflow = tmp_path / f"refunds.{form}"
    if form == "toml":
        workflow.write_text(REFUNDS.read_text(encoding="utf-8"), encoding="utf-8")
    else:
        workflow.write_text(json.dumps(tomllib.loads(REFUNDS.read_text(encoding="utf-8"))))
    out = tmp_path / "r.jsonl"
    code, _, err = cli(capsys, "run", workflow, "--agent", "sim:oracle", "--out", out)
    assert code == 2
    (line,) = err.splitlines()
    assert line == (
        f"agentproc: error: {workflow}: is a workflow file, not a suite: make a suite of it "
        f"with 'agentproc generate --workflow {workflow} --out DIR', then give DIR"
    )
    assert not out.exists()


def test_a_dead_endpoint_is_said_with_its_cause(capsys, suite, tmp_path):
    url = f"http://127.0.0.1:{dead_port()}/v1"
    argv = ["run", suite, "--agent", "openai:m", "--base-url", url, "--retries", "0"]
    code, out, err = cli(capsys, *argv, "--limit", "2", "--out", tmp_path / "r.jsonl")
    assert code == 3 and "none scored" in out
    (line,) = err.splitlines()
    assert line.startswith("agentproc: 2 episodes errored (endpoint 2; the first: ")
    assert "Cannot connect to host 127.0.0.1" in line and "--resume runs them again" in line


def test_the_options_that_change_the_agent_are_in_every_record(capsys, suite, tmp_path):
    out = tmp_path / "r.jsonl"
    code, _, err = cli(
        capsys, "run", suite, "--agent", "sim:decay", "--seed", "4", "--guard", "enforce",
        "--out", out,
    )  # fmt: skip
    assert code == 0, err
    recs = records(out)
    assert {json.dumps(r["settings"]) for r in recs} == {'{"guard": "enforce", "seed": 4}'}
    assert {r["guard"] for r in recs} == {"enforce"}
