"""What each CLI command does: call the library, render the result."""

from __future__ import annotations

import argparse
import itertools
import json
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table

from agentproc.cli.output import (
    EXIT_BAD_INPUT,
    EXIT_ERRORED,
    EXIT_FAILED,
    EXIT_OK,
    failures,
    print_json,
    say,
)
from agentproc.errors import ConfigError, InputError, WorkerError, counted
from agentproc.outputs import check_output, input_files

if TYPE_CHECKING:
    from agentproc.labelling.order import OrderPolicy


def generate_command(args: argparse.Namespace, out: Console, err: Console) -> int:
    from pydantic import ValidationError

    from agentproc.jsonio import read_json
    from agentproc.procedures import default_folder, holds_suite, write_suite
    from agentproc.procedures.suites import distance_summary

    if args.workflow is not None:
        return _generate_workflow(args, out)
    try:
        grid = _grid(args)
    except ValidationError as exc:
        e = exc.errors()[0]
        where = ".".join(str(p) for p in e["loc"] if not isinstance(p, int))
        if not where:  # a whole grid cell refused (a range whose low end is above its high)
            where = "ranges" if "range" in e["msg"] else "blocks"
        source = (
            args.preset if args.preset and args.preset.endswith(".json") else "generate options"
        )
        raise ConfigError(f"{source}: {where}: {e['msg']} (got {e.get('input')!r})") from None
    if args.out is None:
        args.out = default_folder(grid, args.preset)
    if not args.overwrite and holds_suite(args.out, grid):
        out.print(
            f"{args.out} already holds this suite ({grid.count * len(grid.cells())} procedures, "
            "same grid, count and seed): nothing to write",
            highlight=False,
        )
        return EXIT_OK
    if (args.out / "procedures.jsonl").exists() and not args.overwrite:
        raise ConfigError(f"{args.out} already holds another suite: use --overwrite to replace it")
    n = write_suite(grid, args.out)
    out.print(f"wrote {n} procedures in {len(grid.cells())} cells to {args.out}", highlight=False)
    for row in distance_summary(read_json(args.out / "suite.json")):
        shares = ", ".join(f"{d}: {share:.1%}" for d, share in row["shares"].items())
        out.print(
            f"look-back {row['lookback']}: realised distance at most {row['realised']}; "
            f"steps by distance {shares}",
            highlight=False,
        )
    return EXIT_OK


def _generate_workflow(args: argparse.Namespace, out: Console) -> int:
    """``generate --workflow FILE --count N --seed S --out SUITE``."""
    from agentproc.procedures.files import SCENARIOS
    from agentproc.workflow.declared_suite import load_workflow, write_workflow_suite

    grid_only = [f"--{k}" for k in ("preset", "steps", "lookback", "ops") if getattr(args, k)]
    grid_only += ["--range"] * bool(args.ranges) + ["--mode"] * bool(args.modes)
    if grid_only:
        raise ConfigError(f"generate --workflow takes no {', '.join(grid_only)} (a grid's options)")
    if args.out is None:
        raise ConfigError("generate --workflow needs --out SUITE (the folder to write)")
    wf = load_workflow(args.workflow)
    taken = any((args.out / name).exists() for name in (SCENARIOS, "procedures.jsonl"))
    if taken and not args.overwrite:
        raise ConfigError(f"{args.out} already holds a suite: use --overwrite to replace it")
    count, seed = args.count or 10, args.seed or 0
    n = write_workflow_suite(wf, args.out, count, seed, args.workflow.stem)
    steps, dead = len(wf.spec.steps), wf.live.count(False)
    out.print(
        f"wrote {n} instances of {args.workflow.stem} ({steps} steps, {dead} dead) to {args.out}",
        highlight=False,
    )
    return EXIT_OK


def _grid(args: argparse.Namespace) -> Any:
    from agentproc.procedures import Block, Grid, preset

    if args.preset:
        grid = preset(args.preset)
    elif args.steps:
        grid = Grid(blocks=[Block(steps=args.steps)])
    else:
        raise ConfigError("generate needs --preset or --steps")
    block_overrides = {
        k: v
        for k, v in {
            "steps": args.steps,
            "lookback": args.lookback,
            "ranges": args.ranges,
            "ops": args.ops,
            "modes": args.modes,
        }.items()
        if v is not None
    }
    if block_overrides:
        blocks = [b.model_copy(update=block_overrides) for b in grid.blocks]
        grid = Grid.model_validate(
            {**grid.model_dump(), "blocks": [b.model_dump() for b in blocks]}
        )
    updates = {k: v for k, v in {"count": args.count, "seed": args.seed}.items() if v is not None}
    if updates:
        grid = Grid.model_validate({**grid.model_dump(), **updates})
    grid.cells()  # validates every cell before anything is written
    return grid


