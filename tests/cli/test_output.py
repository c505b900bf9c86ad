"""What the commands share when they say how a run went: plain lines, and one exit status
for a run that stopped or whose episodes errored."""

from __future__ import annotations

import io
from types import SimpleNamespace

from rich.console import Console

from agentproc.cli.output import EXIT_ERRORED, EXIT_OK, failures, say
from agentproc.runs import RunSummary


def _console() -> tuple[Console, io.StringIO]:
    buf = io.StringIO()
    return Console(file=buf, width=100, force_terminal=True), buf


def test_say_prints_brackets_and_numbers_as_they_are():
    console, buf = _console()
    say(console, "[bold]shard 1/4[/bold] took 3 s")
    assert buf.getvalue() == "[bold]shard 1/4[/bold] took 3 s\n"  # no markup, no colour


def test_say_prints_each_of_several_lines_and_nothing_for_none():
    console, buf = _console()
    say(console, "first [x]", "second")
    say(console)
    assert buf.getvalue() == "first [x]\nsecond\n"


def test_a_run_that_stopped_says_why_and_exits_3():
    console, buf = _console()
    assert failures(console, "the endpoint failed", "2 episodes errored (endpoint 2)") == 3
    assert buf.getvalue() == "agentproc: the endpoint failed\n"


def test_errored_episodes_are_said_with_how_to_run_them_again():
    console, buf = _console()
    assert failures(console, None, "2 episodes errored (endpoint 2)") == EXIT_ERRORED
    assert buf.getvalue() == (
        "agentproc: 2 episodes errored (endpoint 2) and count in no figure; "
        "--resume runs them again\n"
    )


def test_a_run_without_failures_says_nothing_and_exits_0():
    console, buf = _console()
    assert failures(console, None, "") == EXIT_OK and buf.getvalue() == ""


def test_compare_names_each_variant_whose_episodes_errored():
    from agentproc.cli.sweeps import _after_runs

    console, buf = _console()
    summaries = {
        "default": RunSummary(errors={"endpoint": 2}),
        "terse": RunSummary(),
        "prose": RunSummary(errors={"harness": 1}),
    }
    ran = SimpleNamespace(warnings=["a warning"], aborted=None, summaries=summaries)
    assert _after_runs(ran, console) == EXIT_ERRORED
    assert buf.getvalue() == (
        "a warning\nagentproc: episodes errored (default 2, prose 1) and count in no figure; "
        "--resume runs them again\n"
    )
