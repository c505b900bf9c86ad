"""Run an agent over a suite: episodes in order, each appended to the run file as it ends."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from agentproc.episode import run_sim_episode
from agentproc.errors import ConfigError
from agentproc.runs import RunWriter, completed_ids, drop_torn_tail, episode_record
from agentproc.toolkit import Guard
from agentproc.types import Scenario


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
    summary = RunSummary()
    done: set[tuple[str, str]] = set()
    if resume:
        summary.torn_bytes = drop_torn_tail(out)
        done = completed_ids(out)
    console = console or Console(stderr=True)
    progress = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("acc {task.fields[acc]}"),
        TimeRemainingColumn(),
        console=console,
        disable=not console.is_terminal,
        transient=False,
    )
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
            summary.written += 1
            verdict = ep.metrics["verdict"]
            summary.verdicts[verdict] = summary.verdicts.get(verdict, 0) + 1
            correct += ep.metrics["first_answer_correct"]
            progress.update(task, advance=1, acc=f"{correct / summary.written:.3f}")
    return summary