def scenario_command(args: argparse.Namespace, out: Console, err: Console) -> int:
    from agentproc.workflow import load_scenarios

    for s in load_scenarios(args.suite):
        if args.scenario_id in (None, s.id):
            out.file.write(json.dumps(s.model_dump(mode="json"), indent=2) + "\n")
            return EXIT_OK
    raise InputError(args.suite, f"no scenario with id {args.scenario_id!r}", "id")


def run_command(args: argparse.Namespace, out: Console, err: Console) -> int:
    from agentproc.runs import in_shard, parse_shard, run_suite, select
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
        from agentproc.workflow.declared import check_applies

        check_applies(first, args.mode, spec.options.variant)  # type: ignore[union-attr]
    scenarios = itertools.chain([] if first is None else [first], scenarios)
    _check_whole_suite(args.suite)
    total = _total(args, shard, args.trials)
    if total is None and args.limit is not None and args.limit <= AHEAD:
        ahead = list(scenarios)  # at most --limit of them: the run's total is known
        total, scenarios = len(ahead) * args.trials, iter(ahead)
    episodes = spec.episodes(model)
    summary = run_suite(scenarios, args.agent, episodes, args.out, total=total, **options)
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
            args.agent,
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
    errored = f"{counted(summary.errored, 'episode')} errored ({kinds})" if summary.errored else ""
    return failures(err, summary.aborted, errored)


def _check_run_out(args: argparse.Namespace) -> None:
    """The run file passes the output rule (:func:`~agentproc.outputs.check_output`); an
    existing one is continued (``--resume``), replaced (``--overwrite``) or, when empty,
    written over. A run file to resume must be readable."""
    inputs = [*input_files(args.suite)]
    if isinstance(args.variant, str) and args.variant.endswith((".toml", ".json")):
        inputs.append(Path(args.variant))
    check_output(args.out, inputs=inputs, overwrite=True, kept=_cache_store(args))
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


def agent_spec(args: argparse.Namespace) -> tuple[Any, Any]:
    """The agent the options name and how it runs (checked: the variant takes the guard),
    and the workers it runs on: ``--workers``, ``--backend`` and ``--address`` (an address
    only joins a Ray cluster; one that does not answer within ``--timeout`` fails).

    An unknown agent fails here, before any file is touched, for every backend; over
    workers each builds its own model (an embedded one is not loaded in this process too).
    """
    from agentproc.agents.retry import RetryPolicy
    from agentproc.agents.spec import AgentSpec
    from agentproc.agents.suite import ModelRunOptions
    from agentproc.runs import Workers
    from agentproc.workflow.variant import load_variant

    if args.address is not None and args.backend != "ray":
        raise ConfigError(
            "--address and --backend processes: an address is a Ray cluster's (add --backend ray)"
        )
    workers = Workers(args.workers, args.backend, args.address, connect_timeout=args.timeout)
    variant = load_variant(getattr(args, "variant", "default"))
    variant.check(args.mode, args.guard)
    order: OrderPolicy = getattr(args, "order", "listed")
    options = ModelRunOptions(
        concurrency=args.concurrency,
        guard=args.guard,
        mode=args.mode,
        budget=args.budget,
        continue_after_answer=args.continue_after_answer,
        seed=args.seed,
        retry=RetryPolicy(attempts=args.retries + 1, timeout=args.timeout),
        variant=variant,
        order=order,
        cache=cache_config(args),
        debug=args.debug,
    )
    if args.debug and workers.parallel:
        raise ConfigError("--debug stops a run in this process: drop --workers")
    spec = AgentSpec(
        args.agent, options, args.base_url, args.timeout, args.max_tokens, args.tool_choice
    )
    if workers.parallel:
        spec.check()
    return spec, workers


def _cache_store(args: argparse.Namespace) -> list[Path]:
    """The response cache's store the options name (none: no cache)."""
    folder, mode = getattr(args, "cache", None), getattr(args, "cache_mode", None)
    if (folder is None and mode is None) or mode == "off":
        return []
    from agentproc.agents.cache import default_cache_dir
    from agentproc.agents.cache_store import store_path
    from agentproc.cli.parser import CACHE_DEFAULT

    return [store_path(default_cache_dir() if folder in (None, CACHE_DEFAULT) else folder)]


