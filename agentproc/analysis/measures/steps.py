"""Per-step measures of one agent: accuracy by position in the procedure, the
Kaplan-Meier curve of still being on the procedure with its hazard per step
(:mod:`~agentproc.analysis.stats.survival`), and self-conditioning as observed
(:mod:`~agentproc.analysis.measures.observed`).

Each is read from a record's labels and metrics alone (the head of a run-file line,
what ``report`` reads), through one outcome per step of the procedure:

- ``skipped``: the step never ran (a ``skipped_step`` label);
- ``error``: its *first run*, the first call that executed it, carries a label of a new
  mistake at that call: a ``wrong_argument`` of any cause but ``propagated``, a
  ``reordered`` (it ran out of order) or an ``unreturned_value``;
- ``carried``: its first run carries only ``propagated`` ``wrong_argument`` labels: right
  arithmetic on a wrong value the agent itself produced earlier (a mistake carried
  forward, not made here);
- ``correct``: its first run carries no label.

The first run is found among the step's labelled calls: calls labelled
``repeated_step`` ran it again, and ``invalid_arguments``, ``unreadable``,
``hallucinated_call`` and a refused ``reordered`` executed nothing; the earliest of the
others is the first run, and a step with none ran clean. The labels do not tell a call
refused for its value (wrong arguments that divide by zero) from a run, so when such a
call is the step's earliest labelled one the step reads as in error, even if a clean
run came before or after it (a record's head holds no unlabelled call; reading every
call would slow ``report`` for a case this rare).

**Accuracy by position** at step ``k`` is the share of the *executed* steps at position
``k`` (episodes whose procedure has a step ``k`` that ran; skipped ones are left out of
the denominator) whose first run is not in ``error``; ``carried`` ones count as correct
and are counted apart. Its interval is Wilson's, over scenarios when they have several
trials (:class:`~agentproc.analysis.stats.clustered.Clustered`).

After a variant's pre-filled steps (``given_steps`` in the metrics), positions count from
the agent's own first step, as ``total_steps`` and the report's first divergence do: the
given steps are not the agent's and are in no measure.

Memory: an episode of a named scenario keeps one byte per step until the report is
made (as a report keeps counters per scenario); others are folded as they come.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from agentproc.analysis.measures.observed import ObservedTally, SelfConditioning
from agentproc.analysis.stats.binomial import Rate
from agentproc.analysis.stats.clustered import Clustered
from agentproc.analysis.stats.survival import Episode, Survival, hazard, kaplan_meier

CORRECT, CARRIED, ERROR, SKIPPED = b"c", b"p", b"e", b"s"
"""A step's outcome, one byte each in an episode's :attr:`EpisodeSteps.outcomes`."""
_NOT_RUN = frozenset({"invalid_arguments", "unreadable", "hallucinated_call"})
"""Kinds on calls that executed nothing."""


@dataclass(frozen=True, slots=True)
class EpisodeSteps:
    """One episode as the per-step measures read it."""

    outcomes: bytes
    """One of :data:`CORRECT`, :data:`CARRIED`, :data:`ERROR`, :data:`SKIPPED` per step."""
    time: int
    """The step of the first divergence, or the procedure's length when it never left
    the steps."""
    left: bool
    """Whether it left the procedure at :attr:`time` (``False``: censored there)."""


def episode_steps(rec: Mapping[str, Any]) -> EpisodeSteps:
    """A scored record's step outcomes and its time on the procedure.

    >>> wrong = {"kind": "wrong_argument", "call_index": 1, "step": 2, "cause": "other"}
    >>> carried = {**wrong, "call_index": 2, "step": 3, "cause": "propagated"}
    >>> rec = {"metrics": {"total_steps": 3, "first_divergence": {"step": 2, "label": "x"}},
    ...        "labels": [wrong, carried]}
    >>> e = episode_steps(rec)
    >>> e.outcomes, e.time, e.left
    (b'cep', 2, True)
    """
    m = rec["metrics"]
    total = int(m["total_steps"])
    given = int(m.get("given_steps", 0))  # after a pre-fill, positions in the agent's own part
    skipped: set[int] = set()
    repeats: set[tuple[int, int]] = set()
    runs: dict[int, dict[int, list[Mapping[str, Any]]]] = {}  # step -> call -> labels
    for lab in rec["labels"]:
        step, call, kind = lab.get("step"), lab.get("call_index"), lab.get("kind")
        if isinstance(step, int):
            step -= given
        if not isinstance(step, int) or not 1 <= step <= total:
            continue
        if call is None:
            if kind == "skipped_step":
                skipped.add(step)
        elif kind == "repeated_step":
            repeats.add((step, call))
        elif kind not in _NOT_RUN and not (kind == "reordered" and lab.get("refused")):
            runs.setdefault(step, {}).setdefault(int(call), []).append(lab)
    out = bytearray(CORRECT * total)
    for step in skipped:
        out[step - 1] = SKIPPED[0]
    for step, calls in runs.items():
        first = [c for c in sorted(calls) if (step, c) not in repeats]
        if step in skipped or not first:
            continue
        labels = calls[first[0]]
        carried = all(
            x.get("kind") == "wrong_argument" and x.get("cause") == "propagated" for x in labels
        )
        out[step - 1] = (CARRIED if carried else ERROR)[0]
    div = m.get("first_divergence")
    where = div.get("step") if isinstance(div, Mapping) and div.get("label") is not None else None
    if isinstance(where, int):
        where -= given
    if isinstance(where, int) and 1 <= where <= total:
        return EpisodeSteps(bytes(out), where, True)
    return EpisodeSteps(bytes(out), total, False)


@dataclass(frozen=True, slots=True)
class PerStep:
    """One agent's per-step measures."""

    accuracy: list[tuple[int, Rate, int]]
    """Per position from 1: the share of executed steps there whose first run is not in
    error, and how many of those only carried an earlier mistake forward."""
    survival: Survival
    hazard: list[tuple[int, Rate]]
    self_conditioning: SelfConditioning

    def to_json(self) -> dict[str, Any]:
        """``report --json``'s ``per_step``."""
        return {
            "accuracy_by_position": [
                {"step": k, **_rate(r, "executed", "correct"), "carried": c}
                for k, r, c in self.accuracy
            ],
            "survival": [p.to_json() for p in self.survival.points],
            "survival_variance": self.survival.variance,
            "median_survival_step": self.survival.median.to_json(),
            "hazard": [{"step": t, **_rate(r, "at_risk", "events")} for t, r in self.hazard],
        }

    def median_line(self) -> str:
        """The text report's line."""
        return f"median step of leaving the procedure (Kaplan-Meier): {self.survival.median.text()}"


