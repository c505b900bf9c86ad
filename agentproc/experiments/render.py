"""Terminal tables of a stress sweep: the ranking, then the breaking points."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from agentproc.analysis.compare.result import TITLES
from agentproc.analysis.compare.text import diff_text
from agentproc.analysis.render.console_fit import print_table, print_wrapped
from agentproc.experiments.ranking import Effect, Ranked
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


def _effect(e: Effect) -> str:
    return f"{e.baseline:.3f} -> {e.variant:.3f}\n{diff_text(e.diff, e.ci)}\np {e.p_holm:.3g}"


def _verdict(r: Ranked) -> str:
    if not r.flagged:
        return r.verdict
    short = (TITLES[m].removesuffix(" accuracy") for m in r.flagged)
    return f"{r.verdict}\ncollapse: {', '.join(short)}"


def render_stress(result: StressResult, out: Console) -> None:
    """Print the ranking of the variants (most harmful first), each breaking point, then
    one verdict line per variant on both measures."""
    base = result.compare.baseline
    methods = sorted({r.faithful.method for r in result.ranking}) or ["exact McNemar"]
    t = Table(
        title=f"variants ranked by their effect on faithful and first-answer accuracy "
        f"(vs {base}), most harmful first",
        caption=f"{base} -> variant; difference = variant - {base} over scenarios, with its "
        f"interval by the test's own method ({', '.join(methods)}) at the level Holm tested "
        "it at; p Holm-corrected across both measures of every variant, verdict from it; "
        "collapse: a measure the variant significantly lowers",
    )
    for col in ("rank", "variant", "axis", "faithful acc", "first-answer acc", "verdict"):
        t.add_column(col, justify="left" if col in ("variant", "axis", "verdict") else "right")
    for i, r in enumerate(result.ranking, 1):
        t.add_row(
            str(i), r.variant, r.axis, _effect(r.faithful), _effect(r.first_answer), _verdict(r)
        )
    print_table(out, t, keys=2)
    b = Table(
        title=f"breaking points: a value holds while faithful accuracy's 95% interval is at or "
        f"above {result.threshold:g}, breaks once it is below",
        caption="per value of the other knob; between holding and breaking nothing is claimed",
    )
    for col in ("variant", "length N", "look-back L"):
        b.add_column(col)
    for name, (by_length, by_lookback) in result.breaking.items():
        b.add_row(name, _point(by_length, "L"), _point(by_lookback, "N"))
    print_table(out, b)
    for r in result.ranking:
        print_wrapped(out, r.line(base))
