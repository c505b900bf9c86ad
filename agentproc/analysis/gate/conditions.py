"""A gate for CI: does a run meet its thresholds, and does it not regress against a baseline?

:func:`check_files` reads a run (and a baseline run of the same scenarios) and holds it
to a list of :class:`Condition`, each passed or failed with one line that says why:

- ``errored``: no episode errored. An episode the endpoint or the harness could not
  run counts in no figure, so a run with errors has not shown that it passes;
- ``min_faithful`` (with a threshold): faithful accuracy over the scored episodes is
  at least the threshold; a failure names the first divergences of the unfaithful ones;
- ``label:KIND`` (one per forbidden label kind): no episode carries the label;
- ``min_horizon`` (with ``STEPS``): :mod:`agentproc.analysis.gate.min_horizon` says when it holds;
- ``regression`` (with a baseline): faithful accuracy did not drop. Episodes are
  paired with the baseline's by scenario and trial, as ``compare`` pairs them, and the
  drop is tested with the scenario as the unit by the **one-sided** form of compare's
  test (exact McNemar with one trial per scenario, the exact sign-flip test of
  per-scenario means with several: :mod:`agentproc.analysis.stats.paired`): the question is
  "did it drop?", so a false failure has at most a 5% chance. The condition fails only
  when the drop is larger than ``max_drop`` points **and** that test rejects at 5%
  (``p < 0.05``). Both rates and the drop are means over the paired scenarios (with as
  many trials in each, shares of episodes). The line gives the smallest drop this
  design could detect (80% power), says so when it cannot fail at all (too few
  scenarios, or a baseline too low to drop by ``max_drop``), and names the first
  divergences that are new against the baseline ("new skipped_step at step 4 in 7
  scenarios"). A run whose every episode errored fails it: nothing was shown.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentproc.analysis.compare.arms import build_arm, compare_arms, paired_episodes
from agentproc.analysis.compare.rate_diff import unit_diffs
from agentproc.analysis.compare.result import Comparison
from agentproc.analysis.gate.min_horizon import min_horizon as horizon_held
from agentproc.analysis.gate.places import Place, at, grouped, scenario_list
from agentproc.analysis.measures.identity import AgentId, agent_id, agent_names
from agentproc.analysis.measures.step_names import StepNames, WorkflowNames
from agentproc.analysis.measures.trials import Outcome, outcome_of
from agentproc.analysis.stats.exact import ALPHA, min_detectable_effect
from agentproc.analysis.stats.paired import drop_p
from agentproc.errors import ConfigError, InputError, counted, unknown_key
from agentproc.labelling import LabelKind
from agentproc.runs import (
    EpisodeKey,
    EpisodeRecord,
    ReadReport,
    episode_key,
    error_kind_of,
    is_error,
    read_lines,
    record_trial,
)
from agentproc.runs.runfile import superseded


@dataclass(frozen=True, slots=True)
class Condition:
    """One thing the run is held to, and whether it holds."""

    name: str
    """``errored``, ``min_faithful``, ``label:KIND``, ``min_horizon`` or ``regression``."""
    passed: bool
    message: str
    """One line: what was measured, and on failure which scenarios and divergences."""
    scenarios: tuple[str, ...] = ()
    """The scenarios a failure concerns."""

    def to_json(self) -> dict[str, Any]:
        """The JSON form."""
        return {**dataclasses.asdict(self), "scenarios": list(self.scenarios)}


@dataclass(frozen=True, slots=True)
class _Run:
    """One run file's single arm: scored outcomes, first divergences, errored episodes."""

    path: Path
    key: tuple[str, str, str]
    outcomes: list[Outcome]
    places: dict[tuple[str, int], Place]
    errored: dict[tuple[str, int], str]
    names: dict[str, StepNames]
    """Per scenario of a declared workflow, its steps' names."""


@dataclass(frozen=True, slots=True)
class CheckResult:
    """Every condition of one check, and the figures they read."""

    conditions: list[Condition]
    episodes: int
    """Scored episodes."""
    faithful: float
    """Faithful accuracy over the scored episodes."""
    errored: int
    comparison: Comparison | None = None
    warnings: list[str] = field(default_factory=list)
    drop: Drop | None = None
    """The one-sided test of the regression condition (``None`` without a baseline or
    with nothing scored)."""

    @property
    def passed(self) -> bool:
        """Every condition holds."""
        return all(c.passed for c in self.conditions)

    @property
    def failed(self) -> list[Condition]:
        """The conditions that do not hold."""
        return [c for c in self.conditions if not c.passed]

    def to_json(self) -> dict[str, Any]:
        """The JSON form (``agentproc check --json``)."""
        c = self.comparison
        return {
            "passed": self.passed,
            "episodes": self.episodes,
            "errored": self.errored,
            "faithful": round(self.faithful, 4),
            "conditions": [x.to_json() for x in self.conditions],
            "regression": None
            if c is None
            else {**c.overall["faithful"].to_json(), **_drop_json(self.drop)},
        }


