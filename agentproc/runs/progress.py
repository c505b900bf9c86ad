"""Progress of a run: the figures of its progress bar, and log lines for a stderr that
is not a terminal.

A progress bar redraws itself in place, which a CI log or a ``nohup`` file
cannot show; there, a line every few seconds (done/total, accuracy, errors,
time left) shows the run is alive.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from rich.console import Console

LOG_EVERY = 30.0
"""Seconds between two progress lines when stderr is not a terminal."""


def _duration(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


class ProgressLog:
    """Counts a run's episodes for its progress bar (:meth:`fields`) and prints
    ``agent: done/total, acc, errors, ETA`` at most every ``every`` seconds (never with
    ``every=math.inf``: the bar shows them)."""

    def __init__(
        self,
        console: Console,
        agent: str,
        total: int | None,
        every: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.console, self.agent, self.total, self.clock = console, agent, total, clock
        self.every = LOG_EVERY if every is None else every
        self.start = self.last = clock()
        self.done = self.ran = self.correct = self.errors = self.tokens = 0

    def add(
        self, *, ran: bool, correct: bool = False, error: bool = False, tokens: int = 0
    ) -> None:
        """Count one episode (``ran`` False: skipped by resume) and log if it is time."""
        self.done += 1
        self.ran += ran
        self.correct += correct and not error
        self.errors += error
        self.tokens += tokens
        now = self.clock()
        if now - self.last >= self.every:
            self.last = now
            self.console.print(self.line(now), markup=False, highlight=False)

    def fields(self) -> dict[str, Any]:
        """The progress bar's figures: accuracy, output tokens per second, errors."""
        scored = self.ran - self.errors
        tps = self.tokens / max(self.clock() - self.start, 1e-9)
        acc = f"{self.correct / scored:.3f}" if scored else "-"
        return {"acc": acc, "tps": f"{tps:.0f}", "errors": self.errors}

    def line(self, now: float | None = None) -> str:
        """The progress line as of ``now``."""
        elapsed = (self.clock() if now is None else now) - self.start
        scored = self.ran - self.errors
        acc = f"{self.correct / scored:.3f}" if scored else "-"
        total = "?" if self.total is None else str(self.total)
        eta = "?"
        if self.total is not None and self.ran:
            left = max(self.total - self.done, 0)
            eta = _duration(elapsed / self.ran * left)
        return (
            f"{self.agent}: {self.done}/{total} episodes, acc {acc}, errors {self.errors}, "
            f"elapsed {_duration(elapsed)}, ETA {eta}"
        )
