"""``run --workers N`` and ``run --backend ray``: one run over several processes.

The suite is cut into N deterministic shards (by scenario id, as ``--shard i/n``).
Each shard runs as an ordinary ``agentproc run --shard k/N --resume`` into its own
file (see :mod:`agentproc.runs.shards`): in a local process (``processes``, the
default backend) or as a Ray task on a cluster (``ray``). The parent holds the
run file's lock throughout, shows one progress bar for all shards, and merges the
shard files into the run file when every shard is done.
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Collection, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from agentproc.cli.output import EXIT_BAD_INPUT, EXIT_ERRORED, EXIT_INTERRUPTED, EXIT_OK, fail
from agentproc.errors import AgentprocError, InputError

if TYPE_CHECKING:
    from agentproc.runs import EpisodeKey, EpisodeRecord
    from agentproc.runs.shards import ShardMerge

_NOT_FORWARDED = frozenset(
    {"command", "out", "overwrite", "resume", "workers", "backend", "address", "shard"}
)
"""Run options the parent keeps to itself; the rest reach every shard as given."""
POLL = 0.5
"""Seconds between two looks at the shard files' progress."""
WAKE = 0.05
"""Seconds between two looks at the workers: how soon the merge starts on a core one of
them has left, and how soon the run ends after the last."""


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


Tick = Callable[[Collection[int]], None]
"""Called every :data:`WAKE` seconds while shards run, with the shards (numbered from 0)
whose run has ended for good: shows progress, and merges once a core is free."""
Backend = Callable[[list[list[str]], Path, Tick], list[int]]
"""Runs each shard's ``run`` words; returns their exit statuses in shard order."""


def _process_backend(args: argparse.Namespace) -> Backend:
    """Run each shard's ``agentproc run`` in a local process."""

    def run_all(argvs: list[list[str]], folder: Path, tick: Tick) -> list[int]:
        procs = []
        for k, argv in enumerate(argvs, start=1):
            log = open(folder / f"shard-{k}.log", "wb")  # noqa: SIM115 (closed below)
            procs.append(
                (
                    subprocess.Popen(
                        [sys.executable, "-m", "agentproc", *argv],
                        stdout=log,
                        stderr=subprocess.STDOUT,
                        stdin=subprocess.DEVNULL,
                    ),
                    log,
                )
            )
        try:
            while True:
                running = [p for p, _ in procs if p.poll() is None]
                tick({k for k, (p, _) in enumerate(procs) if p.returncode is not None})
                if not running:
                    return [int(p.returncode) for p, _ in procs]
                with contextlib.suppress(subprocess.TimeoutExpired):
                    running[0].wait(timeout=WAKE)  # back at once when it ends
        finally:
            for p, log in procs:
                if p.poll() is None:
                    p.terminate()
                    p.wait()
                log.close()

    return run_all


def _ray_backend(args: argparse.Namespace) -> Backend:
    """Run each shard as a Ray task (retried by Ray if its worker dies)."""
    from agentproc.cli.ray_backend import ray_runner

    return ray_runner(args.address)


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


def _first_error(folder: Path, k: int) -> str:
    log = folder / f"shard-{k}.log"
    try:
        lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return "(no output)"
    errors = [ln for ln in lines if ln.startswith("agentproc")]
    return (errors or lines or ["(no output)"])[-1]


class _Watch:
    """The parent's part while the shards run (a :data:`Tick`): the progress bar, every
    :data:`POLL` seconds when there is one, and the merge so far, once a worker has
    ended and left its core free (before that, merging would take time from the
    workers)."""

    def __init__(self, merge: ShardMerge | None, progress: Callable[[], None] | None) -> None:
        self.merge = merge
        self.progress = progress
        self.shown = -POLL

    def __call__(self, finished: Collection[int]) -> None:
        now = time.monotonic()
        if self.progress is not None and now - self.shown >= POLL:
            self.progress()
            self.shown = now
        if finished and self.merge is not None:
            try:
                self.merge.advance(finished)
            except AgentprocError:  # a shard line that does not read: the final merge says so
                self.merge.close()
                self.merge = None


def run_sharded(args: argparse.Namespace, out: Console, err: Console) -> int:
    """``run`` over ``args.workers`` shards on ``args.backend``; the parent's side."""
    from agentproc.runs import RunWriter
    from agentproc.runs.shards import (
        ShardMerge,
        merge_shards,
        other_shard_folders,
        shard_file,
        shard_files,
        shard_folder,
        split_run,
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
    with RunWriter(run, append=True) as writer:  # the lock: one writer per run file
        if args.overwrite and not args.resume:
            for old in [folder, *stale]:
                shutil.rmtree(old, ignore_errors=True)
        if args.resume and not folder.exists() and run.stat().st_size:
            split_run(run, folder, n)
        folder.mkdir(parents=True, exist_ok=True)
        base = child_argv(args)
        argvs = [
            [*base, "--shard", f"{k}/{n}", "--out", str(shard_file(folder, k, n)), "--resume"]
            for k in range(1, n + 1)
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
            ShardMerge(folder, shard_files(folder, n), order),
            (lambda: bar.update(task, completed=done())) if err.is_terminal else None,
        )
        try:
            with bar:
                codes = BACKENDS[args.backend](args)(argvs, folder, watch)
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
        bad = [k for k, c in enumerate(codes, start=1) if c not in (EXIT_OK, EXIT_ERRORED)]
        if bad and watch.merge is not None:
            watch.merge.close()  # the run file stays as it was
        if bad:
            k = bad[0]
            err.print(
                f"agentproc: shard {k}/{n} failed (exit {codes[k - 1]}): "
                f"{_first_error(folder, k)}; the shards are kept in {folder}",
                markup=False,
                highlight=False,
            )
            return codes[k - 1] if codes[k - 1] in (EXIT_BAD_INPUT, EXIT_INTERRUPTED) else 1
        if watch.merge is None:  # the merge so far stopped at a shard line that does not read
            latest: dict[EpisodeKey, EpisodeRecord] = {}
            written = merge_shards(folder, n, writer, order, latest)
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