@dataclass(frozen=True, slots=True)
class Drop:
    """The regression condition's one-sided test of a drop in faithful accuracy."""

    p: float
    """One-sided p-value for a drop."""
    detectable: float
    """The smallest drop (a fraction) this design finds with 80% power."""
    can_fail: bool
    """Whether any outcome of this design could fail the condition."""


def _drop_json(drop: Drop | None) -> dict[str, Any]:
    if drop is None:
        return {}
    detectable = round(drop.detectable, 4)
    return {"p_drop": drop.p, "detectable_drop": detectable, "can_fail": drop.can_fail}


def _read(path: Path, warnings: list[str], steps: WorkflowNames | None = None) -> _Run:
    """One pass over the file in the labelling view (no bulk): the last record of each
    episode counts, in the order :func:`~agentproc.runs.latest_records` gives them; a
    declared workflow's steps are named as ``steps`` finds them."""
    report = ReadReport()
    steps = WorkflowNames() if steps is None else steps
    names: dict[str, StepNames] = {}
    keys: set[AgentId] = set()
    last: dict[EpisodeKey, tuple[tuple[str, int], Outcome | str, Place]] = {}
    seen = 0
    for line in read_lines(path, report, "labelling"):
        r: Mapping[str, Any] = line.rec
        if type(r.get("labels")) is bytes:  # left as text by the view: parsed and checked
            r = {**r, "labels": line.recorded_labels([])}
        rec: EpisodeRecord = r  # type: ignore[assignment]
        keys.add(agent_id(r))
        episode = (str(r["scenario_id"]), record_trial(rec))
        div = (r.get("metrics") or {}).get("first_divergence")
        steps.learn(path, line.where.lineno, r)
        named = names[episode[0]] = steps.of_record(r)
        place = (str(div["label"]), at(div.get("step"), "the answer", named)) if div else None
        key = episode_key(rec)
        last.pop(key, None)
        last[key] = (episode, error_kind_of(rec) if is_error(rec) else outcome_of(r), place)
        seen += 1
    if seen > len(last):
        report.warnings.append(superseded(seen - len(last)))
    warnings.extend(f"{path}: {w}" for w in report.warnings)
    if not keys:
        raise InputError(path, "holds no episode: nothing to check")
    if len(keys) > 1:
        arms = ", ".join(sorted(agent_names(keys)[0].values()))
        raise InputError(
            path,
            f"holds episodes of several agents or variants ({arms}): check takes the run of one",
        )
    outcomes: list[Outcome] = []
    places: dict[tuple[str, int], Place] = {}
    errored: dict[tuple[str, int], str] = {}
    for episode, got, place in last.values():
        if isinstance(got, str):
            errored[episode] = got
            continue
        outcomes.append(got)
        places[episode] = place
    agent = keys.pop()
    arm = (agent.spec, agent.mode, agent.variant)
    return _Run(path, arm, outcomes, places, errored, {k: v for k, v in names.items() if v})


def check_files(
    run: Path,
    baseline: Path | None = None,
    *,
    min_faithful: float | None = None,
    max_drop: float = 5.0,
    labels: Sequence[str] = (),
    min_horizon: float | None = None,
) -> CheckResult:
    """Hold the run in ``run`` to its conditions (the module docstring says which).

    Raises:
        ConfigError: a label kind that does not exist, a threshold out of range, or a
            run and baseline that share no scenario.
        InputError: a run file that is missing, invalid, empty or holds several agents.
    """
    known = [k.value for k in LabelKind]
    for kind in labels:
        if kind not in known:
            raise unknown_key("label", kind, known)
    if min_faithful is not None and not 0.0 <= min_faithful <= 1.0:
        raise ConfigError(f"--min-faithful is a fraction from 0 to 1 (not {min_faithful:g})")
    if max_drop < 0:
        raise ConfigError(f"--max-drop is a number of points, at least 0 (not {max_drop:g})")
    warnings: list[str] = []
    steps = WorkflowNames()  # shared: a run and its baseline name a workflow's steps alike
    now = _read(run, warnings, steps)
    n = len(now.outcomes)
    faithful = sum(o.faithful for o in now.outcomes) / n if n else 0.0
    conditions = [_errored(now)]
    if min_faithful is not None:
        conditions.append(_min_faithful(now, faithful, min_faithful))
    conditions += [_forbidden(now, kind) for kind in labels]
    if min_horizon is not None:
        conditions.append(Condition("min_horizon", *horizon_held(now.outcomes, min_horizon)))
    comparison = drop = None
    if baseline is not None:
        before = _read(baseline, warnings, steps)
        if not now.outcomes:
            conditions.append(_nothing_scored(now))
        else:
            comparison, drop = _compare(before, now, max_drop)
            conditions.append(_regression(before, now, comparison, drop, max_drop))
    warnings += steps.warnings()
    return CheckResult(conditions, n, faithful, len(now.errored), comparison, warnings, drop)


