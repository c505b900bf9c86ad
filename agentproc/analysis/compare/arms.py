"""Paired comparison of arms (variants, or agents) run on the same scenarios.

An *arm* is every scored episode of one agent, mode and variant. The first arm
(or the one named) is the baseline; every other arm is compared with it on the
scenarios both ran, pairing episodes by scenario and trial:

- per arm, overall and per grid cell: first-answer accuracy, faithful accuracy,
  the unfaithful-correct rate (each with a Wilson interval) and every label's
  rate (episodes carrying it);
- per other arm: the paired difference of each of those rates, tested with the
  scenario as the unit (:mod:`agentproc.analysis.stats.paired`: exact McNemar with one
  trial per scenario, a sign-flip permutation test of per-scenario means with
  several), with the interval of the same method; label tests Holm-corrected
  across the label kinds that can reject at all (Tarone), per-cell tests across
  cells;
- a verdict on faithful accuracy (better, worse, no detectable difference),
  Holm-corrected across arms, with its interval at the level Holm tested it at
  and the minimum detectable effect of this design (scenarios and trials);
- with trials: pass^k, label stability and whether the arm is deterministic.

Trials of a deterministic arm are copies, not evidence: when both arms are
deterministic, each scenario counts once.
"""

from __future__ import annotations

import dataclasses
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentproc.analysis.compare.horizons import differences as horizon_diffs
from agentproc.analysis.compare.horizons import fitter
from agentproc.analysis.compare.rate_diff import (
    Pair,
    cells_corrected,
    corrected,
    paired_test,
    rate_differences,
    unit_diffs,
    units_of,
)
from agentproc.analysis.compare.result import (
    ARM_MEASURES,
    Arm,
    CellId,
    CompareResult,
    Comparison,
    arm_stats,
)
from agentproc.analysis.measures.identity import AgentId, agent_id, agent_labels
from agentproc.analysis.measures.trials import Outcome, faithful_rows, outcome_of, trial_stats
from agentproc.analysis.stats.exact import min_detectable_effect, verdict
from agentproc.analysis.stats.multiplicity import holm, holm_levels
from agentproc.errors import ConfigError
from agentproc.labelling import LabelKind
from agentproc.runs import (
    ReadReport,
    error_kind_of,
    is_error,
    latest_records,
    read_run,
    record_agent,
    record_mode,
    record_trial,
    record_variant,
)

ArmKey = tuple[str, str, str]
"""Agent, mode and variant."""


def _agent(k: ArmKey) -> str:
    """An arm's agent, marked ``[text]`` in text mode."""
    return f"{k[0]} [text]" if k[1] == "text" else k[0]


def _names(keys: Sequence[ArmKey]) -> dict[ArmKey, str]:
    """Short, distinct arm names: the variant when only variants differ, the agent (marked
    ``[text]`` in text mode) when only agents differ, else ``agent/variant``."""
    if len({_agent(k) for k in keys}) == 1:
        return {k: k[2] for k in keys}
    if len({k[2] for k in keys}) == 1:
        return {k: _agent(k) for k in keys}
    return {k: f"{_agent(k)}/{k[2]}" for k in keys}


def compare_records(
    records: Iterable[Mapping[str, Any]],
    *,
    baseline: str | None = None,
    seed: int = 0,
) -> CompareResult:
    """Compare every arm of the records with the baseline (the first arm, or ``baseline``).

    Raises:
        ConfigError: fewer than two arms, or no arm of that name.
    """
    by_id: dict[AgentId, list[Outcome]] = {}
    errors: defaultdict[AgentId, Counter[str]] = defaultdict(Counter)
    errored_at: defaultdict[AgentId, set[tuple[str, int]]] = defaultdict(set)
    for rec in records:
        aid = agent_id(rec)  # a run named after another agent is another arm
        by_id.setdefault(aid, [])
        if is_error(rec):  # type: ignore[arg-type]
            errors[aid][error_kind_of(rec)] += 1  # type: ignore[arg-type]
            errored_at[aid].add((str(rec["scenario_id"]), record_trial(rec)))  # type: ignore[arg-type]
        else:
            by_id[aid].append(outcome_of(rec))
    labels = agent_labels(by_id)
    outcomes = {(labels[a], a.mode, a.variant): group for a, group in by_id.items()}
    errored = {(labels[a], a.mode, a.variant): errors[a] for a in by_id}
    errored_keys = {(labels[a], a.mode, a.variant): errored_at[a] for a in by_id}
    names = _names(list(outcomes))
    if len(names) < 2:
        found = ", ".join(names.values()) or "none"
        raise ConfigError(
            f"compare needs episodes of at least two variants or agents (found: {found})"
        )
    kinds = _kinds(o for group in outcomes.values() for o in group)
    arms = {
        names[k]: build_arm(names[k], k, group, errored[k], kinds, errored_keys[k])
        for k, group in outcomes.items()
    }
    base = baseline if baseline is not None else next(iter(arms))
    if base not in arms:
        raise ConfigError(f"--baseline: no arm named {base!r} (arms: {', '.join(arms)})")
    comparisons = [
        compare_arms(arms[base], arm, kinds) for name, arm in arms.items() if name != base
    ]
    if len(comparisons) > 1:
        comparisons = _across_arms(comparisons, arms)
    return _with_horizons(CompareResult(base, arms, comparisons, seed))


