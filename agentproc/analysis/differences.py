"""Paired differences of one rate between two arms' episodes, the scenario as the unit.

:func:`difference` tests one rate (exact McNemar with one trial per scenario, the
sign-flip permutation test of per-scenario means with several; the interval of the
same method, :mod:`agentproc.analysis.paired`); :func:`corrected` and
:func:`cells_corrected` put a family of them through Holm over the hypotheses that can
reject at all (Tarone's rule).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

from agentproc.analysis.compare_result import CellId, Difference, has_measure
from agentproc.analysis.multiplicity import tarone_holm
from agentproc.analysis.paired import PairedTest, mcnemar_test, signflip_test
from agentproc.analysis.stats import ALPHA
from agentproc.analysis.trials import Outcome

Pair = tuple[Outcome, Outcome]
"""A baseline episode and the arm's episode of the same scenario and trial."""


def paired_test(pairs: Sequence[Pair], measure: str, alpha: float = ALPHA) -> PairedTest:
    """The paired test of one rate, the scenario as the unit: exact McNemar when every
    scenario has one paired trial, else the sign-flip test of per-scenario means."""
    units = units_of(pairs, measure)
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
    n = len(pairs)
    gained = sum(has_measure(v, measure) and not has_measure(b, measure) for b, v in pairs)
    lost = sum(has_measure(b, measure) and not has_measure(v, measure) for b, v in pairs)
    base, var = scenario_rates(pairs, measure)
    test = paired_test(pairs, measure)
    return Difference(
        measure=measure,
        n=n,
        baseline=base,
        variant=var,
        diff=test.diff,
        ci=test.ci,
        gained=gained,
        lost=lost,
        p=test.p,
        method=test.method,
        scenarios=test.scenarios,
        min_p=test.min_p,
    )


def units_of(pairs: Sequence[Pair], measure: str) -> list[tuple[int, int, int]]:
    """Per paired scenario: trials only the arm has it, only the baseline, paired trials."""
    rows: dict[str, list[int]] = {}
    for b, v in pairs:
        row = rows.setdefault(b.scenario_id, [0, 0, 0])
        hb, hv = has_measure(b, measure), has_measure(v, measure)
        row[0] += hv and not hb
        row[1] += hb and not hv
        row[2] += 1
    return [(g, lo, k) for g, lo, k in rows.values()]


def scenario_rates(pairs: Sequence[Pair], measure: str) -> tuple[float, float]:
    """The baseline's and the arm's rate, each the mean over paired scenarios of the
    share of the scenario's paired trials that have it."""
    rows: dict[str, list[int]] = {}
    for b, v in pairs:
        row = rows.setdefault(b.scenario_id, [0, 0, 0])
        row[0] += has_measure(b, measure)
        row[1] += has_measure(v, measure)
        row[2] += 1
    if not rows:
        return 0.0, 0.0
    n = len(rows)
    return (
        math.fsum(b / k for b, _, k in rows.values()) / n,
        math.fsum(v / k for _, v, k in rows.values()) / n,
    )


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