def _rate(r: Rate, n: str, k: str) -> dict[str, Any]:
    """A rate's JSON with its counts named: ``n`` the denominator, ``k`` the numerator."""
    j = r.to_json()
    out = {n: j["n"], k: j["k"], "value": j["value"], "ci": j["ci"]}
    if "design_effect" in j:
        out["design_effect"] = j["design_effect"]
    return out


@dataclass(slots=True)
class StepTally:
    """The per-step measures of one agent, folded as records come.

    An episode whose record names no scenario is its own cluster and is folded at once;
    those of a named scenario are kept (one byte per step each) until every record is
    read, since its trials may come anywhere in the run. Most steps are correct: a
    cluster is counted as if every step were, and the steps that are not (found by a
    regular expression, in C) are taken back out.
    """

    observed: ObservedTally = field(default_factory=ObservedTally)
    loose: dict[Episode, int] = field(default_factory=dict)
    """Episodes of no named scenario, counted by their time on the procedure."""
    scenarios: dict[str, list[EpisodeSteps]] = field(default_factory=dict)
    carried: dict[int, int] = field(default_factory=dict)
    """Position (from 0) -> first runs that only carried a mistake forward."""
    lengths: dict[int, int] = field(default_factory=dict)
    """Clusters of one episode, by the length of its procedure."""
    skips: dict[int, int] = field(default_factory=dict)
    """Clusters of one episode: position -> steps skipped there."""
    errors: dict[int, int] = field(default_factory=dict)
    """Clusters of one episode: position -> first runs in error there."""
    multi: dict[tuple[int, int, int], int] = field(default_factory=dict)
    """Clusters of several episodes: (position, not in error, executed) -> clusters."""

    def add(self, rec: Mapping[str, Any]) -> None:
        """A scored record."""
        e, sid = episode_steps(rec), rec.get("scenario_id")
        if sid is None:
            self._fold([e])
            key = (e.time, e.left)
            self.loose[key] = self.loose.get(key, 0) + 1
        else:
            self.scenarios.setdefault(str(sid), []).append(e)

    def _fold(self, cluster: list[EpisodeSteps]) -> None:
        """A whole cluster into the accuracy by position and the observed measure."""
        self.observed.fold([e.outcomes for e in cluster])
        if len(cluster) == 1:
            outcomes = cluster[0].outcomes
            _bump(self.lengths, len(outcomes))
            for m in _NOT_CORRECT.finditer(outcomes):
                self._not_correct(m.start(), m.group(), self.skips, self.errors)
            return
        longer: dict[int, int] = {}
        skips: dict[int, int] = {}
        errors: dict[int, int] = {}
        for e in cluster:
            _bump(longer, len(e.outcomes))
            for m in _NOT_CORRECT.finditer(e.outcomes):
                self._not_correct(m.start(), m.group(), skips, errors)
        for k, (ran, ok) in enumerate(_executed(longer, skips, errors)):
            if ran:
                _bump(self.multi, (k, ok, ran))

    def _not_correct(
        self, k: int, what: bytes, skips: dict[int, int], errors: dict[int, int]
    ) -> None:
        if what == SKIPPED:
            _bump(skips, k)
        elif what == ERROR:
            _bump(errors, k)
        else:
            _bump(self.carried, k)

    def _accuracy(self) -> list[tuple[int, Rate, int]]:
        """Per position, the share of executed steps not in error, and the carried."""
        executed = _executed(self.lengths, self.skips, self.errors)
        width = max([len(executed), *(k + 1 for k, _, _ in self.multi)])
        acc = [Clustered() for _ in range(width)]
        for k, (ran, ok) in enumerate(executed):  # clusters of one step or none
            acc[k].add(1, 1, ok)
            acc[k].add(0, 1, ran - ok)
        for (k, ok, ran), times in self.multi.items():
            acc[k].add(ok, ran, times)
        return [(k + 1, a.rate(), self.carried.get(k, 0)) for k, a in enumerate(acc) if a.n]

    def result(self) -> PerStep | None:
        """The measures, once every record is read; ``None`` with no scored episode."""
        if not self.loose and not self.scenarios:
            return None
        for c in self.scenarios.values():
            self._fold(c)
        clusters: list[list[Episode]] = [[key] for key in self.loose]
        clusters += [[(e.time, e.left) for e in c] for c in self.scenarios.values()]
        counts = [*self.loose.values(), *[1] * len(self.scenarios)]
        survival = kaplan_meier(clusters, counts)
        return PerStep(
            self._accuracy(),
            survival,
            hazard(clusters, len(survival.points), counts),
            self.observed.result(),
        )


_NOT_CORRECT = re.compile(b"[^" + CORRECT + b"]")


def _bump(counts: dict[Any, int], key: Any) -> None:
    counts[key] = counts.get(key, 0) + 1


def _executed(
    lengths: dict[int, int], skips: dict[int, int], errors: dict[int, int]
) -> list[tuple[int, int]]:
    """Per position from 0: steps executed and not in error, from the procedures' lengths
    (every position below a length has a step) less the skipped and the errors."""
    width = max(lengths, default=0)
    out, longer = [], 0
    for k in range(width - 1, -1, -1):
        longer += lengths.get(k + 1, 0)
        ran = longer - skips.get(k, 0)
        out.append((ran, ran - errors.get(k, 0)))
    return out[::-1]


def per_step(records: Iterable[Mapping[str, Any]]) -> PerStep | None:
    """The per-step measures of scored records (of one agent)."""
    tally = StepTally()
    for rec in records:
        tally.add(rec)
    return tally.result()
