"""Run an agent under several variants on one suite, then compare what it did.

``compare_suite`` is ``agentproc compare SUITE --variants a,b``: one run file per
variant under ``out``, then the paired comparison with the first variant as the
baseline. ``stress_suite`` is ``agentproc stress``: the same over the preset sweep,
ranked, with the breaking points.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console

from agentproc.agents.suite import ModelRunOptions
from agentproc.agents.sweep import Agent, run_variants
from agentproc.analysis.compare.arms import compare_files
from agentproc.analysis.compare.result import CompareResult
from agentproc.analysis.measures.induced import ShareCurve, share_curve
from agentproc.errors import ConfigError
from agentproc.experiments.stress import StressResult, preset_variants, stress_result
from agentproc.experiments.wording import prompt_blind_note
from agentproc.runs import RunSummary, Workers, latest_records
from agentproc.workflow import Scenario
from agentproc.workflow.variant import Variant, load_variant


@dataclass
class SuiteRun:
    """How the agent is run under each variant."""

    agent: Agent
    """The agent, built as ``run`` builds it (any kind: simulated, model or factory)."""
    out: Path
    """Folder of the run files, one per variant."""
    trials: int = 1
    resume: bool = False
    overwrite: bool = False
    seed: int = 0
    """Seed of the sign-flip tests."""
    console: Console | None = None
    workers: Workers = field(default_factory=Workers)
    """How many processes run each variant's suite, and where."""
    inputs: tuple[Path, ...] = ()
    """The files the run reads (the suite's): no run file may be one of them."""


@dataclass
class Ran:
    """What the runs did, beside the analysis."""

    summaries: dict[str, RunSummary]
    """Variant name -> its run."""
    warnings: list[str]
    aborted: str | None = None
    """Why the sweep stopped early (the endpoint failed), if it did."""


def _run_all(
    scenarios: Sequence[Scenario], variants: Sequence[Variant], how: SuiteRun
) -> tuple[list[tuple[Path, RunSummary]], Ran]:
    """Run every variant over the suite: each one's run file and summary, and what ran
    (``Ran.aborted`` says why the sweep stopped early, if it did)."""
    if not scenarios:
        raise ConfigError("the suite holds no scenario to run")
    done = run_variants(
        scenarios,
        how.agent,
        variants,
        how.out,
        trials=how.trials,
        resume=how.resume,
        overwrite=how.overwrite,
        console=how.console,
        workers=how.workers,
        inputs=how.inputs,
    )
    ran = Ran({v.name: s for v, (_, s) in zip(variants, done, strict=False)}, [])
    ran.aborted = next((s.aborted for _, s in done if s.aborted is not None), None)
    return done, ran


def _run_and_compare(
    scenarios: Sequence[Scenario], variants: Sequence[Variant], how: SuiteRun, baseline: str
) -> tuple[CompareResult | None, Ran]:
    """Run every variant, then compare the run files against ``baseline`` (``None`` when
    the endpoint failed and the sweep stopped: ``Ran.aborted`` says why)."""
    done, ran = _run_all(scenarios, variants, how)
    if ran.aborted is not None:
        return None, ran
    result, warnings = compare_files([p for p, _ in done], baseline=baseline, seed=how.seed)
    note = prompt_blind_note(how.agent.agent, variants, baseline)
    ran.warnings += ([] if note is None else [note]) + warnings
    return result, ran


def _runs_under(variant: Variant, options: ModelRunOptions) -> bool:
    try:
        variant.check(options.mode, options.guard)
    except ConfigError:
        return False
    return True


def compare_suite(
    scenarios: Sequence[Scenario],
    variants: Sequence[str],
    how: SuiteRun,
    *,
    baseline: str | None = None,
) -> tuple[CompareResult | None, Ran]:
    """Run every variant (names or files; the first is the baseline) and compare them
    (``None`` when the endpoint failed and the sweep stopped: ``Ran.aborted`` says why)."""
    if len(variants) < 2:
        raise ConfigError("--variants needs at least two variants, e.g. default,prose")
    loaded = [load_variant(v) for v in variants]
    applying(scenarios, loaded, how, named=True)
    base = baseline if baseline is not None else loaded[0].name
    return _run_and_compare(scenarios, loaded, how, base)


def stress_suite(
    scenarios: Sequence[Scenario],
    how: SuiteRun,
    *,
    variants: Sequence[str] | None = None,
    grid: bool = False,
    threshold: float = 0.5,
) -> tuple[StressResult | None, Ran]:
    """Run the preset sweep (or the variants named) and rank it against the default
    (``None`` when the endpoint failed and the sweep stopped)."""
    if not 0.0 <= threshold <= 1.0:
        raise ConfigError(f"--threshold must lie between 0 and 1 (not {threshold:g})")
    chosen = preset_variants(variants, grid=grid)
    if not variants:  # the preset keeps what can run with this guard (the calculator: observe)
        chosen = [v for v in chosen if _runs_under(v, how.agent.options)]
    chosen = applying(scenarios, chosen, how, named=bool(variants))
    if len(chosen) < 2:
        raise ConfigError("stress needs at least one variant besides the default")
    result, ran = _run_and_compare(scenarios, chosen, how, chosen[0].name)
    return (None if result is None else stress_result(result, chosen, threshold)), ran


def applying(
    scenarios: Sequence[Scenario], variants: Sequence[Variant], how: SuiteRun, *, named: bool
) -> list[Variant]:
    """The variants that can present the suite's scenarios: on a declared workflow's
    suite, a variant that cannot (:func:`~agentproc.workflow.declared.compile.variant_refusal`)
    is refused when ``named``, else left out of the sweep with a note on ``how.console``.

    Raises:
        ConfigError: a named variant that does not apply, in one line saying why.
    """
    if not scenarios or not scenarios[0].declared:
        return list(variants)
    from agentproc.workflow.declared.compile import check_applies, refusal_reason, variant_refusal

    check_applies(scenarios[0], how.agent.options.mode, None)
    kept: list[Variant] = []
    left: dict[str, list[str]] = {}
    for variant in variants:
        why = refusal_reason(scenarios[0], variant)
        if why is None:
            kept.append(variant)
        elif named:
            raise ConfigError(f"--variants: {variant_refusal(scenarios[0], variant)}")
        else:
            left.setdefault(why, []).append(variant.name)
    for why, names in left.items():
        if how.console is not None:
            note = f"note: left out of the sweep, as no declared workflow takes them ({why}): "
            shown = ", ".join(names[:_NAMED]) + (
                f" and {len(names) - _NAMED} more" if len(names) > _NAMED else ""
            )
            how.console.print(note + shown, markup=False, highlight=False)
    return kept


_NAMED = 6
"""Variants a note names before it counts the rest."""


def share_suite(
    scenarios: Sequence[Scenario], how: SuiteRun, variants: Sequence[Variant]
) -> tuple[ShareCurve | None, Ran]:
    """Run every pre-fill variant and give the agent's own error rate against the share of
    wrong pre-filled steps (``stress SUITE --variants prefill-... --grid``; ``None`` when
    the endpoint failed and the sweep stopped)."""
    done, ran = _run_all(scenarios, variants, how)
    if ran.aborted is not None:
        return None, ran
    arms = []
    for variant, (path, _) in zip(variants, done, strict=True):
        records = [rec for _, _, rec in latest_records([path], view="head")]
        share = variant.prefill.wrong_share if variant.prefill is not None else 0.0
        arms.append((variant.name, share, records))
    return share_curve(how.agent.agent, arms), ran
