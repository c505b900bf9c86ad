"""``run --workers N`` and ``run --backend ray``: one run over several processes.

The suite is cut into deterministic spans of shards (by scenario id, as ``--shard
i-j/n``; :func:`~agentproc.runs.shards.plan`), largest first. Each span runs as an
ordinary ``agentproc run --shard i-j/n --resume`` into its own file (see
:mod:`agentproc.runs.shards`), taken by the next free worker: one of N local worker
processes (``processes``, the default backend) or a Ray task on a cluster (``ray``), so
the workers end together however their speeds differ. The parent holds the run file's
lock throughout, shows one progress bar for all spans, merges the files as far as they
go once a worker is left with nothing to do, and puts the merge in the run file when
every span is done.
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import time
from collections.abc import Callable, Collection, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from agentproc.cli.local_backend import ShardRun
from agentproc.cli.output import EXIT_BAD_INPUT, EXIT_ERRORED, EXIT_INTERRUPTED, EXIT_OK, fail
from agentproc.errors import AgentprocError, InputError

if TYPE_CHECKING:
    from agentproc.runs import EpisodeKey, EpisodeRecord
    from agentproc.runs.shards import ShardMerge
    from agentproc.runs.split import Shard

_NOT_FORWARDED = frozenset(
    {"command", "out", "overwrite", "resume", "workers", "backend", "address", "shard"}
)
"""Run options the parent keeps to itself; the rest reach every shard as given."""
POLL = 0.5
"""Seconds between two looks at the shard files' progress."""


def child_argv(args: argparse.Namespace) -> list[str]:
    """The ``run`` options of ``args`` as command-line words, for a shard's run."""
    from agentproc.cli.parser import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    words: list[str] = []
    for action in sub.choices["run"]._actions:
        if action.dest in _NOT_FORWARDED or action.dest == "help":
            continue
        value = getattr(args, action.dest, None)
        if not action.option_strings:
            words[:0] = ["run", str(value)]
        elif value is None or value == action.default:
            continue
        elif isinstance(action, argparse._StoreTrueAction):
            words.append(action.option_strings[0])
        else:
            words += [action.option_strings[0], _word(value)]
    return words


def _word(value: Any) -> str:
    if isinstance(value, list | tuple):
        return ",".join(map(str, value))
    return str(value)


def _suite_order(suite: Path) -> dict[str, int]:
    """Scenario id -> position in the suite, read without compiling anything."""
    if suite.is_dir():
        from agentproc.procedures.files import procedure_ids

        # Each shard checks its own procedures: the ids alone are read here, without the
        # models, unless a line is laid out otherwise than a generated suite's.
        ids: Iterator[str] = procedure_ids(suite, _procedure_id)
    else:
        from agentproc.workflow import load_scenarios

        ids = (s.id for s in load_scenarios(suite))
    return {sid: i for i, sid in enumerate(ids)}


def _procedure_id(target: Path, where: str, data: Any) -> str:
    from agentproc.procedures.suites import procedure_id

    return procedure_id(target, where, data)


Tick = Callable[[Collection[int], bool], None]
"""Called while the spans run, with those (numbered from 0, in plan order) whose run has
ended for good and whether a worker has nothing left to do: shows progress, and merges
once a core is free."""


class Backend(Protocol):
    """What runs the spans: made before the run file's lock is taken (local workers start
    then), called once, then closed."""

    def __call__(self, runs: list[ShardRun], tick: Tick) -> list[int | None]:
        """Run the spans (their ``run`` words, each with its log), handed out in order;
        their exit statuses in that order (``None``: a span not run, after another
        failed)."""
        ...

    def close(self) -> None:
        """Stop whatever it still runs."""
        ...


def _process_backend(args: argparse.Namespace) -> Backend:
    """Run the spans in ``--workers`` local worker processes."""
    from agentproc.cli.local_backend import local_runner

    return local_runner(args.workers)


def _ray_backend(args: argparse.Namespace) -> Backend:
    """Run each span as a Ray task (retried by Ray if its worker dies)."""
    from agentproc.cli.ray_backend import ray_runner

    return ray_runner(args.address, args.workers)


BACKENDS: dict[str, Callable[[argparse.Namespace], Backend]] = {
    "processes": _process_backend,
    "ray": _ray_backend,
}
"""``--backend`` -> what runs the shards."""


class _Done:
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


def _first_error(log: Path) -> str:
    try:
        lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return "(no output)"
    errors = [ln for ln in lines if ln.startswith("agentproc")]
    return (errors or lines or ["(no output)"])[-1]


class _Watch:
    """The parent's part while the spans run (a :data:`Tick`): the progress bar, every
    :data:`POLL` seconds when there is one, and the merge so far, once a worker has
    nothing left to do and its core is free (before that, merging would take time from
    the workers)."""

    def __init__(self, merge: ShardMerge | None, progress: Callable[[], None] | None) -> None:
        self.merge = merge
        self.progress = progress
        self.shown = -POLL

    def __call__(self, finished: Collection[int], free: bool) -> None:
        now = time.monotonic()
        if self.progress is not None and now - self.shown >= POLL:
            self.progress()
            self.shown = now
        if free and finished and self.merge is not None:
            before = self.merge.written
            try:
                self.merge.advance(finished)
                if self.merge.written > before:
                    self.merge.push()
            except AgentprocError:  # a shard line that does not read: the final merge says so
                self.merge.close()
                self.merge = None


