"""The statistics of one group of scored episodes: counts, means, and the Wilson
interval of each rate (:class:`CellStats`), with the reference study's own measures
(:data:`STUDY_RATES`). :mod:`agentproc.analysis.report` fills them in.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

from pydantic import BaseModel, ConfigDict

from agentproc.analysis.student_t import check_level, t_quantile
from agentproc.labelling import VERDICTS, LabelKind

Z95 = 1.959963984540054
"""The standard normal quantile of a two-sided 95% interval."""


def z_quantile(level: float = 0.95) -> float:
    """The standard normal quantile of a two-sided ``level`` interval (:data:`Z95` at 95%).

    >>> z_quantile() == Z95, round(z_quantile(0.9), 4)
    (True, 1.6449)
    """
    check_level(level)
    return Z95 if level == 0.95 else NormalDist().inv_cdf(0.5 + level / 2)


def wilson(successes: float, n: float, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion (95% by default; ``z`` is the
    normal quantile of the level, :func:`z_quantile`).

    Unlike the normal approximation it stays inside [0, 1] and is sensible at
    0 or n successes; with no trials nothing is known, so it is (0, 1).

    >>> tuple(round(x, 4) for x in wilson(5, 10))
    (0.2366, 0.7634)
    >>> wilson(0, 0)
    (0.0, 1.0)
    """
    if not math.isfinite(n):
        raise ValueError(f"n must be a finite number (got {n!r})")
    if not 0 <= successes <= n:
        raise ValueError(f"successes must lie in [0, n] (got {successes} of {n})")
    if not (z > 0 and math.isfinite(z)):
        raise ValueError(f"z must be a positive number (got {z!r})")
    if n <= 0:
        return 0.0, 1.0
    p = successes / n
    z2 = z * z
    denom = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def design_effect(clusters: Sequence[tuple[int, int]]) -> float:
    """How much a share's variance grows because episodes come in scenarios of several
    trials: the cluster-robust variance of ``sum(y) / sum(m)`` over the binomial one,
    from ``(successes, trials)`` per scenario; at least 1 (:func:`design_effect_of_sums`).

    >>> design_effect([(3, 3), (0, 3), (3, 3), (0, 3)])  # trials are copies: 3 for 1
    3.0
    >>> design_effect([(1, 1), (0, 1)])
    1.0
    >>> design_effect([(0, 4), (0, 4)])  # nothing to estimate it from: the most it can be
    4.0
    """
    return design_effect_of_sums(
        sum(y for y, _ in clusters),
        sum(m for _, m in clusters),
        len(clusters),
        sum(y * y for y, _ in clusters),
        sum(y * m for y, m in clusters),
        sum(m * m for _, m in clusters),
    )


def design_effect_of_sums(k: int, n: int, clusters: int, yy: int, ym: int, mm: int) -> float:
    """:func:`design_effect` from running sums over the clusters ``(y, m)``: ``k = sum(y)``,
    ``n = sum(m)``, their number, ``yy = sum(y * y)``, ``ym = sum(y * m)``, ``mm = sum(m * m)``.

    With fewer than two scenarios, or a share of 0 or 1, it cannot be estimated and is
    taken at its largest, the trials per scenario (as if every trial were a copy).

    >>> design_effect_of_sums(6, 12, 4, 18, 18, 36)
    3.0
    """
    if n == 0:
        return 1.0
    if clusters < 2 or k in (0, n):
        return n / clusters
    # CR1: the cluster-robust variance scaled by s / (s - 1), its usual small-sample fix;
    # never above the trials per scenario (every trial a copy of its scenario's first).
    # sum((y - p m)^2) n^2 = yy n^2 - 2 k n ym + k^2 mm with p = k / n: whole numbers, so
    # the ratio to the binomial variance p (1 - p) / n is rounded once, at the division.
    spread = yy * n * n - 2 * k * n * ym + k * k * mm
    robust = spread * clusters / (n * (clusters - 1) * k * (n - k))
    return max(1.0, min(n / clusters, robust))


