"""The statistics of one group of scored episodes: counts, means, and the Wilson
interval of each rate (:class:`CellStats`), with the reference study's own measures
(:data:`STUDY_RATES`). :mod:`agentproc.analysis.measures.report` fills them in.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from agentproc.analysis.stats.binomial import Rate, ratio
from agentproc.labelling import VERDICTS, LabelKind


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
    :data:`~agentproc.analysis.measures.tally.CAUSES` order."""
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
