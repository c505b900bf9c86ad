"""Run an agent over a suite: episodes in flight up to a limit, each appended to the
run file as it ends.

One runner for every kind of agent: it takes an *episode function* (a scenario in,
an :class:`Episode` out, awaited) and owns the rest: resume, shards, the run file,
progress. Each finished episode is appended and flushed at once, so an
interruption (Ctrl-C, a crash, ``kill -9``) loses at most the episodes in flight,
and ``resume`` picks up where the file ends.
"""

from __future__ import annotations

import asyncio
import itertools
import math
from collections.abc import Awaitable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from agentproc.errors import AgentFault, one_line
from agentproc.runs.collector import frozen
from agentproc.runs.episode import Episode, Mode
from agentproc.runs.progress import ProgressLog
from agentproc.runs.records import SettingsRecord, episode_record
from agentproc.runs.redact import redact
from agentproc.runs.resume import Held, check_agent, check_scenario, held_in, run_identity
from agentproc.runs.session import EpisodeSession, harness_error
from agentproc.runs.split import Shard, in_shard
from agentproc.runs.writer import RunWriter
from agentproc.workflow import Guard, Scenario


class EpisodeFn(Protocol):
    """Runs one episode of a scenario (the agent is bound in); ``trial`` picks the repetition."""

    def __call__(self, scenario: Scenario, trial: int = 0) -> Awaitable[Episode]: ...


def select(
    scenarios: Iterable[Scenario], shard: Shard | None = None, limit: int | None = None
) -> Iterator[Scenario]:
    """The scenarios of one shard, at most ``limit`` of them (none read past the last)."""
    return itertools.islice((s for s in scenarios if in_shard(s.id, shard)), limit)


START_PROBE = 3
"""A run whose first this-many episodes all fail (at the endpoint, or in the harness: a
factory's agent that raises) stops there: a bad key, an unknown model, a server that is
down or an agent that raises would fail every episode. So does a run whose harness fails
on this many episodes in a row anywhere (an endpoint may fail for a while and recover; a
harness that fails again and again does not)."""
PROBED = frozenset({"endpoint", "harness"})
"""The failures :data:`START_PROBE` counts (a context overflow is its scenario's length)."""


@dataclass
class RunSummary:
    """What a run did."""

    written: int = 0
    skipped: int = 0
    """Episodes already in the run file (``--resume``)."""
    verdicts: dict[str, int] = field(default_factory=dict)
    """Scored episodes per verdict (errored ones are not scored)."""
    errors: dict[str, int] = field(default_factory=dict)
    """Episodes an infrastructure failure ended, per kind (``--resume`` runs them again)."""
    torn_bytes: int = 0
    aborted: str | None = None
    """Why the run stopped early: the endpoint failed on every one of the first episodes."""
    first_error: str | None = None
    """The message of the run's first infrastructure failure, said beside their count."""
    scored: int = 0
    workers: int = 1
    """Processes (or Ray tasks) the run was cut over, after capping."""

    def add(self, ep: Episode) -> None:
        """Count one written episode."""
        self.written += 1
        self.tally(ep.error.kind if ep.error is not None else None, ep.metrics["verdict"])
        if ep.error is not None and self.first_error is None:
            self.first_error = ep.error.message

    def tally(self, error: str | None, verdict: str) -> None:
        """Count an episode's failure of kind ``error`` or, when none, its verdict."""
        if error is not None:
            self.errors[error] = self.errors.get(error, 0) + 1
            return
        self.scored += 1
        self.verdicts[verdict] = self.verdicts.get(verdict, 0) + 1

    @property
    def errored(self) -> int:
        """Episodes an infrastructure failure ended."""
        return sum(self.errors.values())


def _progress(console: Console) -> Progress:
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn(
            "acc {task.fields[acc]}  tok/s {task.fields[tps]}  errors {task.fields[errors]}"
        ),
        TimeRemainingColumn(),
        console=console,
        disable=not console.is_terminal,
    )


