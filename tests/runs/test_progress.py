"""Progress as log lines when stderr is not a terminal."""

from __future__ import annotations

import io
import math

from rich.console import Console

from agentproc.runs.progress import ProgressLog


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def console() -> tuple[Console, io.StringIO]:
    buf = io.StringIO()
    return Console(file=buf, width=200), buf


def test_a_line_every_interval_with_done_total_accuracy_errors_and_eta():
    con, buf = console()
    clock = Clock()
    log = ProgressLog(con, "sim:decay", total=10, every=30, clock=clock)
    clock.now += 10
    log.add(ran=True, correct=True)
    assert buf.getvalue() == ""  # not yet 30 s
    clock.now += 20
    log.add(ran=True, correct=False, error=True)
    assert buf.getvalue() == (
        "sim:decay: 2/10 episodes, acc 1.000, errors 1, elapsed 0:00:30, ETA 0:02:00\n"
    )
    clock.now += 5
    log.add(ran=True, correct=True)
    assert buf.getvalue().count("\n") == 1  # the next line waits for the next interval


def test_skipped_episodes_count_as_done_but_not_in_the_rate_or_eta():
    con, buf = console()
    clock = Clock()
    log = ProgressLog(con, "a", total=4, every=0, clock=clock)
    log.add(ran=False)
    log.add(ran=False)
    assert buf.getvalue().splitlines()[-1] == (
        "a: 2/4 episodes, acc -, errors 0, elapsed 0:00:00, ETA ?"
    )
    clock.now += 60
    log.add(ran=True, correct=False)
    assert buf.getvalue().splitlines()[-1] == (
        "a: 3/4 episodes, acc 0.000, errors 0, elapsed 0:01:00, ETA 0:01:00"
    )


def test_unknown_total_shows_a_question_mark():
    con, _ = console()
    log = ProgressLog(con, "a", total=None, every=0, clock=Clock())
    log.add(ran=True, correct=True)
    assert log.line() == "a: 1/? episodes, acc 1.000, errors 0, elapsed 0:00:00, ETA ?"


def test_the_bar_figures_are_accuracy_of_scored_episodes_tokens_per_second_and_errors():
    con, buf = console()
    clock = Clock()
    log = ProgressLog(con, "a", total=4, every=math.inf, clock=clock)
    assert log.fields() == {"acc": "-", "tps": "0", "errors": 0}
    clock.now += 2
    log.add(ran=True, correct=True, tokens=30)
    log.add(ran=True, error=True)
    log.add(ran=True, correct=False, tokens=10)
    assert log.fields() == {"acc": "0.500", "tps": "20", "errors": 1}
    assert buf.getvalue() == ""  # the bar shows them: no log line
