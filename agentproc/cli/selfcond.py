"""``agentproc selfcheck --selfcond``: the induced measure against sim:selfcond's parameters."""

from __future__ import annotations

import argparse

from rich.console import Console

from agentproc.cli.output import EXIT_FAILED, EXIT_OK, print_json


def selfcond_command(args: argparse.Namespace, out: Console, err: Console) -> int:
    from rich.progress import Progress

    from agentproc.experiments.selfcond_check import CELLS, run_selfcond_check

    with Progress(console=err, disable=not err.is_terminal) as progress:
        task = progress.add_task("selfcheck --selfcond", total=2 * len(CELLS) * args.selfcond)
        result = run_selfcond_check(
            count=args.selfcond, seed=args.seed, on_episode=lambda: progress.advance(task)
        )
    if args.json:
        print_json(out, result.to_json())
    else:
        rows = (
            ("base (clean pre-fill)", result.base, result.clean.value, result.clean.ci),
            (
                "base + lift (wrong pre-fill)",
                result.base + result.lift,
                result.wrong.value,
                result.wrong.ci,
            ),
            ("lift", result.lift, result.wrong.value - result.clean.value, result.lift_ci),
        )
        out.print(f"sim:selfcond, {result.episodes} episodes: own error rate read back")
        for name, truth, got, (lo, hi) in rows:
            mark = "covered" if lo <= truth <= hi else "MISSED"
            out.print(f"  {name}: truth {truth:.3f}, read {got:.3f} [{lo:.3f}, {hi:.3f}] {mark}")
        out.print(
            "the measure recovers the parameters"
            if result.recovered
            else "the measure misses a parameter"
        )
    return EXIT_OK if result.recovered else EXIT_FAILED
