"""``agentproc selfcheck``: the monitor against injected faults, on the grid's
procedures, a suite's scenarios or a declared workflow's instances."""

from __future__ import annotations

import argparse
from typing import Any

from rich.console import Console
from rich.table import Table

from agentproc.cli.output import EXIT_FAILED, EXIT_OK, print_json, say
from agentproc.errors import InputError


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
        from agentproc.workflow.declared.suite import load_workflow, workflow_scenarios

        wf = load_workflow(args.workflow)
        return list(workflow_scenarios(wf, args.workflow.stem, args.count, args.seed))
    return None


def selfcheck_command(args: argparse.Namespace, out: Console, err: Console) -> int:
    from rich.progress import Progress

    if args.selfcond is not None:
        from agentproc.cli.selfcond import selfcond_command

        return selfcond_command(args, out, err)

    from agentproc.agents.sim import INJECTORS
    from agentproc.agents.sim.faults import BRANCH_INJECTORS, FAITHFUL
    from agentproc.agents.sim.selfcheck import cells, run_selfcheck, run_selfcheck_on
    from agentproc.workflow.variant import load_variant

    variant = load_variant(args.variant)
    scenarios = _selfcheck_scenarios(args)
    each = len(INJECTORS) + len(FAITHFUL)  # the episodes of one scenario
    if scenarios is None:
        total = len(cells()) * args.count * each
    else:  # a branched instance adds its own injectors
        total = sum(each + len(BRANCH_INJECTORS) * (s.path is not None) for s in scenarios)
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
        # wrong_argument's causes, then (a branched workflow's) every other kind's.
        rows += [
            (f"  cause {c}" if ":" not in c else c.replace(":", " cause "), s)
            for c, s in result.causes.items()
        ]
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
        faithful = ", ".join(
            f"{agent} {f.faithful} of {f.episodes}" for agent, f in result.faithful.items()
        )
        out.print(f"faithful episodes of the agents that make no mistake: {faithful}")
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