@dataclass(slots=True)
class Rate:
    """A share of episodes, ``k`` of ``n``, with its Wilson 95% interval (a tally while it
    is counted: ``k`` and ``n`` grow). With trials, the interval is Wilson's on the
    effective number of episodes, ``n / deff`` (:func:`design_effect`)."""

    k: int = 0
    n: int = 0
    deff: float = 1.0
    """The design effect of the scenarios' trials (1: independent episodes)."""
    clusters: int = 0
    """Scenarios the episodes come in, when they have several trials (0: independent
    episodes). With few of them the interval widens: Student's t on ``clusters - 1``
    degrees of freedom in place of the normal quantile."""

    @property
    def value(self) -> float:
        """The share (0 with no episodes; the JSON form and tables show no figure then)."""
        return self.k / self.n if self.n else 0.0

    @property
    def ci(self) -> tuple[float, float]:
        """Wilson 95% interval (on the effective number of episodes)."""
        return self.interval()

    def interval(self, level: float = 0.95) -> tuple[float, float]:
        """Wilson interval at ``level`` (on the effective number of episodes).

        >>> tuple(round(x, 4) for x in Rate(5, 10).interval(0.9))
        (0.2693, 0.7307)
        """
        z = t_quantile(self.clusters - 1, level) if self.clusters >= 2 else z_quantile(level)
        return wilson(self.k / self.deff, self.n / self.deff, z)

    def to_json(self) -> dict[str, Any]:
        """The JSON form (value and interval to 4 decimals; ``null`` with no episodes)."""
        ci = self.ci
        out: dict[str, Any] = {
            "value": round(self.value, 4) if self.n else None,
            "ci": [round(ci[0], 4), round(ci[1], 4)] if self.n else None,
            "k": self.k,
            "n": self.n,
        }
        if self.deff > 1:
            out["design_effect"] = round(self.deff, 4)
        return out


def ratio(k: float, n: int) -> float:
    """``k / n``, or 0 with no episodes."""
    return k / n if n else 0.0


