"""Run one agent over the same scenarios under several variants: one run file per variant.

What ``agentproc compare SUITE --variants ...`` and ``agentproc stress`` run
before they compare. Every variant sees the same scenarios and the same trial
seeds, so their episodes pair up scenario by scenario.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rich.console import Console

from agentproc.agents.spec import AgentSpec
from agentproc.errors import ConfigError
from agentproc.outputs import check_output
from agentproc.runs import RunSummary, Workers, run_suite
from agentproc.workflow import Scenario
from agentproc.workflow.variant import Variant


def check_outputs(
    out: Path,
    variants: Sequence[Variant],
    *,
    resume: bool,
    overwrite: bool,
    inputs: Sequence[Path] = (),
) -> list[Path]:
    """The run files of ``variants`` under ``out``, refusing duplicates, files that would
    be replaced silently, and any that :func:`~agentproc.outputs.check_output` refuses
    (one of ``inputs``, a special file, a path under a file), before anything runs."""
    names = [v.name for v in variants]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ConfigError(f"--variants: two variants are named {', '.join(twice)}")
    paths = [out / f"{v.name}.jsonl" for v in variants]  # OUT/<variant name>.jsonl
    check_output(out, folder=True)
    for path in paths:
        # Run files are written as the run goes (a killed run is resumed), so they are
        # checked, not renamed into place; an empty one is written over.
        check_output(path, inputs=inputs, overwrite=True)
        if path.exists() and path.stat().st_size and not (resume or overwrite):
            raise ConfigError(
                f"{path} already exists: use --resume to continue it or --overwrite to replace it"
            )
    return paths


Agent = AgentSpec
"""An agent as a sweep runs it: a spec its workers build from, or one built already."""


def run_variants(
    scenarios: Sequence[Scenario],
    agent: Agent,
    variants: Sequence[Variant],
    out: Path,
    *,
    trials: int = 1,
    resume: bool = False,
    overwrite: bool = False,
    console: Console | None = None,
    inputs: Sequence[Path] = (),
    workers: Workers | None = None,
) -> list[tuple[Path, RunSummary]]:
    """Run ``agent`` over ``scenarios`` under each variant: each run file and what its run
    did, in order (each over ``workers``, when given). The episodes are built as ``run``
    builds them (:meth:`AgentSpec.episodes`), whatever the kind of agent. A run that stops
    because the endpoint failed ends the sweep there.

    Raises:
        ConfigError: two variants with one name, or a run file that would be replaced
            without ``resume`` or ``overwrite``.
    """
    paths = check_outputs(out, variants, resume=resume, overwrite=overwrite, inputs=inputs)
    options = agent.options
    for variant in variants:  # a variant that cannot run so fails before anything runs
        variant.check(options.mode, options.guard)
    out.mkdir(parents=True, exist_ok=True)
    done: list[tuple[Path, RunSummary]] = []
    for variant, path in zip(variants, paths, strict=True):
        under = agent.under(variant)
        summary = run_suite(
            scenarios,
            agent.recorded(),
            under,
            path,
            workers=workers or Workers(),
            overwrite=overwrite,
            concurrency=agent.concurrency(),
            resume=resume,
            total=len(scenarios) * trials,
            console=console,
            mode=options.mode,
            trials=trials,
            variant=variant.name,
            settings=agent.settings(),
            guard=under.guard(),
            debug=options.debug,
        )
        done.append((path, summary))
        if summary.aborted is not None:
            break
    return done
