"""Terminal tables of a stress sweep: the ranking, then the breaking points."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from agentproc.experiments.stress import Breaking, StressResult, Walk


def _walk(w: Walk) -> str:
    if w.holds_to is None or w.rate is None:
        held = "holds nowhere"
    else:
        lo, hi = w.rate.ci
        held = f"holds to {w.holds_to} ({w.rate.value:.2f} [{lo:.2f}, {hi:.2f}])"
    tail = f", breaks at {w.breaks_at}" if w.breaks_at is not None else ", never breaks"
    return held + tail


def _point(b: Breaking, other: str) -> str:
    return "\n".join(f"{other} {w.at}: {_walk(w)}" for w in b.walks) or "-"


def render_stress(result: StressResult, out: Console) -> None:
    """Print the ranking of the variants (most harmful first) and each breaking point."""
    base = result.compare.baseline
    methods = sorted({r.method for r in result.ranking}) or ["exact McNemar"]
    t = Table(
        title=f"variants ranked by their effect on faithful accuracy (vs {base})",
        caption="difference = variant - default over scenarios, 95% interval of the test's "
        f"own method ({', '.join(methods)}); p Holm-corrected across variants, verdict from it",
    )
    for col in ("rank", "variant", "axis", base, "variant ", "difference", "p (Holm)", "verdict"):
        t.add_column(col, justify="left" if col in ("variant", "axis", "verdict") else "right")
    for i, r in enumerate(result.ranking, 1):
        diff = (
            f"{r.diff:+.3f} (too few scenarios)"
            if r.ci is None
            else f"{r.diff:+.3f} [{r.ci[0]:+.3f}, {r.ci[1]:+.3f}]"
        )
        t.add_row(
            str(i),
            r.variant,
            r.axis,
            f"{r.baseline:.3f}",
            f"{r.faithful:.3f}",
            diff,
            f"{r.p_holm:.3g}",
            r.verdict,
        )
    out.print(t)
    b = Table(
        title=f"breaking points: a value holds while faithful accuracy's 95% interval is at or "
        f"above {result.threshold:g}, breaks once it is below",
        caption="per value of the other knob; between holding and breaking nothing is claimed",
    )
    for col in ("variant", "length N", "look-back L"):
        b.add_column(col)
    for name, (by_length, by_lookback) in result.breaking.items():
        b.add_row(name, _point(by_length, "L"), _point(by_lookback, "N"))
    out.print(b)