def cache_config(args: argparse.Namespace) -> Any:
    """The response cache ``--cache`` and ``--cache-mode`` ask for (``None``: none)."""
    folder, mode = getattr(args, "cache", None), getattr(args, "cache_mode", None)
    if (folder is None and mode is None) or mode == "off":
        return None
    from agentproc.agents.cache import CacheConfig, check_store, default_cache_dir
    from agentproc.agents.factory import is_factory_spec
    from agentproc.cli.parser import CACHE_DEFAULT

    if args.agent.startswith("sim:") or is_factory_spec(args.agent):
        raise ConfigError(
            f"--cache keeps the replies of a model agent (local, openai:MODEL); "
            f"{args.agent} is not one"
        )
    if folder is None or folder == CACHE_DEFAULT:
        folder = default_cache_dir()
    check_output(folder, folder=True, option="--cache")
    config = CacheConfig(folder, mode or "readwrite")
    check_store(folder, read_only=not config.writes)  # before any episode, named if unusable
    return config


def _selfcheck_scenarios(args: argparse.Namespace) -> list[Any] | None:
    """The scenarios ``selfcheck --suite`` or ``--workflow`` checks on (``None``: the
    grid's procedures); read before anything runs, so a bad one is refused at once."""
    if args.suite is not None:
        from agentproc.workflow import load_scenarios, per_cell

        scenarios = list(per_cell(load_scenarios(args.suite), args.count))
        if not scenarios:
            raise InputError(args.suite, "holds no scenario: nothing to check")
        return scenarios
    if args.workflow is not None:
        from agentproc.workflow.declared_suite import load_workflow, workflow_scenarios

        wf = load_workflow(args.workflow)
        return list(workflow_scenarios(wf, args.workflow.stem, args.count, args.seed))
    return None


def selfcheck_command(args: argparse.Namespace, out: Console, err: Console) -> int:
    from rich.progress import Progress

    if args.selfcond is not None:
        from agentproc.cli.selfcond import selfcond_command

        return selfcond_command(args, out, err)

    from agentproc.agents.sim import INJECTORS
    from agentproc.agents.sim.selfcheck import cells, run_selfcheck, run_selfcheck_on
    from agentproc.workflow.variant import load_variant

    variant = load_variant(args.variant)
    scenarios = _selfcheck_scenarios(args)
    runs = len(cells()) * args.count if scenarios is None else len(scenarios)
    total = runs * len(INJECTORS)
    with Progress(console=err, disable=not err.is_terminal) as progress:
        task = progress.add_task("selfcheck", total=total)
        if scenarios is None:
            result = run_selfcheck(
                count=args.count,
                seed=args.seed,
                on_episode=lambda: progress.advance(task),
                variant=None if variant.is_default else variant,
                order=args.order,
            )
        else:
            result = run_selfcheck_on(
                scenarios,
                seed=args.seed,
                on_episode=lambda: progress.advance(task),
                variant=None if variant.is_default else variant,
                order=args.order,
            )
    if args.json:
        print_json(out, result.to_json())
    else:
        table = Table(title=f"monitor vs injected truth: {result.episodes} single-fault episodes")
        for col in ("label", "truth", "found", "agreed", "precision", "recall"):
            table.add_column(col, justify="left" if col == "label" else "right")
        rows = [*result.scores.items()]
        rows += [(f"  cause {c}", s) for c, s in result.causes.items()]
        for kind, s in rows:
            table.add_row(
                kind,
                str(s.truth),
                str(s.predicted),
                str(s.agreed),
                f"{s.precision:.4f}",
                f"{s.recall:.4f}",
            )
        out.print(table)
        say(out, *result.mismatches[:10])
        if result.passed_over:
            out.print(
                f"{result.passed_over} procedures replaced: every step has a twin computing "
                "the same operation on the same values, so no fault reads one way by values",
                highlight=False,
            )
        out.print(
            "all labels: precision 1.0, recall 1.0"
            if result.perfect
            else "the monitor disagrees with the truth"
        )
    return EXIT_OK if result.perfect else EXIT_FAILED


def variants_command(args: argparse.Namespace, out: Console, err: Console) -> int:
    from agentproc.workflow.variant import DEFAULT_VARIANT, load_variant, shipped_variants

    shipped = [DEFAULT_VARIANT, *(load_variant(name) for name in shipped_variants())]
    if args.json:
        rows = [
            {
                "name": v.name,
                "description": v.description,
                "changes": v.changes(),
                "digest": v.digest,
                "variant": v.spec(),
            }
            for v in shipped
        ]
        print_json(out, rows)
        return EXIT_OK
    title = f"{len(shipped)} shipped variants (run --variant NAME or FILE)"
    table = Table("variant", "what it changes", "description", title=title)
    for v in shipped:
        table.add_row(v.name, ", ".join(v.changes()) or "nothing", v.description)
    out.print(table)
    return EXIT_OK
