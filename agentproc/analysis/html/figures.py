"""The numbers behind the HTML report's figures that the report does not keep: where
the first divergence falls (accuracy per (length, look-back) pair is folded from the
report's cells).

A small tally folded in one pass over the records, like
:func:`~agentproc.analysis.measures.report.aggregate`; errored episodes do not count.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from agentproc.analysis.html.episodes import anchor, series_of
from agentproc.analysis.measures.report import Report
from agentproc.analysis.measures.step_names import WorkflowNames, step_text
from agentproc.runs import episode_key, is_error

BINS = 10
"""Divergence positions are shown in tenths of the procedure; one more column is the answer."""


@dataclass
class Figures:
    """Per series: divergence counts by (look-back, bin), and the first divergences."""

    divergence: dict[str, dict[int, list[int]]] = field(default_factory=dict)
    """Series -> look-back -> episodes per position bin (the last bin: at the answer)."""
    first: dict[str, dict[tuple[str, int | None], Example]] = field(default_factory=dict)
    """Series -> (label, step) of a first divergence -> how many episodes, and the first."""


@dataclass(slots=True)
class Example:
    """Episodes that share a first divergence: how many, and the anchor of the first."""

    count: int
    anchor: str
    where: str = ""
    """The step named (``step 4 (late_penalty → late_days)``) where every such episode's
    workflow names it alike; empty otherwise (a procedure's step, or several names)."""


def position_bin(step: int | None, steps: int) -> int:
    """The tenth of the procedure a step lies in (``BINS`` for the answer).

    >>> position_bin(1, 10), position_bin(10, 10), position_bin(None, 10)
    (0, 9, 10)
    """
    if step is None or steps <= 0:
        return BINS
    return min(BINS - 1, (max(step, 1) - 1) * BINS // steps)


def figures(
    records: Iterable[dict[str, Any]], report: Report, named: WorkflowNames | None = None
) -> Figures:
    """Fold records into :class:`Figures`, each under its agent as ``report`` shows it (a
    declared workflow's steps named as ``named`` has found them)."""
    out = Figures()
    for rec in records:
        if is_error(rec):  # type: ignore[arg-type]
            continue
        name, m = series_of(rec, report), rec["metrics"]
        steps, lookback = int(rec["params"]["steps"]), int(rec["params"]["lookback"])
        div = m.get("first_divergence")
        if isinstance(div, dict):
            row = out.divergence.setdefault(name, {}).setdefault(lookback, [0] * (BINS + 1))
            step = div.get("step") if isinstance(div.get("step"), int) else None
            row[position_bin(step, steps)] += 1
            where = (str(div.get("label")), step)
            names = named.of_record(rec) if named is not None else {}
            text = step_text(step, names) if step is not None and step in names else ""
            seen = out.first.setdefault(name, {}).get(where)
            if seen is None:
                out.first[name][where] = Example(1, anchor(episode_key(rec)), text)
            else:
                seen.count += 1
                if seen.where != text:  # two workflows' steps of one number: no name
                    seen.where = ""
    return out
