"""Run a suite: :func:`run_suite`, in this process or over several workers.

The suite is cut into deterministic spans of shards (by scenario id;
:func:`~agentproc.runs.shards.plan`), largest first. Each span runs into its own file
(:mod:`agentproc.runs.shards`) with ``resume``, taken by the next free worker: one of N
local processes (``processes``) or a Ray task on a cluster (``ray``), so the workers end
together however their speeds differ (:mod:`agentproc.runs.pool`). The parent holds the
run file's lock throughout, shows one progress bar for all spans, and when every span is
done merges the files and puts the merge in the run file. A span that fails (its worker
killed, a fault of its input) stops the handing out; the shards stay, and ``resume`` goes
on from them.
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Callable, Collection, Iterable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from agentproc.errors import ConfigError, InputError, WorkerError
from agentproc.outputs import replacing
from agentproc.runs.job import EpisodeFactory, Given, SuiteJob, Workers
from agentproc.runs.loop import run_on_loop
from agentproc.runs.pool import BACKENDS
from agentproc.runs.records import error_kind_of
from agentproc.runs.resume import check_agent, held_in, run_identity
from agentproc.runs.runner import EpisodeFn, RunSummary, arun_suite, fault_line
from agentproc.runs.shards import (
    merge_shards,
    other_shard_folders,
    shard_file,
    shard_folder,
    split_run,
    take_up,
)
from agentproc.runs.span import SpanTask
from agentproc.runs.split import shard_spec
from agentproc.runs.writer import RunWriter, held
from agentproc.workflow import Scenario


class Done:
    """Records the shard files hold so far, counted as they grow: each poll reads only
    what was appended since the last (the workers share the machine with it)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.seen: dict[Path, tuple[int, int]] = {}
        """Shard file -> (bytes counted, lines in them)."""

    def __call__(self) -> int:
        total = 0
        for path in self.folder.glob("shard-*-of-*.jsonl"):
            offset, lines = self.seen.get(path, (0, 0))
            try:
                with open(path, "rb") as fh:
                    if fh.seek(0, 2) < offset:  # cut back (a torn tail repaired): recount
                        offset, lines = 0, 0
                    fh.seek(offset)
                    for chunk in iter(lambda: fh.read(1 << 20), b""):
                        lines += chunk.count(b"\n")
                        offset += len(chunk)
            except OSError:
                pass
            self.seen[path] = (offset, lines)
            total += lines
        return total