async def arun_suite(
    scenarios: Iterable[Scenario],
    agent: str,
    episode: EpisodeFn,
    out: Path,
    *,
    concurrency: int = 1,
    resume: bool = False,
    total: int | None = None,
    console: Console | None = None,
    mode: Mode = "tools",
    trials: int = 1,
    variant: str = "default",
    self_contained: bool = False,
    name: str | None = None,
    settings: SettingsRecord | None = None,
    guard: Guard = "observe",
    debug: bool = False,
    summary: RunSummary | None = None,
) -> RunSummary:
    """Run ``episode`` over scenarios, ``concurrency`` at a time, appending each to ``out``.

    Each scenario runs ``trials`` times (trial 0 to ``trials - 1``), under the
    variant named ``variant`` (which keys the episodes for ``resume``). Records refer to
    a suite's scenarios unless ``self_contained`` (:func:`episode_record`). A ``name``
    (``run --name``) is stored in every record and keys its episodes in place of the agent,
    and so are the ``settings`` that change what the agent sees or does; ``guard`` is the
    one its episodes run under (an errored episode is recorded under it).

    With ``resume``, a torn last line is cut off and the episodes already in
    ``out`` whose last record is not an error are skipped (errored ones run again); a file
    of another agent, or of another version of a scenario, is refused
    (:mod:`agentproc.runs.resume`). ``summary``, when given, is counted into as the run
    goes: what an interrupted run wrote.
    An episode function that raises gives an episode with a ``harness`` error; if
    the first :data:`START_PROBE` episodes all fail at the endpoint or in the harness
    and none succeeded, the run stops (``summary.aborted`` says why). The first harness
    error is said on ``console``, where the agent's code raised it included; with
    ``debug`` the run stops there (its episode written) and raises
    :class:`~agentproc.errors.AgentFault` with the full traceback.
    """
    summary = summary if summary is not None else RunSummary()
    console = console or Console(stderr=True)
    identity = run_identity(agent, name, settings)
    progress = _progress(console)
    log = ProgressLog(console, agent, total, math.inf if console.is_terminal else None)
    gate = asyncio.Semaphore(max(1, concurrency))

    async def one(scenario: Scenario, trial: int) -> Episode:
        try:
            ep = await episode(scenario, trial)
        except Exception as exc:  # a bug, not an agent mistake: recorded, never scored
            session = EpisodeSession(scenario, agent, mode=mode, guard=guard)
            session.fail(harness_error(exc))
            ep = session.finish("error")
            ep.variant = variant
        finally:
            gate.release()
        ep.trial = trial
        return ep

    # Locks ``out`` first; the collector leaves out what exists before the run.
    with RunWriter(out, append=resume) as writer, progress, frozen():
        summary.torn_bytes = writer.torn_bytes
        holds = held_in(out) if resume else Held()
        check_agent(out, holds, identity)
        task = progress.add_task(agent, total=total, acc="-", tps="-", errors=0)
        pending: set[asyncio.Task[Episode]] = set()

        def finish(done_tasks: set[asyncio.Task[Episode]]) -> None:
            for t in sorted(done_tasks, key=order.__getitem__):
                ep = t.result()
                del order[t]  # a finished task holds its episode: let both go
                writer.write(episode_record(ep, self_contained, name, settings))
                summary.add(ep)
                log.add(
                    ran=True,
                    correct=bool(ep.metrics["first_answer_correct"]),
                    error=ep.error is not None,
                    tokens=(ep.usage or {}).get("output_tokens", 0),
                )
                progress.update(task, advance=1, **log.fields())
                # An overflow is its scenario's length, not the agent's or its endpoint's.
                if ep.error is not None and ep.error.kind in PROBED and not summary.scored:
                    failed.append((ep.error.kind, ep.error.message))
                # A harness that fails again and again (a factory's agent that raises) is
                # no agent's doing, wherever in the run: another episode would fail too.
                harness = ep.error is not None and ep.error.kind == "harness"
                in_a_row[:] = [*in_a_row, ep.error.message] if harness else []  # type: ignore[union-attr]
                if harness and not said:
                    said.append(ep.scenario.id)
                    _say_fault(console, ep, debug)
            if summary.aborted is not None:
                return
            if len(failed) >= START_PROBE:
                kind, message = failed[0]
                summary.aborted = (
                    f"the {kind} failed on each of the first {len(failed)} episodes, so the "
                    f"run stopped: {message}"
                )
            elif len(in_a_row) >= START_PROBE:
                summary.aborted = (
                    f"the harness failed on {len(in_a_row)} episodes in a row, so the run "
                    f"stopped: {in_a_row[0]}"
                )

        order: dict[asyncio.Task[Episode], int] = {}
        failed: list[tuple[str, str]] = []
        in_a_row: list[str] = []  # the messages of the harness failures just before
        said: list[str] = []  # the scenario whose harness error was said
        try:
            for scenario, trial in _trials(scenarios, trials):
                if summary.aborted is not None:
                    break
                if trial == 0 and holds.digests:
                    check_scenario(out, holds, scenario)
                if (scenario.id, identity, mode, variant, trial) in holds.done:
                    summary.skipped += 1
                    progress.advance(task)
                    log.add(ran=False)
                    continue
                await gate.acquire()
                started = asyncio.create_task(one(scenario, trial))
                order[started] = len(order)
                pending.add(started)
                finished = {t for t in pending if t.done()}
                pending -= finished
                finish(finished)
            while pending and summary.aborted is None:
                finished, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                finish(finished)
        finally:
            for t in pending:
                t.cancel()
    return summary


def _say_fault(console: Console, ep: Episode, debug: bool) -> None:
    """Say the first harness error of a run, and where the agent raised it; with
    ``debug``, stop the run there with its full traceback, redacted as the error is (the
    exception's message and any source line may quote a key or a URL's password)."""
    import traceback

    error = ep.error
    if error is None:
        return
    where = f" at {error.frames[-1]}" if error.frames else ""
    if debug:
        cause = error.cause
        text = redact("".join(traceback.format_exception(cause))) if cause is not None else ""
        raise AgentFault(
            f"--debug: the run stopped at its first harness error (scenario "
            f"{ep.scenario.id}, trial {ep.trial}): {error.message}{where}",
            text,
        )
    console.print(
        fault_line(ep.scenario.id, error.message, error.frames),
        markup=False,
        highlight=False,
        soft_wrap=True,
    )


def fault_line(scenario_id: str, message: str, frames: Sequence[str]) -> str:
    """The line that says a run's first harness error, and where the agent raised it."""
    where = f" at {frames[-1]}" if frames else ""
    return (
        f"agentproc: harness error (scenario {scenario_id}): {one_line(message)}"
        f"{one_line(where)}; every one is in the run file; --debug stops at the first with "
        "its traceback"
    )


def _trials(scenarios: Iterable[Scenario], trials: int) -> Iterator[tuple[Scenario, int]]:
    """Each scenario with each trial number, a scenario's trials one after another."""
    for scenario in scenarios:
        for trial in range(max(1, trials)):
            yield scenario, trial