def _with_horizons(result: CompareResult) -> CompareResult:
    """Each arm's procedure horizon and each comparison's paired difference of horizons
    (each group of rows fitted once)."""
    fit = fitter()
    arms = {
        n: dataclasses.replace(a, horizon=fit(faithful_rows(a.outcomes))(0.5))
        for n, a in result.arms.items()
    }
    base = arms[result.baseline]
    pairs = {c.arm: paired_episodes(base, arms[c.arm]) for c in result.comparisons}
    diffs = horizon_diffs(pairs, fit)
    comparisons = [dataclasses.replace(c, horizon=diffs[c.arm]) for c in result.comparisons]
    return dataclasses.replace(result, arms=arms, comparisons=comparisons)


def _across_arms(comparisons: list[Comparison], arms: Mapping[str, Arm]) -> list[Comparison]:
    """Holm across arms: each verdict from its adjusted p, its interval at the level Holm
    tested it at (so that the interval excludes 0 exactly when the verdict is not "no
    detectable difference"); label tests and per-cell marks in one family across arms."""
    raw = {c.arm: c.overall["faithful"].p for c in comparisons}
    adjusted, levels = holm(raw), holm_levels(raw)
    labels = corrected([d for c in comparisons for d in c.labels])
    cells = cells_corrected([c.cells for c in comparisons])
    out = []
    for i, c in enumerate(comparisons):
        n = len(c.labels)
        pairs = paired_episodes(arms[c.baseline], arms[c.arm])
        test = paired_test(pairs, "faithful", levels[c.arm])
        out.append(
            dataclasses.replace(
                c,
                p_holm=adjusted[c.arm],
                labels=labels[i * n : (i + 1) * n],
                cells=cells[i],
                level=1 - levels[c.arm],
                verdict_ci=test.ci,
                verdict=verdict(c.overall["faithful"].diff, adjusted[c.arm]),
            )
        )
    return out


def _kinds(outcomes: Iterable[Outcome]) -> list[str]:
    known = [k.value for k in LabelKind]
    extra = sorted({k for o in outcomes for k in o.labels} - set(known))
    return known + extra


def build_arm(
    name: str,
    key: ArmKey,
    outcomes: list[Outcome],
    errored: dict[str, int],
    kinds: list[str],
    errored_keys: Iterable[tuple[str, int]] = (),
) -> Arm:
    """One arm: its episodes' rates overall and per grid cell, and its trial measures
    (``errored_keys``: the scenario and trial of each episode a failure ended)."""
    cells: dict[CellId, list[Outcome]] = {}
    for o in outcomes:
        cells.setdefault((o.steps, o.lookback, o.cell), []).append(o)
    return Arm(
        name=name,
        agent=key[0],
        mode=key[1],
        variant=key[2],
        outcomes=outcomes,
        errored=dict(sorted(errored.items())),
        overall=arm_stats(outcomes, kinds),
        cells={c: arm_stats(cells[c], kinds) for c in sorted(cells)},
        trials=trial_stats(outcomes),
        errored_keys=frozenset(errored_keys) - {(o.scenario_id, o.trial) for o in outcomes},
    )


def paired_episodes(base: Arm, arm: Arm) -> list[Pair]:
    """The arm's episodes paired with the baseline's by scenario and trial (each
    scenario once when both arms are deterministic)."""
    index = {(o.scenario_id, o.trial): o for o in base.outcomes}
    pairs = [
        (index[(o.scenario_id, o.trial)], o)
        for o in arm.outcomes
        if (o.scenario_id, o.trial) in index
    ]
    return _first_trials(pairs) if _both_deterministic(base, arm) else pairs


def compare_arms(base: Arm, arm: Arm, kinds: Sequence[str]) -> Comparison:
    """One arm against the baseline, on their paired episodes."""
    pairs = paired_episodes(base, arm)
    unpaired, lost = _unmatched(base, arm, pairs)
    every = rate_differences(pairs, [*ARM_MEASURES, *kinds])
    overall = {d.measure: d for d in every[: len(ARM_MEASURES)]}
    by_cell: dict[CellId, list[Pair]] = {}
    for b, v in pairs:
        by_cell.setdefault((b.steps, b.lookback, b.cell), []).append((b, v))
    cells = {
        c: {d.measure: d for d in rate_differences(by_cell[c], ARM_MEASURES)}
        for c in sorted(by_cell)
    }
    (cells,) = cells_corrected([cells])
    labels = corrected(every[len(ARM_MEASURES) :])
    units = units_of(pairs, "faithful")
    trials = len(pairs) / len(units) if units else 0.0
    f = overall["faithful"]
    return Comparison(
        arm=arm.name,
        baseline=base.name,
        scenarios=len(units),
        pairs=len(pairs),
        unpaired=unpaired,
        lost_to_errors=lost,
        overall=overall,
        cells=cells,
        labels=labels,
        mde=min_detectable_effect(unit_diffs(pairs, "faithful"), trials),
        mde_answer=min_detectable_effect(unit_diffs(pairs, "first_answer"), trials),
        verdict=verdict(f.diff, f.p),
        verdict_ci=f.ci,
        balanced=len({k for _, _, k in units}) <= 1,
    )


