"""The terminal table of the own error rate against the share of wrong pre-filled steps."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from agentproc.analysis.measures.induced import ShareCurve, SharePoint
from agentproc.analysis.render.console_fit import print_table


def _rate(p: SharePoint) -> str:
    if not p.rate.n:
        return "-"
    lo, hi = p.rate.ci
    return f"{p.rate.value:.3f} [{lo:.3f}, {hi:.3f}]\n{p.rate.k} of {p.rate.n} steps"


def _lift(p: SharePoint) -> str:
    if p.lift is None:
        return "-"
    diff, (lo, hi) = p.lift
    verdict = "higher" if lo > 0 else "lower" if hi < 0 else "no difference"
    return f"{diff:+.3f} [{lo:+.3f}, {hi:+.3f}]\n{verdict}"


def render_share_curve(curve: ShareCurve, out: Console) -> None:
    """Print one row per share: the own error rate and its difference from the clean
    pre-fill, each with its 95% interval."""
    base = curve.baseline or "no clean pre-fill"
    t = Table(
        title=f"{curve.agent}: own error rate against the share of wrong pre-filled steps",
        caption="own error rate: departures at the agent's own steps over its own steps "
        "attempted up to its first departure (Wilson 95%, scenarios as clusters); "
        f"difference from {base} with Newcombe's interval",
    )
    for col in ("variant", "wrong share", "episodes", "own error rate", f"vs {base}"):
        t.add_column(col, justify="left" if col == "variant" else "right")
    for p in curve.points:
        t.add_row(p.variant, f"{p.wrong_share:g}", str(p.episodes), _rate(p), _lift(p))
    print_table(out, t, keys=1)
