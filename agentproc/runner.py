"""Run an agent over a suite: episodes in order, each appended to the run file as it ends."""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from agentproc.agents.retry import RetryPolicy
from agentproc.episode import run_sim_episode
from agentproc.errors import ConfigError
from agentproc.runs import RunWriter, completed_ids, drop_torn_tail, episode_record
from agentproc.toolkit import Guard
from agentproc.types import Episode, Scenario


def parse_shard(text: str) -> tuple[int, int]:
    """``"2/4"`` -> ``(2, 4)``: the second of four shards (numbered from 1)."""
    try:
        i, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise ConfigError(f"--shard must look like i/n, e.g. 1/4 (not {text!r})") from None
    if not 1 <= i <= n:
        raise ConfigError(f"--shard {text}: i must be between 1 and n")
    return i, n


def in_shard(scenario_id: str, shard: tuple[int, int] | None) -> bool:
    """Whether a scenario belongs to a shard; the split depends on the id alone."""
    if shard is None:
        return True
    digest = hashlib.sha256(scenario_id.encode()).digest()
    return int.from_bytes(digest[:8], "big") % shard[1] == shard[0] - 1


@dataclass
class RunSummary:
    """What a run did."""

    written: int = 0
    skipped: int = 0
    """Episodes already in the run file (``--resume``)."""
    verdicts: dict[str, int] = field(default_factory=dict)
    torn_bytes: int = 0

    def add(self, ep: Episode) -> None:
        """Count one written episode."""
        self.written += 1
        verdict = ep.metrics["verdict"]
        self.verdicts[verdict] = self.verdicts.get(verdict, 0) + 1


def _start(out: Path, resume: bool) -> tuple[RunSummary, set[tuple[str, str]]]:
    """A fresh summary and, when resuming, the episodes already in ``out`` (torn tail cut)."""
    summary = RunSummary()
    if not resume:
        return summary, set()
    summary.torn_bytes = drop_torn_tail(out)
    return summary, completed_ids(out)


def _progress(console: Console, fields: str) -> Progress:
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn(fields),
        TimeRemainingColumn(),
        console=console,
        disable=not console.is_terminal,
    )


def select(
    scenarios: Iterable[Scenario], shard: tuple[int, int] | None = None, limit: int | None = None
) -> Iterator[Scenario]:
    """The scenarios of one shard, at most ``limit`` of them."""
    n = 0
    for s in scenarios:
        if limit is not None and n >= limit:
            return
        if in_shard(s.id, shard):
            n += 1
            yield s


def run_suite(
    scenarios: Iterable[Scenario],
    agent: str,
    out: Path,
    *,
    seed: int = 0,
    guard: Guard = "observe",
    resume: bool = False,
    total: int | None = None,
    console: Console | None = None,
) -> RunSummary:
    """Run a simulated agent over scenarios, appending each episode to ``out``."""
    summary, done = _start(out, resume)
    progress = _progress(console or Console(stderr=True), "acc {task.fields[acc]}")
    with RunWriter(out, append=resume) as writer, progress:
        task = progress.add_task(agent, total=total, acc="-")
        correct = 0
        for scenario in scenarios:
            if (scenario.id, agent) in done:
                summary.skipped += 1
                progress.advance(task)
                continue
            ep = run_sim_episode(scenario, agent, seed=seed, guard=guard)
            writer.write(episode_record(ep))
            summary.add(ep)
            correct += ep.metrics["first_answer_correct"]
            progress.update(task, advance=1, acc=f"{correct / summary.written:.3f}")
    return summary


@dataclass
class ModelRunOptions:
    """How a model agent is run."""

    concurrency: int = 1
    guard: Guard = "observe"
    mode: str = "tools"
    """``tools`` (the compiled workflow) or ``text`` (the reference study's protocol)."""
    budget: int | None = None
    continue_after_answer: bool = False
    seed: int = 0
    retry: RetryPolicy = field(default_factory=lambda: RetryPolicy())


async def arun_model_suite(
    scenarios: Iterable[Scenario],
    agent: str,
    model: Any,
    out: Path,
    options: ModelRunOptions,
    *,
    resume: bool = False,
    total: int | None = None,
    console: Console | None = None,
) -> RunSummary:
    """Run a chat model over scenarios, ``concurrency`` episodes at a time.

    Each finished episode is appended and flushed at once, so an interruption
    (Ctrl-C, a crash, ``kill -9``) loses at most the episodes in flight, and
    ``resume`` picks up where the file ends.
    """
    from agentproc.agents.harness import arun_model_episode

    summary, done = _start(out, resume)
    stats = _LiveStats()
    progress = _progress(
        console or Console(stderr=True),
        "acc {task.fields[acc]}  tok/s {task.fields[tps]}  errors {task.fields[errors]}",
    )
    gate = asyncio.Semaphore(max(1, options.concurrency))

    async def one(scenario: Scenario) -> Episode:
        try:
            if options.mode == "text":
                from agentproc.agents.text import arun_text_episode

                return await arun_text_episode(
                    scenario, model, agent, retry=options.retry, seed=options.seed
                )
            return await arun_model_episode(
                scenario,
                model,
                agent,
                guard=options.guard,
                budget=options.budget,
                continue_after_answer=options.continue_after_answer,
                retry=options.retry,
                seed=options.seed,
            )
        finally:
            gate.release()

    with RunWriter(out, append=resume) as writer, progress:
        task = progress.add_task(agent, total=total, acc="-", tps="-", errors=0)
        pending: set[asyncio.Task[Episode]] = set()

        def finish(done_tasks: set[asyncio.Task[Episode]]) -> None:
            for t in done_tasks:
                ep = t.result()
                writer.write(episode_record(ep))
                summary.add(ep)
                stats.add(ep)
                progress.update(task, advance=1, **stats.fields())

        try:
            for scenario in scenarios:
                if (scenario.id, agent) in done:
                    summary.skipped += 1
                    progress.advance(task)
                    continue
                await gate.acquire()
                pending.add(asyncio.create_task(one(scenario)))
                finished = {t for t in pending if t.done()}
                pending -= finished
                finish(finished)
            while pending:
                finished, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                finish(finished)
        finally:
            for t in pending:
                t.cancel()
    return summary


class _LiveStats:
    """Running accuracy, throughput and errors for the progress line."""

    def __init__(self) -> None:
        self.n = self.correct = self.tokens = self.errors = 0
        self.start = time.perf_counter()

    def add(self, ep: Episode) -> None:
        self.n += 1
        self.correct += bool(ep.metrics["first_answer_correct"])
        usage = ep.extra.get("usage", {})
        self.tokens += usage.get("output_tokens", 0)
        self.errors += ep.stop_reason == "error"

    def fields(self) -> dict[str, Any]:
        elapsed = max(time.perf_counter() - self.start, 1e-9)
        return {
            "acc": f"{self.correct / self.n:.3f}",
            "tps": f"{self.tokens / elapsed:.0f}",
            "errors": self.errors,
        }