def _errored(run: _Run) -> Condition:
    if not run.errored:
        return Condition("errored", True, "no episode errored")
    kinds = Counter(run.errored.values())
    which = ", ".join(f"{k} {v}" for k, v in sorted(kinds.items()))
    ids = [sid for sid, _ in run.errored]
    return Condition(
        "errored",
        False,
        f"{counted(len(run.errored), 'episode')} errored ({which}) in "
        f"{counted(len(set(ids)), 'scenario')} "
        f"({scenario_list(ids)}): errors are not passes; --resume runs them again",
        tuple(sorted(set(ids))),
    )


def _min_faithful(run: _Run, faithful: float, least: float) -> Condition:
    n = len(run.outcomes)
    k = sum(o.faithful for o in run.outcomes)
    said = f"faithful accuracy {faithful:.1%} ({k} of {counted(n, 'episode')})"
    if n and faithful >= least:
        return Condition("min_faithful", True, f"{said}, at least {least:.1%}")
    bad = [
        (o.scenario_id, run.places[(o.scenario_id, o.trial)])
        for o in run.outcomes
        if not o.faithful
    ]
    return Condition(
        "min_faithful",
        False,
        f"{said} is below --min-faithful {least:.1%}: " + (grouped(bad) or "no scored episode"),
        tuple(sorted({sid for sid, _ in bad})),
    )


def _forbidden(run: _Run, kind: str) -> Condition:
    hits = [o for o in run.outcomes if kind in o.labels]
    if not hits:
        return Condition(f"label:{kind}", True, f"no episode carries {kind}")
    steps = [
        (o.scenario_id, (kind, at(step, names=run.names.get(o.scenario_id, {}))))
        for o in hits
        for k, step in o.places
        if k == kind
    ]
    return Condition(
        f"label:{kind}",
        False,
        f"{kind} (forbidden by --labels) in {counted(len(hits), 'episode')}: {grouped(steps)}",
        tuple(sorted({o.scenario_id for o in hits})),
    )


def _compare(before: _Run, now: _Run, max_drop: float) -> tuple[Comparison, Drop]:
    known = [k.value for k in LabelKind]
    base = build_arm("baseline", before.key, before.outcomes, {}, known)
    arm = build_arm("run", now.key, now.outcomes, {}, known)
    comparison = compare_arms(base, arm, known)
    if comparison.pairs == 0:
        raise ConfigError(
            f"{now.path} and the baseline {before.path} share no scored episode "
            "(scenario and trial): nothing to compare"
        )
    diffs = unit_diffs(paired_episodes(base, arm), "faithful")
    trials = comparison.pairs / comparison.scenarios
    can_fail = (
        0.5 ** len(diffs) < ALPHA and 100.0 * comparison.overall["faithful"].baseline > max_drop
    )
    detectable = min_detectable_effect(diffs, trials, sides=1)
    return comparison, Drop(drop_p(diffs), detectable, can_fail)


def _nothing_scored(now: _Run) -> Condition:
    return Condition(
        "regression",
        False,
        f"no scored episode to compare with the baseline: all {len(now.errored)} "
        "episodes errored, so the run has not shown that it does not regress",
        tuple(sorted({sid for sid, _ in now.errored})),
    )


def _regression(
    before: _Run, now: _Run, c: Comparison, drop_test: Drop, max_drop: float
) -> Condition:
    f = c.overall["faithful"]
    drop = -100.0 * f.diff
    means = "" if c.balanced else " (means over scenarios: unequal trials)"
    said = (
        f"faithful accuracy {f.baseline:.1%} -> {f.variant:.1%}{means} against the baseline "
        f"({-drop:+.1f} points, one-sided p={drop_test.p:.3g} for a drop, {f.method} over "
        f"{f.scenarios} scenarios)"
    )
    if not drop_test.can_fail:
        return Condition("regression", True, f"{said}: {_cannot_fail(c, max_drop)}")
    detect = f"; this design could detect drops of {100 * drop_test.detectable:.0f} points or more"
    if drop <= max_drop or drop_test.p >= ALPHA:
        why = "within --max-drop" if drop <= max_drop else "not significant at 5%"
        return Condition("regression", True, f"{said}: {why}{detect}")
    new = [
        (sid, place)
        for (sid, trial), place in now.places.items()
        if (sid, trial) in before.places
        and place != before.places[(sid, trial)]
        and place is not None
    ]
    return Condition(
        "regression",
        False,
        f"{said}: more than --max-drop {max_drop:g} points and significant: "
        + (grouped(new, "new ") or "no new divergence (answers changed)"),
        tuple(sorted({sid for sid, _ in new})),
    )


def _cannot_fail(c: Comparison, max_drop: float) -> str:
    """Why no outcome of this design could fail the condition."""
    if 0.5**c.scenarios >= ALPHA:
        return (
            f"this check cannot fail with {c.scenarios} paired scenarios "
            "(a drop is significant from 5 on)"
        )
    base = 100.0 * c.overall["faithful"].baseline
    return (
        f"this check cannot fail: the baseline's {base:.1f}% cannot drop by more than "
        f"--max-drop {max_drop:g} points"
    )
