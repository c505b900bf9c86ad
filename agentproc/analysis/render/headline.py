"""An agent's headline in a rendered report: its figures with their intervals, then
its verdicts, causes, first divergence, horizon and tokens, a few lines of text.

:func:`~agentproc.analysis.render.report_text.render_report` prints one per agent before its tables.
"""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from agentproc.analysis.measures.cells import CellStats
from agentproc.analysis.measures.horizon import by_lookback_lines
from agentproc.analysis.measures.report import AgentReport
from agentproc.analysis.measures.step_names import named
from agentproc.analysis.measures.tokens import Price, tokens_text
from agentproc.analysis.render.console_fit import print_wrapped
from agentproc.analysis.stats.binomial import wilson
from agentproc.errors import counted
from agentproc.labelling import LabelKind

NONE = "\N{EN DASH}"
"""A rate over no episodes: there is no figure."""


def rate_text(value: float, ci: tuple[float, float], n: int) -> str:
    """A rate and its interval, to three and two decimals (:data:`NONE` over no episodes)."""
    return f"{value:.3f} [{ci[0]:.2f}-{ci[1]:.2f}]" if n else NONE


def _counts(items: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in items.items() if v)


def headline(console: Console, name: str, a: AgentReport, price: Price | None = None) -> None:
    """One line of headline figures, then verdicts, causes, the first divergence and the
    tokens (costed at ``price``)."""
    s = a.overall
    runs = s.n + a.errored
    err_rate = a.errored / runs if runs else 0.0
    print_wrapped(
        console,
        Text.assemble(
            (name, "bold"),
            f": n={s.n}{_design(s)}, first-answer acc {rate_text(*s.rate('accuracy'), s.n)},"
            f" faithful acc {rate_text(*s.rate('faithful_accuracy'), s.n)},"
            " unfaithful-correct gap "
            f"{rate_text(*s.rate('unfaithful_correct_rate'), s.n)},"
            f" errored {a.errored} of {runs}"
            f" ({rate_text(err_rate, wilson(a.errored, runs), runs)})",
        ),
    )
    if a.errored:
        print_wrapped(
            console,
            Text(
                f"warning: {counted(a.errored, 'episode')} of {name} could not be run "
                f"({_counts(a.errors)}) and count in no figure; run again with --resume "
                "to retry them",
                style="yellow",
            ),
        )
    if a.cache is not None:
        calls, hits = a.cache
        console.print(
            f"  response cache: {hits} of {calls} model calls answered from the cache "
            "(left out of model time)",
            highlight=False,
        )
    console.print(f"  {tokens_text(a.tokens, price)}", markup=False, highlight=False)
    if not s.n:
        return
    print_wrapped(
        console,
        f"  verdicts: {', '.join(f'{k} {v}' for k, v in s.verdicts.items())}; final-answer acc "
        f"{s.final_accuracy:.3f}, mean progress {s.progress_rate:.3f}, mean correct prefix "
        f"{s.prefix_rate:.3f}",
    )
    if s.answer_fields:
        right = ", ".join(f"{f} {c} of {n}" for f, (c, n) in s.answer_fields.items())
        print_wrapped(console, f"  answer fields right in the first answer: {right}")
    wrong = s.label_counts[LabelKind.WRONG_ARGUMENT]
    if wrong:
        carried = s.wrong_argument_causes.get("propagated", 0)
        new = {k: v for k, v in s.wrong_argument_causes.items() if k != "propagated"}
        print_wrapped(
            console,
            f"  wrong_argument {wrong}: {carried} carried forward (propagated) from "
            f"{s.slips} new mistakes" + (f" ({_counts(new)})" if new else ""),
        )
    if s.diverged:
        print_wrapped(
            console,
            f"  first divergence: {s.diverged} of {s.n} episodes left the procedure "
            f"({rate_text(s.diverged / s.n, s.diverged_ci, s.n)}); first label "
            f"{_counts(s.divergence_labels)}; median step {_median(s, a)}, on "
            f"average {100 * s.divergence_position:.0f}% of the way through",
        )
    else:
        print_wrapped(console, "  first divergence: none (every episode followed the procedure)")
    if a.horizon is not None:
        for line in [*a.horizon.lines(), *by_lookback_lines(a.horizon_by_lookback)]:
            print_wrapped(console, f"  {line}")
    if a.per_step is not None and s.diverged and not a.declared:  # else in the steps' section
        print_wrapped(console, f"  {a.per_step.median_line()}")


def _median(s: CellStats, a: AgentReport) -> str:
    """The median step of the first divergence, named on a declared workflow."""
    step = s.divergence_median_step
    return str(step) if step is None else named(step, a.step_names)


def _design(s: CellStats) -> str:
    """Scenarios and trials, when a scenario has several (intervals then carry the design
    effect)."""
    if s.trials <= 1:
        return ""
    deff = s.design_effects.get("faithful", 1.0)
    return (
        f" ({s.scenarios} scenarios x {s.trials:.3g} trials; intervals on n / design effect, "
        f"{deff:.2f} for faithful acc)"
    )