def spans_of(args: argparse.Namespace) -> list[Shard]:
    """The spans a run is cut into: many (see :func:`~agentproc.runs.shards.plan`) when each
    worker keeps a core busy (a simulated agent, or one episode at a time); one per worker
    when a model server sets the pace with several episodes in flight (a small span would
    end with fewer in flight)."""
    from agentproc.runs.shards import plan

    return plan(args.workers, fine=args.agent.startswith("sim:") or args.concurrency == 1)


def run_sharded(args: argparse.Namespace, out: Console, err: Console) -> int:
    """``run`` over ``args.workers`` shards on ``args.backend``; the parent's side."""
    from agentproc.runs import RunWriter
    from agentproc.runs.shards import (
        ShardMerge,
        merge_shards,
        other_shard_folders,
        shard_file,
        shard_folder,
        shard_spec,
        split_run,
        take_up,
    )

    if args.shard is not None:
        raise fail("--shard and --workers/--backend ray: choose one (the workers are the shards)")
    if args.limit is not None or getattr(args, "per_cell", None) is not None:
        raise fail(
            "--limit and --per-cell work on one process: drop --workers, or generate a "
            "smaller suite"
        )
    n = args.workers
    run: Path = args.out
    if run.is_dir():
        raise InputError(run, "is a folder, not a run file")
    if run.exists() and run.stat().st_size and not (args.resume or args.overwrite):
        raise fail(
            f"{run} already exists: use --resume to continue it or --overwrite to replace it"
        )
    stale = other_shard_folders(run, n)
    if stale and args.resume:
        raise fail(
            f"{stale[0]} holds an unfinished run over other workers: resume it with "
            f"--workers {stale[0].name.rsplit('-', 1)[1]}"
        )
    order = _suite_order(args.suite)  # bad suites fail here, before any worker starts
    folder = shard_folder(run, n)
    spans = spans_of(args)
    files = [shard_file(folder, s) for s in spans]
    # Local workers start now, before the lock is taken (none holds it), and import the
    # run stack while the folder is made ready.
    with (
        contextlib.closing(BACKENDS[args.backend](args)) as backend,
        RunWriter(run, append=True) as writer,  # the lock: one writer per run file
    ):
        if args.overwrite and not args.resume:
            for old in [folder, *stale]:
                shutil.rmtree(old, ignore_errors=True)
        if args.resume and not folder.exists() and run.stat().st_size:
            split_run([run], folder, spans)
        if args.resume and (strays := sorted(set(folder.glob("shard-*-of-*.jsonl")) - set(files))):
            take_up(folder, strays, spans, order)  # shards cut otherwise (an older layout)
        folder.mkdir(parents=True, exist_ok=True)
        base = child_argv(args)
        runs: list[ShardRun] = [
            ([*base, "--shard", shard_spec(s), "--out", str(f), "--resume"], f.with_suffix(".log"))
            for s, f in zip(spans, files, strict=True)
        ]
        total = len(order) * getattr(args, "trials", 1)
        bar = Progress(
            TextColumn(f"[bold]{args.agent}, {n} workers"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=err,
            disable=not err.is_terminal,
        )
        task = bar.add_task("run", total=total)
        done = _Done(folder)
        watch = _Watch(
            ShardMerge(folder, files, order),
            (lambda: bar.update(task, completed=done())) if err.is_terminal else None,
        )
        try:
            with bar:
                codes = backend(runs, watch)
        except KeyboardInterrupt:
            if watch.merge is not None:
                watch.merge.close()
            err.print(
                f"agentproc: interrupted; the shards are kept in {folder}: --resume --workers {n} "
                "goes on",
                markup=False,
                highlight=False,
            )
            return EXIT_INTERRUPTED
        bad = [k for k, c in enumerate(codes) if c not in (EXIT_OK, EXIT_ERRORED, None)]
        bad = bad or [k for k, c in enumerate(codes) if c is None]  # a worker ended early
        if bad:
            if watch.merge is not None:
                watch.merge.close()  # the run file stays as it was
            k, code = bad[0], codes[bad[0]]
            what = "was not run" if code is None else f"failed (exit {code})"
            err.print(
                f"agentproc: shard {shard_spec(spans[k])} {what}: {_first_error(runs[k][1])}; "
                f"the shards are kept in {folder}",
                markup=False,
                highlight=False,
            )
            return code if code in (EXIT_BAD_INPUT, EXIT_INTERRUPTED) else 1
        if watch.merge is None:  # the merge so far stopped at a shard line that does not read
            latest: dict[EpisodeKey, EpisodeRecord] = {}
            written = merge_shards(folder, spans, writer, order, latest)
        else:
            written, latest = watch.merge.install(writer), watch.merge.latest
    verdicts: dict[str, int] = {}
    errored = 0
    for rec in latest.values():
        if rec.get("stop_reason") == "error":
            errored += 1
            continue
        verdicts[rec["verdict"]] = verdicts.get(rec["verdict"], 0) + 1
    shown = ", ".join(f"{k} {v}" for k, v in sorted(verdicts.items())) or "none scored"
    out.print(f"wrote {written} episodes to {run} ({n} workers): {shown}", highlight=False)
    if errored:
        err.print(
            f"agentproc: {errored} episodes errored and count in no figure; --resume runs them "
            "again",
            markup=False,
            highlight=False,
        )
        return EXIT_ERRORED
    return EXIT_OK
