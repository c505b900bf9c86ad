"""Paired differences of one rate between two arms' episodes, the scenario as the unit.

:func:`difference` tests one rate (exact McNemar with one trial per scenario, the
sign-flip permutation test of per-scenario means with several; the interval of the
same method, :mod:`agentproc.analysis.stats.paired`); :func:`corrected` and
:func:`cells_corrected` put a family of them through Holm over the hypotheses that can
reject at all (Tarone's rule).
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from collections.abc import Sequence

from agentproc.analysis.compare.result import CellId, Difference, measure_of, measures_of
from agentproc.analysis.measures.trials import Outcome
from agentproc.analysis.stats.exact import ALPHA
from agentproc.analysis.stats.multiplicity import tarone_holm
from agentproc.analysis.stats.paired import PairedTest, mcnemar_test, signflip_test

Pair = tuple[Outcome, Outcome]
"""A baseline episode and the arm's episode of the same scenario and trial."""


def paired_test(pairs: Sequence[Pair], measure: str, alpha: float = ALPHA) -> PairedTest:
    """The paired test of one rate, the scenario as the unit: exact McNemar when every
    scenario has one paired trial, else the sign-flip test of per-scenario means."""
    return _test(_units(pairs, _flags(pairs, measure)), alpha)


def _test(units: list[tuple[int, int, int]], alpha: float) -> PairedTest:
    if all(k == 1 for _, _, k in units):
        lost = sum(lo for _, lo, _ in units)
        gained = sum(g for g, _, _ in units)
        return mcnemar_test(lost, gained, len(units), alpha)
    return signflip_test([(g - lo) / k for g, lo, k in units], alpha)


def difference(pairs: Sequence[Pair], measure: str) -> Difference:
    """The paired difference of one rate over pairs (baseline, arm).

    Both rates are means over the paired scenarios of each scenario's rate over its
    paired trials, as the difference is: one weighting per line, whatever the trials
    (with as many trials in every scenario it is the share of episodes).
    """
    (d,) = rate_differences(pairs, [measure])
    return d


def _mean(per: dict[str, float], n: int) -> float:
    return math.fsum(per.values()) / n if n else 0.0


def rate_differences(pairs: Sequence[Pair], measures: Sequence[str]) -> list[Difference]:
    """:func:`difference` of each of ``measures``, counted in one pass over the pairs (a
    comparison tests every label kind on the same pairs)."""
    wanted = set(measures)
    base: dict[str, Counter[str]] = {}  # scenario -> measure -> trials the baseline has it
    var: dict[str, Counter[str]] = {}
    gained: dict[str, Counter[str]] = {}  # scenario -> measure -> trials only the arm has it
    lost: dict[str, Counter[str]] = {}
    trials: dict[str, int] = {}  # scenario -> paired trials, in order of first appearance
    for b, v in pairs:
        mb, mv = measures_of(b) & wanted, measures_of(v) & wanted
        sid = b.scenario_id
        if sid not in trials:
            trials[sid], gained[sid], lost[sid] = 0, Counter(), Counter()
            base[sid], var[sid] = Counter(), Counter()
        trials[sid] += 1
        base[sid].update(mb)
        var[sid].update(mv)
        if mb != mv:
            gained[sid].update(mv - mb)
            lost[sid].update(mb - mv)
    n, scenarios = len(pairs), len(trials)
    out = []
    for m in measures:
        units = [(gained[sid][m], lost[sid][m], k) for sid, k in trials.items()]
        test = _test(units, ALPHA)
        out.append(
            Difference(
                measure=m,
                n=n,
                baseline=_mean({sid: base[sid][m] / k for sid, k in trials.items()}, scenarios),
                variant=_mean({sid: var[sid][m] / k for sid, k in trials.items()}, scenarios),
                diff=test.diff,
                ci=test.ci,
                gained=sum(g for g, _, _ in units),
                lost=sum(lo for _, lo, _ in units),
                p=test.p,
                method=test.method,
                scenarios=test.scenarios,
                min_p=test.min_p,
            )
        )
    return out


def _flags(pairs: Sequence[Pair], measure: str) -> list[tuple[bool, bool]]:
    """Per pair: whether the baseline's episode, and the arm's, count for ``measure``."""
    has = measure_of(measure)
    return [(has(b), has(v)) for b, v in pairs]


def units_of(pairs: Sequence[Pair], measure: str) -> list[tuple[int, int, int]]:
    """Per paired scenario: trials only the arm has it, only the baseline, paired trials."""
    return _units(pairs, _flags(pairs, measure))


def _units(pairs: Sequence[Pair], flags: list[tuple[bool, bool]]) -> list[tuple[int, int, int]]:
    rows: dict[str, list[int]] = {}
    for (b, _), (hb, hv) in zip(pairs, flags, strict=True):
        row = rows.get(b.scenario_id)
        if row is None:
            row = rows[b.scenario_id] = [0, 0, 0]
        row[0] += hv and not hb
        row[1] += hb and not hv
        row[2] += 1
    return [(g, lo, k) for g, lo, k in rows.values()]


def unit_diffs(pairs: Sequence[Pair], measure: str) -> list[float]:
    """Per paired scenario: the arm's rate minus the baseline's, over its paired trials."""
    return [(g - lo) / k for g, lo, k in units_of(pairs, measure)]


def corrected(raw: Sequence[Difference], alpha: float = ALPHA) -> list[Difference]:
    """Holm across the differences that can reject at all (Tarone's rule)."""
    p, min_p = dict(enumerate(d.p for d in raw)), dict(enumerate(d.min_p for d in raw))
    adjusted = tarone_holm(p, min_p, alpha)
    return [
        dataclasses.replace(d, p_holm=_or_one(adjusted[i]), family=adjusted[i] is not None)
        for i, d in enumerate(raw)
    ]


def _or_one(p: float | None) -> float:
    """A hypothesis left out of its family cannot reject: adjusted p 1."""
    return 1.0 if p is None else p


_MARKED = ("faithful", "first_answer")
"""The per-cell measures the cell table marks, corrected as one family."""


def cells_corrected(
    tables: Sequence[dict[CellId, dict[str, Difference]]],
) -> list[dict[CellId, dict[str, Difference]]]:
    """Holm across the cells of every table (and the two marked measures), Tarone's rule
    applied: one family, however many comparisons the tables come from."""
    flat = [(i, c, m) for i, t in enumerate(tables) for c in t for m in _MARKED]
    fixed = corrected([tables[i][c][m] for i, c, m in flat])
    out = [{c: dict(ds) for c, ds in t.items()} for t in tables]
    for (i, c, m), d in zip(flat, fixed, strict=True):
        out[i][c][m] = d
    return out
