"""Every number-valued option refuses a bad value in one usage line (exit 2) that says
what was expected, or the bounds and the value given."""

from __future__ import annotations

import pytest

from tests.helpers import cli


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["run", "S", "--out", "r.jsonl", "--concurrency", "0"], "must be at least 1 (not 0)"),
        (["run", "S", "--out", "r.jsonl", "--retries", "-1"], "must be at least 0 (not -1)"),
        (["run", "S", "--out", "r.jsonl", "--workers", "two"], "a whole number, not 'two'"),
        (["compare", "S", "--trials", "0"], "argument --trials: must be at least 1 (not 0)"),
        (["stress", "S", "--budget", "1.5"], "expected a whole number, not '1.5'"),
        (["generate", "--count", "0"], "argument --count: must be at least 1 (not 0)"),
        (["run", "S", "--out", "r.jsonl", "--timeout", "0"], "seconds above 0 (not 0)"),
        (["run", "S", "--out", "r.jsonl", "--timeout", "inf"], "seconds above 0 (not inf)"),
        (["compare", "S", "--timeout", "soon"], "expected a number of seconds, not 'soon'"),
        (["check", "r.jsonl", "--min-faithful", "high"], "expected a fraction from 0 to 1, not"),
        (["check", "r.jsonl", "--max-drop", "101"], "expected points from 0 to 100 (not 101)"),
        (["check", "r.jsonl", "--max-drop", "x"], "expected a number of points, not 'x'"),
        (["serve-demo", "--port", "-1"], "a port is 0 to 65535 (not -1)"),
        (["serve-mcp", "S", "--out", "r", "--per-cell", "0"], "--per-cell: must be at least 1"),
        (["serve-mcp", "S", "--out", "r", "--budget", "two"], "a whole number, not 'two'"),
        (["serve-mcp", "S", "--out", "r", "--port", "70000"], "a port is 0 to 65535 (not 70000)"),
    ],
)
def test_a_bad_number_is_refused_in_one_usage_line(capsys, argv, said):
    code, out, err = cli(capsys, *argv)
    assert (code, out) == (2, "")
    assert said in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "S", "--out", "r.jsonl"],
        ["stress", "S"],
        ["serve-mcp", "S", "--out", "r.jsonl"],
        ["import-traces", "t.json", "--scenario", "s.json", "--out", "r.jsonl"],
        ["replay", "--scenario", "s.json", "--messages", "m.json"],
    ],
)
def test_an_unknown_guard_is_refused_in_one_usage_line_by_every_command(capsys, argv):
    code, out, err = cli(capsys, *argv, "--guard", "strict")
    assert (code, out) == (2, "")
    said = "argument --guard: unknown guard 'strict' (expected one of: observe, enforce, feedback)"
    assert said in err and len(err.strip().splitlines()) == 1


def test_the_options_of_run_compare_and_stress_parse_alike(capsys):
    from agentproc.cli.parser import build_parser

    shared = ["--agent", "sim:decay", "--concurrency", "3", "--timeout", "2.5", "--retries", "0"]
    shared += ["--budget", "9", "--max-tokens", "64", "--guard", "enforce", "--seed", "7"]
    shared += ["--limit", "4", "--trials", "2", "--resume", "--workers", "2"]
    parser = build_parser()
    parsed = [
        vars(parser.parse_args([command, "S", "--out", "o", *shared]))
        for command in ("run", "compare", "stress")
    ]
    keys = ("agent", "concurrency", "timeout", "retries", "budget", "max_tokens", "guard")
    keys += ("seed", "limit", "trials", "resume", "workers", "backend", "address", "overwrite")
    keys += ("mode", "continue_after_answer", "base_url")
    for args in parsed[1:]:
        assert {k: args[k] for k in keys} == {k: parsed[0][k] for k in keys}
    assert parsed[0]["timeout"] == 2.5 and parsed[0]["mode"] == "tools"
