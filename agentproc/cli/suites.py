"""The commands that make and read suites and list the variants: ``generate``,
``scenario`` and ``variants``."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from agentproc.cli.output import EXIT_OK, print_json
from agentproc.errors import ConfigError, InputError, unknown_key


def generate_command(args: argparse.Namespace, out: Console, err: Console) -> int:
    from pydantic import ValidationError

    from agentproc.jsonio import read_json
    from agentproc.outputs import check_suite_folder
    from agentproc.procedures import default_folder, holds_suite, write_suite
    from agentproc.procedures.suites import distance_summary
    from agentproc.workflow.declared.suite import PRESETS

    if args.preset in PRESETS and args.workflow is None:  # a shipped suite of workflows
        from agentproc.resources import folder

        shipped = folder("workflows")
        args.workflow = [shipped / f"{name}.toml" for name in PRESETS[args.preset]]
        args.out = args.out or Path("suites") / args.preset
        args.preset = None
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
    preset_file = [Path(args.preset)] if args.preset else []
    check_suite_folder(args.out, inputs=preset_file, overwrite=args.overwrite)
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
    """``generate --workflow FILE [--workflow FILE ...] --count N --seed S --out SUITE``."""
    from agentproc.outputs import check_suite_folder
    from agentproc.workflow.declared.suite import load_workflow, write_workflows_suite

    grid_only = [f"--{k}" for k in ("preset", "steps", "lookback", "ops") if getattr(args, k)]
    grid_only += ["--range"] * bool(args.ranges) + ["--mode"] * bool(args.modes)
    if grid_only:
        raise ConfigError(f"generate --workflow takes no {', '.join(grid_only)} (a grid's options)")
    if args.out is None:
        raise ConfigError("generate --workflow needs --out SUITE (the folder to write)")
    files: list[Path] = args.workflow
    check_suite_folder(args.out, inputs=files, overwrite=args.overwrite)
    workflows = [(load_workflow(f), f.stem) for f in files]
    count, seed = args.count or 10, args.seed or 0
    paths: dict[str, int] = {}
    n = write_workflows_suite(workflows, args.out, count, seed, balance=args.balance, paths=paths)
    shape = {
        name: f"({len(wf.steps)} steps, {wf.live.count(False)} dead)" for wf, name in workflows
    }
    if len(workflows) == 1:
        name = workflows[0][1]
        out.print(f"wrote {n} instances of {name} {shape[name]} to {args.out}", highlight=False)
    else:
        out.print(
            f"wrote {n} instances of {len(workflows)} workflows to {args.out}:", highlight=False
        )
        for name, text in shape.items():
            out.print(f"  {name}: {count} instances {text}", highlight=False)
    if paths:
        shown = ", ".join(f"{name} {k}" for name, k in paths.items())
        out.print(f"paths: {shown}", highlight=False)
    return EXIT_OK


def _grid(args: argparse.Namespace) -> Any:
    from agentproc.procedures import Block, Grid, preset

    if args.preset:
        from agentproc.procedures.grid import presets
        from agentproc.workflow.declared.suite import PRESETS

        name = args.preset
        if not (name.endswith(".json") or "/" in name or name in presets()):
            raise unknown_key("preset", name, [*presets(), *PRESETS])
        grid = preset(name)
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