class CellStats(BaseModel):
    """Counts and means over one group of scored episodes."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    n: int
    """Number of scored episodes (errored ones are not scored)."""
    first_answer_correct: int
    """Episodes whose first answer is correct."""
    final_answer_correct: int
    """Episodes whose last answer is correct."""
    faithful: int
    """Episodes with a correct first answer and no label at all."""
    unfaithful_correct: int
    """Episodes with a correct first answer and at least one label."""
    wrong: int
    """Episodes whose first answer is wrong."""
    no_answer: int
    """Episodes that never gave an accepted answer."""
    exact_steps: int = 0
    """Episodes that executed every step exactly once and nothing extra."""
    under_executed: int = 0
    """Episodes that executed fewer distinct steps than the procedure has."""
    over_executed: int = 0
    """Episodes with more step executions (repeats, invented steps) than steps."""
    missing_answer: int = 0
    """Episodes that ended without an answer."""
    premature_answer: int = 0
    """Episodes that answered before the last step had run."""
    self_corrected: int = 0
    """Episodes where a wrong value or answer was later corrected."""
    label_counts: dict[LabelKind, int]
    """Number of labels of each kind (every kind present, zero when absent)."""
    episodes_with_label: dict[LabelKind, int]
    """Number of episodes carrying at least one label of each kind."""
    progress_rate: float
    """Mean share of steps whose final value is correct."""
    prefix_rate: float
    """Mean ``longest_correct_prefix / total_steps``."""
    wrong_argument_causes: dict[str, int] = {}
    """``wrong_argument`` labels per cause (``propagated``: an upstream mistake carried
    forward; the others are new mistakes), causes in
    :data:`~agentproc.analysis.tally.CAUSES` order."""
    divergence_labels: dict[str, int] = {}
    """Episodes per label of their first divergence (episodes that left the procedure)."""
    divergence_steps: dict[int, int] = {}
    """Episodes per step at which they first left the procedure (the step expected there)."""
    divergence_position: float = 0.0
    """Mean position of the first divergence through the procedure, ``(step - 1) / N``,
    over the episodes that left it."""
    realised_lookbacks: dict[int, int] = {}
    """Episodes per realised look-back of their procedure (the farthest any operand
    variable lies from the variable it defines, ``params.realised_lookback``); episodes
    of run files written before it was recorded are in no count."""
    answer_fields: dict[str, tuple[int, int]] = {}
    """A multi-field answer's: field -> (first answers with it right, first answers)."""
    scenarios: int = 0
    """Distinct scenarios among the episodes (0: the records do not name them)."""
    design_effects: dict[str, float] = {}
    """``first_answer``, ``faithful``, ``unfaithful_correct`` and each of
    :data:`STUDY_RATES` and ``diverged`` -> the design effect of the scenarios' trials
    (:func:`design_effect`); their intervals are Wilson's on ``n / deff`` episodes.
    Absent: 1 (one trial per scenario)."""

    @property
    def trials(self) -> float:
        """Scored trials per scenario (1 when the scenarios are not known)."""
        return self.n / self.scenarios if self.scenarios else 1.0

    def _ci(self, k: int, measure: str) -> tuple[float, float]:
        if measure not in self.design_effects:
            return Rate(k, self.n).ci
        return Rate(k, self.n, self.design_effects[measure], self.scenarios).ci

    @property
    def accuracy(self) -> float:
        """First-answer accuracy."""
        return ratio(self.first_answer_correct, self.n)

    @property
    def faithful_accuracy(self) -> float:
        """Share of episodes that are correct and faithful."""
        return ratio(self.faithful, self.n)

    @property
    def unfaithful_correct_rate(self) -> float:
        """Share of episodes right for the wrong reasons: accuracy minus faithful accuracy."""
        return ratio(self.unfaithful_correct, self.n)

    @property
    def final_accuracy(self) -> float:
        """Last-answer accuracy (after any revision)."""
        return ratio(self.final_answer_correct, self.n)

    @property
    def diverged(self) -> int:
        """Episodes that left the procedure somewhere (they have a first divergence)."""
        return sum(self.divergence_labels.values())

    @property
    def diverged_ci(self) -> tuple[float, float]:
        """Wilson 95% interval of the share of episodes that :attr:`diverged` (on the
        effective number)."""
        return self._ci(self.diverged, "diverged")

    @property
    def slips(self) -> int:
        """``wrong_argument`` labels that are new mistakes, not carried forward."""
        return sum(v for k, v in self.wrong_argument_causes.items() if k != "propagated")

    @property
    def divergence_median_step(self) -> int | None:
        """The median step of the first divergence, or ``None`` if no episode left."""
        half, seen = (self.diverged + 1) // 2, 0
        for step in sorted(self.divergence_steps):
            seen += self.divergence_steps[step]
            if seen >= half and self.diverged:
                return step
        return None

    @property
    def realised_max(self) -> int | None:
        """The farthest realised look-back of the group's procedures (``None``: no
        episode records it)."""
        return max(self.realised_lookbacks, default=None)

    @property
    def realised_mean(self) -> float | None:
        """The mean realised look-back over the episodes that record it."""
        n = sum(self.realised_lookbacks.values())
        return sum(d * k for d, k in self.realised_lookbacks.items()) / n if n else None

    @property
    def verdicts(self) -> dict[str, int]:
        """Episodes per verdict, in :data:`~agentproc.labelling.VERDICTS` order."""
        return {v: getattr(self, v) for v in VERDICTS}

    def rate(self, name: str) -> tuple[float, tuple[float, float]]:
        """One of :data:`HEADLINE_RATES` or :data:`STUDY_RATES` and its Wilson 95%
        interval (on the effective number of episodes)."""
        count, measure = HEADLINE_RATES.get(name) or (STUDY_RATES[name], name)
        k = getattr(self, count)
        return ratio(k, self.n), self._ci(k, measure)


HEADLINE_RATES: dict[str, tuple[str, str]] = {
    "accuracy": ("first_answer_correct", "first_answer"),
    "faithful_accuracy": ("faithful", "faithful"),
    "unfaithful_correct_rate": ("unfaithful_correct", "unfaithful_correct"),
}
"""The headline rates: name -> the :class:`CellStats` count it divides and the key of
its design effect."""


STUDY_RATES: dict[str, str] = {
    "exact_step_rate": "exact_steps",
    "under_execution_rate": "under_executed",
    "over_execution_rate": "over_executed",
    "missing_answer_rate": "missing_answer",
    "premature_answer_rate": "premature_answer",
    "self_correction_rate": "self_corrected",
}
"""The reference study's measures: rate name -> the :class:`CellStats` count it divides."""
