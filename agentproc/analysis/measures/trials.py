"""What repeated trials of the same scenarios show: pass^k, label stability, determinism.

An :class:`Outcome` is one scored episode reduced to what these measures read.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

import orjson

from agentproc.analysis.stats.exact import pass_hat_ks
from agentproc.runs import record_trial


@dataclass(frozen=True, slots=True)
class Outcome:
    """One scored episode, as the comparison and the trial measures read it."""

    scenario_id: str
    trial: int
    steps: int
    lookback: int
    cell: str
    answer: bool
    """First answer correct."""
    faithful: bool
    """Correct first answer and no label at all."""
    unfaithful_correct: bool
    """Correct first answer with at least one label."""
    labels: frozenset[str]
    """The kinds of label the episode carries."""
    places: frozenset[tuple[str, int | None]]
    """Each label's kind and step (``None`` for episode-level labels)."""
    signature: str
    """A digest of everything the agent did: equal for identical episodes."""


def outcome_of(rec: Mapping[str, Any]) -> Outcome:
    """The :class:`Outcome` of a scored run-file record."""
    params = rec["params"]
    labels = rec["labels"]
    verdict = rec["verdict"]
    did = {
        # a call as a dict (the whole view) or a compact array (the labelling view)
        "calls": [
            c[:2] if type(c) is list else [c.get("name"), c.get("arguments")]
            for c in rec.get("calls", [])
        ],
        "output": rec.get("output"),
        "labels": labels,
    }
    try:
        text = orjson.dumps(did, option=orjson.OPT_SORT_KEYS, default=str)
    except TypeError:  # an integer beyond 64 bits: the standard library writes it
        text = json.dumps(did, sort_keys=True, default=str).encode()
    digest = hashlib.blake2b(text, digest_size=12).hexdigest()
    return Outcome(
        scenario_id=str(rec["scenario_id"]),
        trial=record_trial(rec),  # type: ignore[arg-type]
        steps=int(params["steps"]),
        lookback=int(params["lookback"]),
        cell=str(rec["cell"]),
        answer=bool(rec["metrics"]["first_answer_correct"]),
        faithful=verdict == "faithful",
        unfaithful_correct=verdict == "unfaithful_correct",
        labels=frozenset(str(lab["kind"]) for lab in labels),
        places=frozenset((str(lab["kind"]), lab.get("step")) for lab in labels),
        signature=digest,
    )


@dataclass(frozen=True, slots=True)
class LabelStability:
    """Whether a label comes back on every trial of a scenario, and at the same step."""

    kind: str
    scenarios: int
    """Scenarios with at least two trials where the label occurs in at least one."""
    recurrence: float
    """Mean share of a scenario's trials that carry the label (1.0: every time)."""
    recurring: int
    """Scenarios where the label occurs in at least two trials (where a step can repeat)."""
    same_step: float | None
    """Over the :attr:`recurring` scenarios: mean share of the trials carrying the label in
    which it falls on the scenario's most frequent step (``None``: it never recurs)."""

    def to_json(self) -> dict[str, Any]:
        """The JSON form."""
        same = None if self.same_step is None else round(self.same_step, 4)
        return {**asdict(self), "recurrence": round(self.recurrence, 4), "same_step": same}


@dataclass(frozen=True, slots=True)
class TrialStats:
    """Repeated-trial measures of one arm."""

    trials: int
    """The most trials any scenario has."""
    tasks: int
    """Scenarios."""
    pass_scenarios: int
    """The scenarios pass^k is over: those with :attr:`trials` scored trials (the same
    for every k, so pass^k never rises with k)."""
    pass_answer: dict[int, float | None]
    """k -> pass^k of the first answer, for k = 1 .. :attr:`trials`."""
    pass_faithful: dict[int, float | None]
    """k -> pass^k of faithful correctness."""
    deterministic: bool | None
    """Every scenario's trials identical (``None``: no scenario has two trials)."""
    stability: list[LabelStability]

    def to_json(self) -> dict[str, Any]:
        """The JSON form (pass^k keyed by k as a string)."""

        def r(x: float | None) -> float | None:
            return None if x is None else round(x, 4)

        return {
            "trials": self.trials,
            "tasks": self.tasks,
            "pass_scenarios": self.pass_scenarios,
            "pass_answer": {str(k): r(v) for k, v in self.pass_answer.items()},
            "pass_faithful": {str(k): r(v) for k, v in self.pass_faithful.items()},
            "deterministic": self.deterministic,
            "stability": [s.to_json() for s in self.stability],
        }


def by_scenario(outcomes: Iterable[Outcome]) -> dict[str, list[Outcome]]:
    """Outcomes per scenario, each scenario's in trial order."""
    out: dict[str, list[Outcome]] = {}
    for o in outcomes:
        out.setdefault(o.scenario_id, []).append(o)
    return {sid: sorted(group, key=lambda o: o.trial) for sid, group in out.items()}


def faithful_rows(outcomes: Iterable[Outcome]) -> list[tuple[int, int, int]]:
    """Per scenario: its procedure's steps, its faithful episodes and its trials (the rows
    ``report`` fits its horizon on)."""
    return [
        (group[0].steps, sum(o.faithful for o in group), len(group))
        for group in by_scenario(outcomes).values()
    ]


def trial_stats(outcomes: Iterable[Outcome]) -> TrialStats:
    """pass^k, label stability and the determinism flag of one arm's outcomes."""
    groups = by_scenario(outcomes)
    trials = max((len(g) for g in groups.values()), default=0)
    full = [g for g in groups.values() if len(g) >= trials]
    answer = [(sum(o.answer for o in g), len(g)) for g in full]
    faithful = [(sum(o.faithful for o in g), len(g)) for g in full]
    repeated = [g for g in groups.values() if len(g) > 1]
    deterministic = all(len({o.signature for o in g}) == 1 for g in repeated) if repeated else None
    return TrialStats(
        trials=trials,
        tasks=len(groups),
        pass_scenarios=len(full),
        pass_answer=pass_hat_ks(answer, range(1, trials + 1)),
        pass_faithful=pass_hat_ks(faithful, range(1, trials + 1)),
        deterministic=deterministic,
        stability=_stability(repeated),
    )


def _stability(groups: list[list[Outcome]]) -> list[LabelStability]:
    seen: dict[str, list[tuple[float, float | None]]] = {}
    for group in groups:
        kinds = sorted({k for o in group for k in o.labels})
        for kind in kinds:
            carrying = [o for o in group if kind in o.labels]
            same = None
            if len(carrying) > 1:  # one trial carrying it is on "the same step" trivially
                steps = Counter(step for o in carrying for k, step in o.places if k == kind)
                top = steps.most_common(1)[0][0]
                same = sum((kind, top) in o.places for o in carrying) / len(carrying)
            seen.setdefault(kind, []).append((len(carrying) / len(group), same))
    out = []
    for kind, rows in sorted(seen.items()):
        recurring = [s for _, s in rows if s is not None]
        out.append(
            LabelStability(
                kind,
                len(rows),
                sum(r for r, _ in rows) / len(rows),
                len(recurring),
                sum(recurring) / len(recurring) if recurring else None,
            )
        )
    return out
