"""Terminal tables of a comparison (``agentproc compare``), ending in one verdict per arm."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from agentproc.analysis.compare.horizons import render as render_horizons
from agentproc.analysis.compare.result import (
    ARM_MEASURES,
    TITLES,
    CompareResult,
    Comparison,
    Difference,
    Rate,
)
from agentproc.analysis.render.console_fit import print_table, print_wrapped, two_lines
from agentproc.analysis.render.formats import p_text
from agentproc.analysis.render.headline import NONE


def _rate(r: Rate) -> str:
    if not r.n:
        return NONE
    lo, hi = r.ci
    return f"{r.value:.3f} [{lo:.3f}, {hi:.3f}]"


def diff_text(diff: float, ci: tuple[float, float] | None) -> str:
    """A difference of shares and its interval (or why there is none)."""
    if ci is None:
        return f"{diff:+.3f} (too few scenarios)"
    return f"{diff:+.3f} [{ci[0]:+.3f}, {ci[1]:+.3f}]"


def _p(d: Difference) -> str:
    text = p_text(d.p) + ("" if d.p_holm is None else f" (Holm {p_text(d.p_holm)})")
    return f"{text} *" if d.significant else text


def render_compare(result: CompareResult, out: Console) -> None:
    """Print the arms, each comparison (overall, labels, cells), trials, then the verdicts."""
    arms = Table(
        title="arms (95% Wilson intervals"
        + (", on episodes over the trials' design effect)" if _trials_run(result) else ")")
    )
    for col in ("arm", "episodes", *(TITLES[m] for m in ARM_MEASURES), "errored"):
        arms.add_column(col, justify="left" if col == "arm" else "right")
    for arm in result.arms.values():
        rates = arm.overall.rates
        name = arm.name + (" (baseline)" if arm.name == result.baseline else "")
        arms.add_row(
            name,
            str(arm.overall.n),
            *(_rate(rates[m]) for m in ARM_MEASURES),
            str(sum(arm.errored.values())),
        )
    print_table(out, arms)
    for c in result.comparisons:
        _comparison(c, out)
    _trials(result, out)
    _horizons(result, out)
    for c in result.comparisons:
        print_wrapped(out, c.line())


def _horizons(result: CompareResult, out: Console) -> None:
    """Each arm's procedure horizon and its paired difference from the baseline."""
    diffs = {c.arm: c.horizon for c in result.comparisons if c.horizon is not None}
    shown = {n: a.horizon.text(short=True) for n, a in result.arms.items() if a.horizon}
    if diffs and any(a.horizon is not None and a.horizon.fitted for a in result.arms.values()):
        render_horizons(list(shown), result.baseline, shown, diffs, out)


def _trials_run(result: CompareResult) -> bool:
    return any(a.trials.trials > 1 for a in result.arms.values())


def _comparison(c: Comparison, out: Console) -> None:
    t = Table(
        title=f"{c.arm} vs {c.baseline}: {c.pairs} paired episodes on {c.scenarios} scenarios"
        + (f" ({c.unpaired} unpaired left out)" if c.unpaired else "")
        + (f" ({c.lost_to_errors} lost to errors)" if c.lost_to_errors else ""),
        caption="difference = arm - baseline over scenarios, 95% interval of the test's own "
        f"method ({c.overall['faithful'].method}); labels Holm-corrected across the kinds "
        "that can reject; * significant at 0.05",
    )
    for col in ("measure", c.baseline, c.arm, "difference", "only\nbase", "only\narm", "p"):
        t.add_column(col, justify="left" if col == "measure" else "right")
    rows = [c.overall[m] for m in ARM_MEASURES]
    rows += [d for d in c.labels if d.gained or d.lost or d.baseline or d.variant]
    for d in rows:
        t.add_row(
            TITLES.get(d.measure, d.measure),
            f"{d.baseline:.3f}",
            f"{d.variant:.3f}",
            diff_text(d.diff, d.ci),
            str(d.lost),
            str(d.gained),
            two_lines(_p(d)),
        )
    print_table(out, t)
    if len(c.cells) < 2:
        return
    cells = Table(
        title=f"{c.arm} vs {c.baseline} per cell",
        caption="p Holm-corrected across cells and both measures; * significant at 0.05",
    )
    for col in (
        "N",
        "L",
        "pairs",
        "faithful\nbaseline",
        "faithful\narm",
        "faithful\ndifference",
        "faithful\np",
        "answer\ndifference",
        "answer\np",
    ):
        cells.add_column(col, justify="right")
    for (steps, lookback, _), ds in c.cells.items():
        f, a = ds["faithful"], ds["first_answer"]
        cells.add_row(
            str(steps),
            str(lookback),
            str(f.n),
            f"{f.baseline:.3f}",
            f"{f.variant:.3f}",
            diff_text(f.diff, f.ci),
            two_lines(_p(f)),
            diff_text(a.diff, a.ci),
            two_lines(_p(a)),
        )
    print_table(out, cells, keys=2)


def fmt(x: float | None) -> str:
    """A share to three decimals, or a dash when there is none."""
    return "-" if x is None else f"{x:.3f}"


def _trials(result: CompareResult, out: Console) -> None:
    k = max(a.trials.trials for a in result.arms.values())
    if k < 2:
        return
    t = Table(
        title=f"trials: pass^k (every one of k trials succeeds), k = 1..{k}",
        caption=f"pass^k over the scenarios with {k} scored trials",
    )
    t.add_column("arm")
    t.add_column("scenarios", justify="right")
    for i in range(1, k + 1):
        t.add_column(f"answer pass^{i}", justify="right")
    for i in range(1, k + 1):
        t.add_column(f"faithful pass^{i}", justify="right")
    t.add_column("deterministic")

    for arm in result.arms.values():
        s = arm.trials
        flag = {True: "yes (trials identical)", False: "no", None: "-"}[s.deterministic]
        t.add_row(
            arm.name,
            f"{s.pass_scenarios} of {s.tasks}",
            *(fmt(s.pass_answer.get(i)) for i in range(1, k + 1)),
            *(fmt(s.pass_faithful.get(i)) for i in range(1, k + 1)),
            flag,
        )
    print_table(out, t)
    st = Table(
        title="label stability across trials",
        caption="recurrence: share of a scenario's trials with the label; same step: over the "
        "scenarios where it recurs, share of those trials where it falls on the same step",
    )
    for col in ("arm", "label", "scenarios", "recurrence", "recurs in", "same step"):
        st.add_column(col, justify="left" if col in ("arm", "label") else "right")
    for arm in result.arms.values():
        for ls in arm.trials.stability:
            st.add_row(
                arm.name,
                ls.kind,
                str(ls.scenarios),
                f"{ls.recurrence:.2f}",
                str(ls.recurring),
                fmt(ls.same_step),
            )
    if st.row_count:
        print_table(out, st, keys=2)
