"""Terminal tables of a stress sweep: the ranking, then the breaking points."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from agentproc.experiments.stress import Breaking, StressResult


def _point(b: Breaking) -> str:
    if b.holds_to is None or b.rate is None:
        return f"fails from {b.breaks_at}"
    lo, hi = b.rate.ci
    tail = f", breaks at {b.breaks_at}" if b.breaks_at is not None else ", never breaks"
    return f"{b.holds_to} ({b.rate.value:.2f} [{lo:.2f}, {hi:.2f}]{tail})"


def render_stress(result: StressResult, out: Console) -> None:
    """Print the ranking of the variants (most harmful first) and each breaking point."""
    base = result.compare.baseline
    t = Table(
        title=f"variants ranked by their effect on faithful accuracy (vs {base})",
        caption="difference = variant - default, 95% paired bootstrap interval; "
        "p exact McNemar, Holm-corrected across variants",
    )
    for col in ("rank", "variant", "axis", base, "variant ", "difference", "p (Holm)", "verdict"):
        t.add_column(col, justify="left" if col in ("variant", "axis", "verdict") else "right")
    for i, r in enumerate(result.ranking, 1):
        t.add_row(
            str(i),
            r.variant,
            r.axis,
            f"{r.baseline:.3f}",
            f"{r.faithful:.3f}",
            f"{r.diff:+.3f} [{r.ci[0]:+.3f}, {r.ci[1]:+.3f}]",
            f"{r.p_holm:.3g}",
            r.verdict,
        )
    out.print(t)
    b = Table(
        title=f"breaking points: faithful accuracy >= {result.threshold:g} "
        "at every value up to (95% Wilson interval there)"
    )
    for col in ("variant", "length N", "look-back L"):
        b.add_column(col)
    for name, (by_length, by_lookback) in result.breaking.items():
        b.add_row(name, _point(by_length), _point(by_lookback))
    out.print(b)