def run_parallel(
    job: SuiteJob,
    out: Path,
    workers: Workers,
    *,
    resume: bool = False,
    overwrite: bool = False,
    console: Console | None = None,
) -> RunSummary:
    """Run ``job`` over ``workers`` into ``out`` (see the module's docstring).

    Raises:
        WorkerError: a span failed; the shards are kept (``resume`` goes on from them).
        KeyboardInterrupt: after every worker has stopped; the shards are kept (its message
            says where, and how to go on).
    """
    if out.is_dir():
        raise InputError(out, "is a folder, not a run file")
    order = job.order()  # a bad suite fails here, before any worker starts
    err = console or Console(stderr=True)
    if not (resume and shard_folder(out, workers.count).is_dir()):  # else: go on from them
        workers, capped = workers.fit(len(order))
        if capped is not None:
            err.print(f"agentproc: {capped}", markup=False, highlight=False)
    n = workers.count
    stale = other_shard_folders(out, n)
    if stale and resume:
        raise ConfigError(
            f"{stale[0]} holds an unfinished run over other workers: resume it with "
            f"--workers {stale[0].name.rsplit('-', 1)[1]}"
        )
    folder = shard_folder(out, n)
    if resume:  # another agent is refused before a worker starts
        who = run_identity(job.agent, job.options.get("name"), job.options.get("settings"))
        shards = sorted(folder.glob("shard-*-of-*.jsonl")) if folder.is_dir() else [out]
        for held_file in shards:
            if held_file.is_file():
                check_agent(out, held_in(held_file), who)
    spans = job.spans(n)
    files = [shard_file(folder, s) for s in spans]
    tasks = [
        SpanTask(s, f.absolute(), f.with_suffix(".log").absolute())
        for s, f in zip(spans, files, strict=True)
    ]
    try:
        # Local workers start now, before the lock is taken (none holds it).
        with (
            contextlib.closing(BACKENDS[workers.backend](job, workers)) as backend,
            RunWriter(out, append=True) as writer,  # the lock: one writer per run file
        ):
            if overwrite and not resume:
                for old in [folder, *stale]:
                    shutil.rmtree(old, ignore_errors=True)
            if resume and not folder.exists() and out.stat().st_size:
                split_run([out], folder, spans)
            if resume and (strays := sorted(set(folder.glob("shard-*-of-*.jsonl")) - set(files))):
                take_up(folder, strays, spans, order)  # shards cut otherwise (an older layout)
            folder.mkdir(parents=True, exist_ok=True)
            bar = Progress(
                TextColumn(f"[bold]{job.agent}, {n} workers"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=err,
                disable=not err.is_terminal,
            )
            task = bar.add_task("run", total=len(order) * job.options.get("trials", 1))
            done = Done(folder)
            with bar:  # the shard files are counted only for a bar that is shown
                ends = backend(
                    tasks, lambda: bar.update(task, completed=done()) if err.is_terminal else None
                )
            failed = [k for k, e in enumerate(ends) if e is not None and e.failure is not None]
            failed = failed or [k for k, e in enumerate(ends) if e is None]  # a worker ended early
            if failed:  # the run file stays as it was
                k, end = failed[0], ends[failed[0]]
                raise WorkerError(
                    f"shard {shard_spec(spans[k])} "
                    f"{'was not run' if end is None else end.failure}; "
                    f"the shards are kept in {folder}",
                    input_error=end is not None and end.input_error,
                    errored=end is not None and end.errored,
                )
            written, latest = merge_shards(folder, spans, writer, order)
    except KeyboardInterrupt:  # said by the caller, after every worker has stopped
        raise KeyboardInterrupt(
            f"the shards are kept in {folder}: --resume --workers {n} goes on"
        ) from None
    first = next((r for r in latest.values() if error_kind_of(r) == "harness"), None)
    if first is not None:  # said by a worker into its log: said here too
        error = first["error"]
        line = fault_line(first["scenario_id"], error["message"], error.get("frames", []))
        err.print(line, markup=False, highlight=False, soft_wrap=True)
    return _summary(written, latest.values(), n)


def _summary(written: int, latest: Collection[Any], workers: int) -> RunSummary:
    """What a merged run holds: each episode counted once, as its last record reads."""
    summary = RunSummary(written=written, workers=workers)
    for rec in latest:
        failed = rec.get("stop_reason") == "error"
        summary.tally(error_kind_of(rec) if failed else None, rec["verdict"])
        error = rec.get("error")
        if failed and summary.first_error is None and isinstance(error, dict):
            summary.first_error = str(error.get("message", ""))
    return summary


def run_suite(
    scenarios: Iterable[Scenario] | Path,
    agent: str,
    episode: EpisodeFn | EpisodeFactory,
    out: Path,
    *,
    workers: Workers | int = 1,
    overwrite: bool = False,
    **options: Any,
) -> RunSummary:
    """:func:`arun_suite` from synchronous code, in this process or over ``workers``.

    ``scenarios`` may be a suite folder or scenario file (``Path``), and ``episode`` an
    :class:`~agentproc.runs.job.EpisodeFactory` (built where the episodes run). Over several
    workers (or Ray) the file is the one a process writes (see this module); ``overwrite``
    then drops the shards of an earlier run.

    Examples:
        >>> run_suite(Path("S"), "sim:decay", sim_episodes("sim:decay"), Path("run.jsonl"),
        ...           workers=Workers(2))  # doctest: +SKIP
    """
    spec = Workers(workers) if isinstance(workers, int) else workers
    if spec.parallel:
        resume = options.pop("resume", False)
        console = options.pop("console", None)
        options.pop("total", None)
        suite = scenarios if isinstance(scenarios, Path) else tuple(scenarios)
        factory = episode if isinstance(episode, EpisodeFactory) else Given(episode)
        job = SuiteJob(suite, agent, factory, options)
        return run_parallel(job, out, spec, resume=resume, overwrite=overwrite, console=console)
    if isinstance(scenarios, Path):
        from agentproc.workflow import load_scenarios

        scenarios = load_scenarios(scenarios)
    if isinstance(episode, EpisodeFactory):
        episode = episode.episodes()
    fn = episode

    def run(path: Path) -> RunSummary:
        return run_on_loop(arun_suite(scenarios, agent, fn, path, **options))

    if options.get("resume") or not (out.is_file() and out.stat().st_size):
        return run(out)
    return _replacing_run(out, run)


class _Stopped(Exception):
    def __init__(self, summary: RunSummary) -> None:
        self.summary = summary


def _replacing_run(out: Path, run: Callable[[Path], RunSummary]) -> RunSummary:
    """A run that replaces the earlier run file ``out``: written beside it, and put in its
    place only once it has gone its whole way. A run that stops (its endpoint failed from
    the start: ``summary.aborted``) or raises (Ctrl-C, a fault) leaves ``out``
    byte-identical and nothing beside it."""
    with held(out):  # no other process writes ``out`` meanwhile
        try:
            with replacing(out) as tmp:
                summary = run(tmp)
                if summary.aborted is not None:
                    raise _Stopped(summary)
        except _Stopped as stopped:
            summary = stopped.summary
            summary.aborted = f"{summary.aborted} ({out} is left as it was)"
    return summary
