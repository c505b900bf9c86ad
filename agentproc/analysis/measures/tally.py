"""A group's running counters in a report: what one record adds, and the group's statistics.

:func:`episode_of` parses a scored record once into what it adds to each group it is in
(:class:`Episode`); a :class:`Tally` sums those and turns them into the group's
:class:`~agentproc.analysis.measures.cells.CellStats`. :mod:`agentproc.analysis.measures.report`
keeps one per group.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from agentproc.analysis.measures.cells import STUDY_RATES, CellStats
from agentproc.analysis.stats.binomial import design_effect, ratio
from agentproc.errors import unknown_key
from agentproc.labelling import VERDICTS, LabelKind

_KINDS: dict[str, LabelKind] = {k.value: k for k in LabelKind}


CAUSES = ("propagated", "other", "lookback_confusion", "stale_output", "misread_input")
"""Causes of a ``wrong_argument`` label, carried-forward first; others sort after these."""


class Episode(NamedTuple):
    """What one scored record adds to each of its groups (parsed once per record)."""

    verdict: str
    first_ok: bool
    final_ok: bool
    labels: dict[LabelKind, int]
    progress: float
    prefix: float
    exact: bool
    under: bool
    over: bool
    corrected: bool
    causes: dict[str, int]
    divergence: tuple[str, int | None, int] | None
    """(label, step, total steps) of the first divergence."""
    realised: int | None
    """The procedure's realised look-back (``params.realised_lookback``); ``None`` in
    records written before it was recorded."""
    fields: tuple[tuple[str, bool], ...] = ()
    """A multi-field first answer's fields, each with whether it is right (the fields it
    gave and those a ``wrong_answer`` names)."""


def episode_of(rec: Mapping[str, Any]) -> Episode:
    verdict, m = rec["verdict"], rec["metrics"]
    if verdict not in VERDICTS:
        raise unknown_key("verdict", str(verdict), VERDICTS)
    labels: dict[LabelKind, int] = {}
    causes: dict[str, int] = {}
    corrected = False
    wrong_fields: set[str] = set()
    for lab in rec["labels"]:
        if lab.get("field") is not None:
            wrong_fields.add(str(lab["field"]))
        kind = _KINDS.get(lab["kind"])
        if kind is None:
            raise unknown_key("label kind", str(lab["kind"]), list(_KINDS))
        labels[kind] = labels.get(kind, 0) + 1
        corrected = corrected or bool(lab.get("self_correction"))
        if kind is LabelKind.WRONG_ARGUMENT:
            cause = str(lab.get("cause") or "other")
            causes[cause] = causes.get(cause, 0) + 1
    total = int(m["total_steps"])
    div = m.get("first_divergence")
    divergence = None
    if isinstance(div, Mapping) and div.get("label") is not None:
        step = div.get("step")
        if isinstance(step, int):  # after a pre-fill, its position in the agent's own part
            step -= int(m.get("given_steps", 0))
        divergence = (str(div["label"]), step if isinstance(step, int) else None, total)
    realised = rec["params"].get("realised_lookback")
    distinct = int(m.get("executed_steps", total - labels.get(LabelKind.SKIPPED_STEP, 0)))
    runs = distinct + labels.get(LabelKind.REPEATED_STEP, 0)
    invented = labels.get(LabelKind.HALLUCINATED_CALL, 0)
    return Episode(
        verdict,
        bool(m["first_answer_correct"]),
        bool(m["final_answer_correct"]),
        labels,
        float(m["progress_rate"]),
        m["longest_correct_prefix"] / total if total else 1.0,  # an exit before any step: 0 of 0
        exact=distinct == total and runs + invented == total,
        under=distinct < total,
        over=runs + invented > total,
        corrected=corrected,
        causes=causes,
        divergence=divergence,
        realised=None if realised is None else int(realised),
        fields=_fields(m.get("first_answer"), wrong_fields),
    )


def _fields(first: Any, wrong: set[str]) -> tuple[tuple[str, bool], ...]:
    """A multi-field first answer's fields and whether each is right (none for another)."""
    if not isinstance(first, Mapping) and not wrong:
        return ()
    given = list(first) if isinstance(first, Mapping) else []
    names = [*given, *sorted(wrong - set(given))]
    return tuple((f, f not in wrong) for f in names)


