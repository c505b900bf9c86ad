"""``agentproc run``: an agent over a suite (in this process or over workers), into a
run file, its outcome said."""

from __future__ import annotations

import argparse
import itertools
from functools import partial
from pathlib import Path
from typing import Any

from rich.console import Console

from agentproc.cli.agent_options import agent_spec, cache_store
from agentproc.cli.output import EXIT_BAD_INPUT, EXIT_ERRORED, EXIT_FAILED, failures, say
from agentproc.errors import ConfigError, InputError, WorkerError, counted, one_line
from agentproc.outputs import check_output, input_files


def run_command(args: argparse.Namespace, out: Console, err: Console) -> int:
    from agentproc.runs import RunSummary, in_shard, parse_shard, run_suite, select
    from agentproc.workflow import load_scenarios, per_cell

    _check_run_out(args)
    spec, workers = agent_spec(args)
    model = None if workers.parallel else spec.model()
    shard = parse_shard(args.shard) if args.shard is not None else None
    options = {
        "concurrency": spec.concurrency(),
        "resume": args.resume,
        "console": err,
        "mode": args.mode,
        "trials": args.trials,
        "variant": spec.options.variant.name,  # type: ignore[union-attr]
        "self_contained": args.self_contained,
        "name": args.name,
        "settings": spec.settings(),
        "guard": spec.guard(),
        "debug": args.debug,
    }
    if workers.parallel:
        return _run_workers(args, spec, workers, options, out, err)
    # A shard compiles only its own scenarios (per-cell counts are over the whole suite).
    keep = None if shard is None or args.per_cell is not None else partial(in_shard, shard=shard)
    loaded = load_scenarios(args.suite, keep)
    scenarios = select(per_cell(loaded, args.per_cell), shard, args.limit)
    # The suite is read as the run goes; its first scenario is read now, so that an
    # unfinished or altered suite is refused before the run file is touched.
    first = next(scenarios, None)
    if first is None and shard is None and args.per_cell is None:
        where = args.suite / "procedures.jsonl" if args.suite.is_dir() else args.suite
        raise InputError(where, "holds no scenario: nothing to run")
    if first is not None:
        from agentproc.workflow.declared.compile import check_applies

        check_applies(first, args.mode, spec.options.variant)  # type: ignore[union-attr]
    scenarios = itertools.chain([] if first is None else [first], scenarios)
    _check_whole_suite(args.suite)
    total = _total(args, shard, args.trials)
    if total is None and args.limit is not None and args.limit <= AHEAD:
        ahead = list(scenarios)  # at most --limit of them: the run's total is known
        total, scenarios = len(ahead) * args.trials, iter(ahead)
    episodes = spec.episodes(model)
    counted_so_far = RunSummary()  # what an interrupted run wrote, said as it stops
    replacing = bool(args.out.is_file() and args.out.stat().st_size and not args.resume)
    try:
        summary = run_suite(
            scenarios,
            spec.recorded(),
            episodes,
            args.out,
            total=total,
            summary=counted_so_far,
            **options,
        )
    except KeyboardInterrupt:
        raise KeyboardInterrupt(_kept(args.out, counted_so_far, replacing)) from None
    if summary.torn_bytes:
        say(
            err,
            f"agentproc: {args.out}: cut off a torn last line ({summary.torn_bytes} bytes of an "
            "interrupted write) before resuming",
        )
    skipped = f" ({summary.skipped} already done)" if summary.skipped else ""
    wrote = f"wrote {counted(summary.written, 'episode')} to {args.out}{skipped}"
    return _said(summary, wrote, out, err)


def _run_workers(
    args: argparse.Namespace,
    spec: Any,
    workers: Any,
    options: dict[str, Any],
    out: Console,
    err: Console,
) -> int:
    """``run`` over ``--workers`` (or on Ray): one library call, its failures said."""
    from agentproc.runs import run_suite

    if args.shard is not None:
        raise ConfigError(
            "--shard and --workers/--backend ray: choose one (the workers are the shards)"
        )
    if args.limit is not None or args.per_cell is not None:
        raise ConfigError(
            "--limit and --per-cell work on one process: drop --workers, or generate a "
            "smaller suite"
        )
    try:
        summary = run_suite(
            args.suite,
            spec.recorded(),
            spec,
            args.out,
            workers=workers,
            overwrite=args.overwrite,
            **options,
        )
    except WorkerError as exc:
        say(err, f"agentproc: {exc}")
        return EXIT_BAD_INPUT if exc.input_error else EXIT_ERRORED if exc.errored else EXIT_FAILED
    return _said(
        summary,
        f"wrote {counted(summary.written, 'episode')} to {args.out} "
        f"({counted(summary.workers, 'worker')})",
        out,
        err,
    )


