"""The commands that run an agent under several variants: ``compare`` and ``stress``."""

from __future__ import annotations

import argparse
from typing import Any

from rich.console import Console

from agentproc.cli.output import EXIT_BAD_INPUT, EXIT_ERRORED, EXIT_OK, failures, print_json, say
from agentproc.errors import ConfigError


def _suite_run(args: argparse.Namespace, err: Console) -> tuple[Any, list[Any]]:
    """How to run the agent over the suite, and its scenarios (validated before running)."""
    from agentproc.cli.agent_options import agent_spec
    from agentproc.experiments import SuiteRun
    from agentproc.outputs import check_output, input_files
    from agentproc.runs import select
    from agentproc.workflow import load_scenarios

    if len(args.inputs) != 1:
        raise ConfigError(f"{args.command} runs one suite (got {len(args.inputs)} paths)")
    if args.out is None:
        raise ConfigError(
            f"{args.command} SUITE needs --out DIR: one run file per variant goes there"
        )
    check_output(args.out, folder=True)  # before the suite is read
    if args.variants is not None and not args.variants:
        raise ConfigError("--variants names no variant (drop it to sweep every shipped one)")
    spec, workers = agent_spec(args)
    agent = spec if workers.parallel else spec.built()
    scenarios = list(select(load_scenarios(args.inputs[0]), None, args.limit))
    how = SuiteRun(
        agent=agent,
        out=args.out,
        trials=args.trials,
        resume=args.resume,
        overwrite=args.overwrite,
        seed=args.seed,
        console=err,
        workers=workers,
        inputs=tuple(input_files(args.inputs[0])),
    )
    return how, scenarios


def _after_runs(ran: Any, err: Console) -> int:
    """Say what failed in the runs; the exit status they call for."""
    say(err, *ran.warnings)
    which = ", ".join(f"{n} {s.errored}" for n, s in ran.summaries.items() if s.errored)
    return failures(err, ran.aborted, f"episodes errored ({which})" if which else "")


def compare_command(args: argparse.Namespace, out: Console, err: Console) -> int:
    from agentproc.analysis.compare.arms import compare_files
    from agentproc.analysis.compare.text import render_compare

    status = EXIT_OK
    if args.html is not None:
        from agentproc.outputs import check_output

        check_output(args.html, inputs=args.inputs, overwrite=args.overwrite, option="--html")
    if args.variants:
        from agentproc.experiments import compare_suite

        how, scenarios = _suite_run(args, err)
        result, ran = compare_suite(scenarios, args.variants, how, baseline=args.baseline)
        status = _after_runs(ran, err)
        if result is None:
            return status
        runs = [args.out / f"{name}.jsonl" for name in ran.summaries]
    else:
        for path in args.inputs:
            if path.is_dir():
                raise ConfigError(f"{path} is a folder: compare a suite with --variants a,b")
        result, warnings = compare_files(args.inputs, baseline=args.baseline, seed=args.seed)
        say(err, *warnings)
        runs = list(args.inputs)
    shown = _shown(result, result, render_compare, args.json, out, err, status)
    if args.html is not None and shown == status:
        from agentproc.analysis.html.compare_page import write_compare_html

        page = write_compare_html(runs, result, args.html)
        say(
            err if args.json else out,
            f"wrote {args.html}: the comparison of {len(runs)} runs, "
            f"drill-down embedded for {page.detailed} of {page.episodes} episodes",
        )
    return shown


def _shown(
    result: Any, compared: Any, render: Any, json: bool, out: Console, err: Console, status: int
) -> int:
    """Print ``result`` (as JSON, or as ``render`` draws it) and return ``status``; unless
    its comparison ``compared`` compares nothing: that is said in one line, and the exit
    status is its own."""
    from agentproc.analysis.compare.incomparable import incomparable, lost_to_errors

    why = incomparable(compared)
    if why is not None:
        say(err, f"agentproc: error: {why.message}")
        return EXIT_ERRORED if why.why == "errored" else EXIT_BAD_INPUT
    lost = lost_to_errors(compared)
    if lost:  # the design changed: said, and the exit status of errored episodes
        say(err, *(f"agentproc: error: {line}" for line in lost))
        status = EXIT_ERRORED
    if json:
        print_json(out, result.to_json())
    else:
        render(result, out)
    return status


def stress_command(args: argparse.Namespace, out: Console, err: Console) -> int:
    from agentproc.experiments import stress_suite
    from agentproc.experiments.render import render_stress
    from agentproc.experiments.stress import share_grid

    shares = share_grid(args.variants) if args.grid else None
    how, scenarios = _suite_run(args, err)
    if shares is not None:  # the curve over the share of wrong pre-filled steps
        return _share_curve(scenarios, how, shares, args, out, err)
    result, ran = stress_suite(
        scenarios, how, variants=args.variants, grid=args.grid, threshold=args.threshold
    )
    status = _after_runs(ran, err)
    if result is None:
        return status
    return _shown(result, result.compare, render_stress, args.json, out, err, status)


def _share_curve(
    scenarios: Any, how: Any, variants: Any, args: argparse.Namespace, out: Console, err: Console
) -> int:
    from agentproc.experiments.run import share_suite
    from agentproc.experiments.share_render import render_share_curve

    curve, ran = share_suite(scenarios, how, variants)
    status = _after_runs(ran, err)
    if curve is None:
        return status
    if args.json:
        print_json(out, curve.to_json())
    else:
        render_share_curve(curve, out)
    return status
