"""Bad options and unfinished suites are bad input (exit 2, naming what is wrong), and
nothing already written is destroyed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentproc.cli import main

PINNED = Path(__file__).resolve().parents[2] / "scenarios" / "pinned"


def run(capsys, *argv: object) -> tuple[int, str, str]:
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:  # argparse rejects a bad option at parse time
        code = int(exc.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize(
    ("argv", "option"),
    [
        (["run", "S", "--retries", "-1"], "--retries"),
        (["run", "S", "--timeout", "0"], "--timeout"),
        (["run", "S", "--timeout", "nan"], "--timeout"),
        (["run", "S", "--budget", "0"], "--budget"),
        (["run", "S", "--max-tokens", "-5"], "--max-tokens"),
        (["run", "S", "--base-url", "not a url"], "--base-url"),
        (["run", "S", "--base-url", "ftp://h/v1"], "--base-url"),
        (["run", "S", "--base-url", "http://h:abc/v1"], "--base-url"),
        (["run", "S", "--base-url", "http://x@[::1/v1"], "--base-url"),
        (["run", "S", "--base-url", "http://h/v1\nX: y"], "--base-url"),
        (["run", "S", "--limit", "-1"], "--limit"),
        (["run", "S", "--shard", ""], "--shard"),
        (["run", "S", "--shard", "3/2"], "--shard"),
        (["run", "S", "--shard", "2-1/4"], "--shard"),
        (["run", "S", "--shard", "0-1/4"], "--shard"),
        (["run", "S", "--shard", "1-5/4"], "--shard"),
        (["run", "S", "--shard", "1-/4"], "--shard"),
        (["run", "S", "--shard", "a-b/4"], "--shard"),
        (["run", "S", "--concurrency", "0"], "--concurrency"),
        (["selfcheck", "--count", "0"], "--count"),
        (["generate", "--steps", "3", "--range", "nan:10", "--out", "o"], "--range"),
        (["generate", "--steps", "3", "--range", "1:inf", "--out", "o"], "--range"),
        (["generate", "--steps", "3", "--count", "0", "--out", "o"], "--count"),
    ],
)
def test_a_bad_option_is_refused_at_parse_time_naming_it(capsys, tmp_path, argv, option):
    argv = [a if a != "S" else str(tmp_path) for a in argv] + (
        ["--out", str(tmp_path / "r.jsonl")] if argv[0] == "run" else []
    )
    code, _, err = run(capsys, *argv)
    assert code == 2 and option in err and "Traceback" not in err
    assert not (tmp_path / "r.jsonl").exists()


def test_a_failed_overwrite_keeps_the_old_suite(capsys, tmp_path):
    suite = tmp_path / "S"
    assert run(capsys, "generate", "--steps", "3", "--count", "5", "--out", suite)[0] == 0
    before = {p.name: p.read_bytes() for p in suite.iterdir()}
    code, _, err = run(
        capsys, "generate", "--steps", "95", "--ops", "mul", "--range", "10:100",
        "--count", "1", "--overwrite", "--out", suite,
    )  # fmt: skip
    assert code == 2 and "cannot be generated" in err
    assert {p.name: p.read_bytes() for p in suite.iterdir()} == before
    assert [p.name for p in tmp_path.iterdir()] == ["S"]  # no partial folder left behind
    code, out, _ = run(capsys, "run", suite, "--agent", "sim:oracle", "--out", tmp_path / "r")
    assert code == 0 and "wrote 5 episodes" in out


def test_an_overwrite_that_succeeds_replaces_the_suite(capsys, tmp_path):
    suite = tmp_path / "S"
    run(capsys, "generate", "--steps", "3", "--count", "5", "--out", suite)
    assert (
        run(capsys, "generate", "--steps", "4", "--count", "2", "--overwrite", "--out", suite)[0]
        == 0
    )
    assert len((suite / "procedures.jsonl").read_text().splitlines()) == 2


def test_a_suite_without_its_manifest_is_unfinished(capsys, tmp_path):
    suite = tmp_path / "S"
    run(capsys, "generate", "--steps", "3", "--count", "5", "--out", suite)
    (suite / "suite.json").unlink()
    code, _, err = run(capsys, "run", suite, "--agent", "sim:oracle", "--out", tmp_path / "r")
    assert code == 2 and "unfinished suite: suite.json is missing" in err
    assert not (tmp_path / "r").exists()


def test_procedures_changed_after_generation_are_refused(capsys, tmp_path):
    suite = tmp_path / "S"
    run(capsys, "generate", "--steps", "3", "--count", "5", "--out", suite)
    lines = (suite / "procedures.jsonl").read_text().splitlines()
    (suite / "procedures.jsonl").write_text("\n".join(lines[:-1]) + "\n")
    code, _, err = run(capsys, "run", suite, "--agent", "sim:oracle", "--out", tmp_path / "r")
    assert code == 2 and "does not match the digest in suite.json" in err


def test_replay_of_messages_that_differ_exits_one(capsys, tmp_path):
    scenario = PINNED / "n5-L3-r1_10-mixed-decimal-0000.json"
    data = json.loads(scenario.read_text())
    step = data["steps"][0]["expected_call"]
    messages = [
        {
            "role": "assistant",
            "tool_calls": [
                {
                    "id": "c0",
                    "type": "function",
                    "function": {"name": step["name"], "arguments": json.dumps(step["arguments"])},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c0", "content": "S3 = 999.000"},
    ]
    (tmp_path / "m.json").write_text(json.dumps(messages))
    code, out, _ = run(capsys, "replay", "--scenario", scenario, "--messages", tmp_path / "m.json")
    assert code == 1 and "difference" in out