def _unmatched(base: Arm, arm: Arm, pairs: list[Pair]) -> tuple[int, int]:
    """Episodes left without a partner the other arm never ran (unpaired), and the pairs
    both arms ran that a failure of either ended (lost to errors; by scenario, as the
    pairs are, when both arms are deterministic)."""
    scored_b = {(o.scenario_id, o.trial) for o in base.outcomes}
    scored_a = {(o.scenario_id, o.trial) for o in arm.outcomes}
    ran_b, ran_a = scored_b | base.errored_keys, scored_a | arm.errored_keys
    unpaired = len(scored_b - ran_a) + len(scored_a - ran_b)
    both = ran_b & ran_a
    if _both_deterministic(base, arm):
        lost = len({s for s, _ in both}) - len({b.scenario_id for b, _ in pairs})
    else:
        lost = len(both) - len(pairs)
    return unpaired, lost


def _both_deterministic(a: Arm, b: Arm) -> bool:
    return bool(a.trials.deterministic) and bool(b.trials.deterministic)


def _first_trials(pairs: list[Pair]) -> list[Pair]:
    """Each scenario's first paired trial only (the others are copies of it)."""
    first: dict[str, Pair] = {}
    for b, v in pairs:
        if b.scenario_id not in first or b.trial < first[b.scenario_id][0].trial:
            first[b.scenario_id] = (b, v)
    return list(first.values())


def compare_files(
    paths: Sequence[Path], *, baseline: str | None = None, seed: int = 0
) -> tuple[CompareResult, list[str]]:
    """Compare the arms found in run files; also the files' warnings.

    Files whose episodes are all of one arm, the same in each (two runs of one endpoint,
    model v1 and v2 served under one name, neither named with ``run --name``), are
    compared file by file: each file an arm named by its file name. Otherwise the files'
    episodes are pooled and the arms are their agents and variants (shards of a run merge).
    """
    reports = [ReadReport() for _ in paths]
    names = _file_arms(paths)
    if names is None:
        records: Iterable[Mapping[str, Any]] = (
            rec for _, _, rec in latest_records(list(paths), reports)
        )
        warnings: list[str] = []
    else:
        records = (
            {**rec, "name": name}
            for path, report, name in zip(paths, reports, names.names, strict=True)
            for _, _, rec in latest_records([path], [report])
        )
        warnings = [
            f"every file holds episodes of one agent and variant ({names.shared}): compared "
            f"file by file, as arms {', '.join(names.names)}"
        ]
    result = compare_records(records, baseline=baseline, seed=seed)
    return result, warnings + [w for r in reports for w in r.warnings]


def _one_arm(path: Path) -> ArmKey | None:
    """The arm every episode of a file belongs to, or ``None`` when they are of several."""
    keys = {
        (record_agent(rec), record_mode(rec), record_variant(rec))  # type: ignore[arg-type]
        for _, rec in read_run(path, ReadReport(), view="head")
    }
    return keys.pop() if len(keys) == 1 else None


@dataclass(frozen=True)
class _FileArms:
    shared: str
    """The agent and variant every file holds."""
    names: list[str]
    """Each file's arm name."""


def file_arm_names(paths: Sequence[Path]) -> list[str] | None:
    """Each file's arm name when :func:`compare_files` compares ``paths`` file by file,
    else ``None`` (the files' episodes are pooled)."""
    arms = _file_arms(paths)
    return None if arms is None else arms.names


def _file_arms(paths: Sequence[Path]) -> _FileArms | None:
    """Each file's arm name when the files are compared file by file (see
    :func:`compare_files`): their names without ``.jsonl``, or the paths as given when
    two share a name; ``None`` when the files are pooled."""
    if len(paths) < 2 or len({p.resolve() for p in paths}) < len(paths):
        return None
    arms = {_one_arm(p) for p in paths}
    (arm,) = arms if len(arms) == 1 else (None,)
    if arm is None:
        return None
    stems = [p.name.removesuffix(".jsonl") for p in paths]
    names = stems if len(set(stems)) == len(stems) else [str(p) for p in paths]
    return _FileArms(f"{_agent(arm)}, {arm[2]}", names)