def _said(summary: Any, wrote: str, out: Console, err: Console) -> int:
    """Print what a run wrote and what failed; its exit status."""
    verdicts = ", ".join(f"{k} {v}" for k, v in sorted(summary.verdicts.items()))
    if not verdicts:  # nothing scored: say why plainly
        resumed = getattr(summary, "skipped", 0) and not summary.written
        verdicts = "all were already done, nothing left to run" if resumed else "none scored"
    out.print(f"{wrote}: {verdicts}", highlight=False)
    kinds = ", ".join(f"{k} {v}" for k, v in sorted(summary.errors.items()))
    first = getattr(summary, "first_error", None)
    cause = f"; the first: {one_line(first)}" if first and summary.aborted is None else ""
    errored = (
        f"{counted(summary.errored, 'episode')} errored ({kinds}{cause})" if summary.errored else ""
    )
    return failures(err, summary.aborted, errored)


def _kept(out: Path, summary: Any, replacing: bool) -> str:
    """What an interrupted run leaves, and how to go on."""
    if replacing:
        return f"{out} is left as it was (--overwrite replaces it only when a run ends)"
    before = f", {summary.skipped} done before" if summary.skipped else ""
    return (
        f"{counted(summary.written, 'episode')} of this run saved to {out}{before}; "
        "run the same command with --resume to go on"
    )


def _check_run_out(args: argparse.Namespace) -> None:
    """The run file passes the output rule (:func:`~agentproc.outputs.check_output`); an
    existing one is continued (``--resume``), replaced (``--overwrite``) or, when empty,
    written over. A run file to resume must be readable."""
    inputs = [*input_files(args.suite)]
    if isinstance(args.variant, str) and args.variant.endswith((".toml", ".json")):
        inputs.append(Path(args.variant))
    check_output(args.out, inputs=inputs, overwrite=True, kept=cache_store(args))
    if args.out.exists() and args.out.stat().st_size and not (args.resume or args.overwrite):
        raise ConfigError(
            f"{args.out} already exists: use --resume to continue it or --overwrite to replace it"
        )
    if args.resume and args.out.exists():
        try:
            with open(args.out, "rb"):
                pass
        except OSError as exc:
            raise InputError(args.out, f"cannot read it to resume: {exc.strerror}") from None


def _check_whole_suite(suite: Path) -> None:
    """Read every procedure (or scenario) of ``suite`` before the first episode is written,
    so that a bad line far in refuses the run with nothing written. A suite whose
    manifest holds the digest of its procedures (or scenarios) was checked against it when
    its first scenario was read (the bytes ``generate`` wrote); any other suite's
    procedures are parsed, not compiled (a tenth of the cost)."""
    from agentproc.jsonio import read_json
    from agentproc.procedures import MANIFEST, read_procedures
    from agentproc.procedures.files import SCENARIOS
    from agentproc.workflow import load_scenarios

    if suite.is_dir():
        manifest = read_json(suite / MANIFEST)
        if isinstance(manifest, dict) and isinstance(manifest.get("sha256"), str):
            return
    if suite.is_dir() and (suite / SCENARIOS).is_file():  # a declared workflow's suite
        for _ in load_scenarios(suite):
            pass
        return
    for _ in read_procedures(suite) if suite.is_dir() else load_scenarios(suite):
        pass


AHEAD = 10_000
"""Scenarios ``run --limit`` reads before the run to know its total (when the suite does not
say how many it holds); a larger limit leaves the total unknown."""


def _total(args: argparse.Namespace, shard: Any, trials: int = 1) -> int | None:
    """Episodes a run will go through, when known without reading the suite."""
    from agentproc.workflow import suite_size

    size = suite_size(args.suite)
    if size is None or shard is not None or args.per_cell is not None:
        return None
    return min(size, args.limit or size) * trials
