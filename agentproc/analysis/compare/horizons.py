"""The procedure horizon in a comparison: each arm's 50% faithful horizon, and each arm's
paired difference from the baseline (:mod:`agentproc.analysis.compare.horizon_diff`), Holm-
corrected across arms as the faithful verdict is; in text (a table and one line per arm)
and in the arms' and comparisons' JSON.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence

from rich.console import Console
from rich.table import Table
from rich.text import Text

from agentproc.analysis.compare.horizon_diff import LEVEL, HorizonDifference, difference
from agentproc.analysis.compare.rate_diff import Pair
from agentproc.analysis.measures.horizon import HorizonFit, Row, horizon_fit
from agentproc.analysis.render.formats import p_text
from agentproc.analysis.stats.exact import ALPHA
from agentproc.analysis.stats.multiplicity import holm, holm_levels


def paired_rows(pairs: Sequence[Pair]) -> tuple[list[Row], list[Row]]:
    """The baseline's and the arm's rows over their paired scenarios, in one order: per
    scenario its steps, faithful episodes and paired trials."""
    counts: dict[str, list[int]] = {}
    for b, v in pairs:
        c = counts.setdefault(b.scenario_id, [b.steps, 0, 0, 0])
        c[1] += b.faithful
        c[2] += v.faithful
        c[3] += 1
    return (
        [(s, kb, n) for s, kb, _, n in counts.values()],
        [(s, ka, n) for s, _, ka, n in counts.values()],
    )


Fitter = Callable[[Sequence[Row]], HorizonFit]
"""Rows -> their fit (:func:`~agentproc.analysis.measures.horizon.horizon_fit`)."""


def fitter() -> Fitter:
    """:func:`~agentproc.analysis.measures.horizon.horizon_fit` that fits each distinct group of
    rows once: an arm's rows, and the baseline's paired with each arm, recur in a
    comparison."""
    seen: dict[tuple[Row, ...], HorizonFit] = {}

    def fit(rows: Sequence[Row]) -> HorizonFit:
        key = tuple(rows)
        if key not in seen:
            seen[key] = horizon_fit(key)
        return seen[key]

    return fit


def differences(
    pairs: Mapping[str, Sequence[Pair]], fit: Fitter | None = None
) -> dict[str, HorizonDifference]:
    """Each arm's paired difference of horizons from the baseline (arm name -> its pairs),
    each group of rows fitted once by ``fit``; with several arms, p-values Holm-adjusted
    across the arms that have a difference, each interval at the level Holm tested it at."""
    fit = fit or fitter()
    out = {arm: difference(*map(fit, paired_rows(p))) for arm, p in pairs.items()}
    raw = {arm: d.p for arm, d in out.items() if d.p is not None}
    if len(out) < 2 or not raw:
        return out
    adjusted, levels = holm(raw), holm_levels(raw)
    return {
        arm: d
        if arm not in raw
        else dataclasses.replace(d, p_holm=adjusted[arm], level=1 - levels[arm])
        for arm, d in out.items()
    }


def line(arm: str, baseline: str, d: HorizonDifference) -> str:
    """``ARM: 50% faithful horizon against BASE 17.2 steps [11.2, 23.4] -> 47.1 steps [...]:
    +29.8 steps (x2.73 [1.63, 4.59], p = 2.8e-04), longer``, or why the horizons cannot be
    compared."""
    head = (
        f"{arm}: {100 * LEVEL:.0f}% faithful horizon against {baseline} "
        f"{d.baseline.text(short=True)} -> {d.arm.text(short=True)}"
    )
    said = "" if d.verdict == "not compared" else f", {d.verdict}"
    return f"{head}: {d.text()}{said}"


def render(
    names: Sequence[str],
    baseline: str,
    horizons: Mapping[str, str],
    diffs: Mapping[str, HorizonDifference],
    out: Console,
) -> None:
    """The table of each arm's horizon and its difference from the baseline, then one line
    per arm."""
    from agentproc.analysis.render.console_fit import print_table, print_wrapped

    held = any(d.p_holm is not None for d in diffs.values())
    t = Table(
        title=f"procedure horizon (where faithful accuracy falls to {100 * LEVEL:.0f}%, "
        "95% interval)",
        caption="difference = arm - baseline on the paired scenarios; ratio = arm / baseline "
        "with the interval of its test (sandwich delta method, the scenario as the unit"
        + ("; Holm across arms" if held else "")
        + f"); * significant at {ALPHA:g}; never extrapolated past the lengths tested",
    )
    for col in ("arm", "horizon", "difference", "ratio", "p"):
        t.add_column(col, justify="left" if col == "arm" else "right")
    for name in names:
        d = diffs.get(name)
        shown = name + (" (baseline)" if name == baseline else "")
        if d is None or d.ci is None or d.ratio is None or d.diff is None:
            t.add_row(shown, Text(horizons[name]), "-" if d is None else "not compared", "-", "-")
            continue
        ci = d.ci
        p = d.p if d.p_holm is None else d.p_holm
        star = " *" if d.significant else ""
        t.add_row(
            shown,
            Text(horizons[name]),
            f"{d.diff:+.3g} steps",
            Text(f"x{d.ratio:.3g} [{ci[0]:.3g}, {ci[1]:.3g}]"),
            f"{p_text(p)}{star}" if p is not None else "-",
        )
    print_table(out, t)
    for name, d in diffs.items():
        print_wrapped(out, line(name, baseline, d))