@dataclass(slots=True)
class Tally:
    """Running counters of one group."""

    n: int = 0
    first_ok: int = 0
    final_ok: int = 0
    verdicts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(VERDICTS, 0))
    labels: dict[LabelKind, int] = field(default_factory=lambda: dict.fromkeys(LabelKind, 0))
    episodes: dict[LabelKind, int] = field(default_factory=lambda: dict.fromkeys(LabelKind, 0))
    progress: float = 0.0
    prefix: float = 0.0
    exact: int = 0
    under: int = 0
    over: int = 0
    corrected: int = 0
    causes: dict[str, int] = field(default_factory=dict)
    div_labels: dict[str, int] = field(default_factory=dict)
    div_steps: dict[int, int] = field(default_factory=dict)
    div_position: float = 0.0
    realised: dict[int, int] = field(default_factory=dict)
    answer_fields: dict[str, list[int]] = field(default_factory=dict)
    """A multi-field answer's field -> [first answers with it right, first answers]."""
    clusters: list[tuple[int, ...]] = field(default_factory=list)
    """Per scenario of the group (when the records name them): its trials, then its count
    of each :data:`CLUSTERED` measure; filled in once every record is read."""

    def add(self, ep: Episode) -> None:
        self.n += 1
        self.first_ok += ep.first_ok
        self.final_ok += ep.final_ok
        self.verdicts[ep.verdict] += 1
        for kind, count in ep.labels.items():
            self.labels[kind] += count
            self.episodes[kind] += 1
        self.progress += ep.progress
        self.prefix += ep.prefix
        self.exact += ep.exact
        self.under += ep.under
        self.over += ep.over
        self.corrected += ep.corrected
        for cause, count in ep.causes.items():
            self.causes[cause] = self.causes.get(cause, 0) + count
        if ep.divergence is not None:
            label, step, total = ep.divergence
            self.div_labels[label] = self.div_labels.get(label, 0) + 1
            where = total + 1 if step is None else step  # no step: past the last one
            self.div_steps[where] = self.div_steps.get(where, 0) + 1
            self.div_position += min(where - 1, total) / (total or 1)
        if ep.realised is not None:
            self.realised[ep.realised] = self.realised.get(ep.realised, 0) + 1
        for name, right in ep.fields:
            counts = self.answer_fields.setdefault(name, [0, 0])
            counts[0] += right
            counts[1] += 1

    def stats(self) -> CellStats:
        """The group's statistics (design effects from its :attr:`clusters`)."""
        clusters = self.clusters
        extra: dict[str, Any] = dict(self.verdicts)  # and scenarios, design effects if known
        if clusters:
            extra["scenarios"] = len(clusters)
            if self.n > len(clusters):
                extra["design_effects"] = {
                    m: round(design_effect([(c[i], c[0]) for c in clusters]), 6)
                    for i, m in enumerate(CLUSTERED, 1)
                }
        return CellStats(
            n=self.n,
            first_answer_correct=self.first_ok,
            final_answer_correct=self.final_ok,
            exact_steps=self.exact,
            under_executed=self.under,
            over_executed=self.over,
            missing_answer=self.episodes[LabelKind.MISSING_ANSWER],
            premature_answer=self.episodes[LabelKind.PREMATURE_FINISH],
            self_corrected=self.corrected,
            label_counts=dict(self.labels),
            episodes_with_label=dict(self.episodes),
            progress_rate=ratio(self.progress, self.n),
            prefix_rate=ratio(self.prefix, self.n),
            wrong_argument_causes=dict(sorted(self.causes.items(), key=_cause_order)),
            divergence_labels=dict(sorted(self.div_labels.items(), key=_label_order)),
            divergence_steps=dict(sorted(self.div_steps.items())),
            divergence_position=ratio(self.div_position, sum(self.div_labels.values())),
            realised_lookbacks=dict(sorted(self.realised.items())),
            answer_fields={f: (c[0], c[1]) for f, c in self.answer_fields.items()},
            **extra,
        )


CLUSTERED = ("first_answer", "faithful", "unfaithful_correct", *STUDY_RATES, "diverged")
"""The rates whose intervals carry the design effect, in a scenario's counter order
(after its trials)."""
COUNTERS = 1 + len(CLUSTERED)


def clustered_hits(ep: Episode) -> tuple[bool, ...]:
    """Whether an episode counts toward each :data:`CLUSTERED` measure, in that order."""
    missing = LabelKind.MISSING_ANSWER in ep.labels
    premature = LabelKind.PREMATURE_FINISH in ep.labels
    return (
        *(ep.first_ok, ep.verdict == "faithful", ep.verdict == "unfaithful_correct"),
        *(ep.exact, ep.under, ep.over, missing, premature, ep.corrected),
        ep.divergence is not None,
    )


def _in_order(order: Iterable[str]) -> Callable[[tuple[str, int]], tuple[int, str]]:
    """Sort key of a ``(name, count)`` item: ``name``'s place in ``order``, others after."""
    rank = {name: i for i, name in enumerate(order)}
    return lambda item: (rank.get(item[0], len(rank)), item[0])


_cause_order, _label_order = _in_order(CAUSES), _in_order(_KINDS)
