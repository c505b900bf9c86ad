"""The comparison as one self-contained page (``agentproc compare ... --html OUT.html``).

The HTML report of the compared run files (:mod:`agentproc.analysis.html`), led by the
comparison: the verdict lines first, then the arms side by side, each arm's per-label
and per-cell differences from the baseline, and the discordant scenarios (faithful in
one arm and not in the other), each linked to both episodes' drill-down.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from agentproc.analysis.compare.arms import file_arm_names
from agentproc.analysis.compare.result import (
    ARM_MEASURES,
    TITLES,
    CompareResult,
    Comparison,
    Difference,
)
from agentproc.analysis.html import HtmlReport, write_page
from agentproc.analysis.html.episodes import DETAIL_BUDGET, anchor, details, episode_rows
from agentproc.analysis.html.figures import figures
from agentproc.analysis.html.page import render_page
from agentproc.analysis.html.summary import rate_cell
from agentproc.analysis.html.svg import esc
from agentproc.analysis.measures.identity import agent_id, agent_labels
from agentproc.analysis.measures.report import aggregate
from agentproc.analysis.measures.step_names import WorkflowNames
from agentproc.analysis.measures.trials import Outcome
from agentproc.analysis.render.formats import p_text
from agentproc.runs import episode_key, record_trial
from agentproc.runs.runfile import Heads, last_heads

SHOWN = 200
"""Discordant scenarios listed per comparison (the rest are counted)."""

Place = tuple[str, str, int]
"""An arm's episode: the arm's name, the scenario id and the trial."""


def _heads(paths: Sequence[Path], warnings: list[str]) -> Heads:
    """The episodes of the files as ``compare`` reads them: files compared file by file
    (each one arm) get their arm's name, so that two files of one agent stay apart."""
    names = file_arm_names(paths)
    if names is None:
        return last_heads(list(paths), warnings)
    heads: Heads = {}
    for path, name in zip(paths, names, strict=True):
        for where, rec in last_heads([path], warnings).values():
            named = {**rec, "name": name}
            heads[episode_key(named)] = (where, named)
    return heads


def _anchors(heads: Heads, result: CompareResult) -> dict[Place, str]:
    """Each arm's episodes' anchors in the page."""
    arm_of = {(a.agent, a.mode, a.variant): a.name for a in result.arms.values()}
    labels = agent_labels(agent_id(rec) for _, rec in heads.values())  # as compare names them
    out: dict[Place, str] = {}
    for key, (_, rec) in heads.items():
        aid = agent_id(rec)
        arm = arm_of.get((labels[aid], aid.mode, aid.variant))
        if arm is not None:
            out[(arm, str(rec["scenario_id"]), record_trial(rec))] = anchor(key)
    return out


def _diff_cell(d: Difference) -> str:
    ci = (
        ""
        if d.ci is None
        else f" <span class='ci'>[{100 * d.ci[0]:+.1f}, {100 * d.ci[1]:+.1f}]</span>"
    )
    star = " *" if d.significant else ""
    holm = "" if d.p_holm is None else f" (Holm {p_text(d.p_holm)})"
    return (
        f"<td data-v='{d.diff:.6f}'>{100 * d.diff:+.1f}{ci}</td>"
        f"<td>{esc(p_text(d.p))}{esc(holm)}{star}</td><td>+{d.gained} / \N{MINUS SIGN}{d.lost}</td>"
    )


def _arms(result: CompareResult) -> str:
    head = "".join(f"<th scope='col'>{esc(TITLES[m])}</th>" for m in ARM_MEASURES)
    rows = ""
    for arm in result.arms.values():
        rates = arm.overall.rates
        base = " (baseline)" if arm.name == result.baseline else ""
        cells = "".join(rate_cell(rates[m].value, rates[m].ci, rates[m].n) for m in ARM_MEASURES)
        rows += (
            f"<tr><th scope='row'>{esc(arm.name)}{base}</th><td>{arm.overall.n}</td>{cells}"
            f"<td>{sum(arm.errored.values())}</td></tr>"
        )
    return (
        "<h3>The arms side by side</h3><p class='hint'>95% Wilson intervals.</p>"
        "<div class='scroll'><table class='arms'><thead><tr><th scope='col'>arm</th>"
        f"<th scope='col'>episodes</th>{head}<th scope='col'>errored</th></tr></thead>"
        f"<tbody>{rows}</tbody></table></div>"
    )


def _horizons(result: CompareResult) -> str:
    """Each arm's 50% faithful procedure horizon and its paired difference from the
    baseline (:mod:`agentproc.analysis.compare.horizons`)."""
    diffs = {c.arm: c.horizon for c in result.comparisons if c.horizon is not None}
    arms = [a for a in result.arms.values() if a.horizon is not None]
    if not diffs or not any(a.horizon is not None and a.horizon.fitted for a in arms):
        return ""
    rows = ""
    for arm in arms:
        d = diffs.get(arm.name)
        base = " (baseline)" if arm.name == result.baseline else ""
        horizon = arm.horizon.text() if arm.horizon is not None else ""
        if d is None:
            cells = "<td>—</td><td>—</td><td>—</td>"
        elif d.ci is None or d.ratio is None or d.diff is None:
            cells = f"<td colspan='3'>{esc(d.text())}</td>"
        else:
            p = d.p if d.p_holm is None else d.p_holm
            cells = (
                f"<td data-v='{d.diff:.6f}'>{d.diff:+.3g} steps</td>"
                f"<td>\N{MULTIPLICATION SIGN}{d.ratio:.3g} "
                f"<span class='ci'>[{d.ci[0]:.3g}, {d.ci[1]:.3g}]</span></td>"
                f"<td>{esc(f'{p:.3g}' if p is not None else '—')}{' *' if d.significant else ''}"
                f" ({esc(d.verdict)})</td>"
            )
        rows += f"<tr><th scope='row'>{esc(arm.name)}{base}</th><td>{esc(horizon)}</td>{cells}</tr>"
    return (
        "<h3>Procedure horizon</h3><p class='hint'>The length at which faithful accuracy "
        "falls to 50%, with its 95% interval; the arm's against the baseline's on their "
        "paired scenarios, the ratio's interval that of its test (the scenario as the unit; "
        "Holm across arms when there are several). Never extrapolated past the lengths "
        "tested; an arm whose success does not fall with length has no horizon, and two "
        "horizons that cannot be compared say why.</p>"
        "<div class='scroll'><table class='horizons'><thead><tr>"
        "<th scope='col'>arm</th><th scope='col'>horizon (50% faithful)</th>"
        "<th scope='col'>difference</th><th scope='col'>ratio</th><th scope='col'>p</th>"
        f"</tr></thead><tbody>{rows}</tbody></table></div>"
    )


_DIFF_HEAD = (
    "<th scope='col'>difference (points)</th><th scope='col'>p</th>"
    "<th scope='col'>pairs gained / lost</th>"
)


def _labels(c: Comparison) -> str:
    rows = "".join(
        f"<tr><th scope='row'>{esc(d.measure)}</th>{_diff_cell(d)}</tr>"
        for d in c.labels
        if d.gained or d.lost
    )
    if not rows:
        return "<p>No label kind differs between the paired episodes.</p>"
    return (
        "<h4>Per label (Holm-corrected across kinds)</h4><div class='scroll'>"
        f"<table class='labels'><thead><tr><th scope='col'>label</th>{_DIFF_HEAD}</tr></thead>"
        f"<tbody>{rows}</tbody></table></div>"
    )


def _cells(c: Comparison) -> str:
    rows = "".join(
        f"<tr><th scope='row'>{esc(cell[2])}</th><td>{cell[0]}</td><td>{cell[1]}</td>"
        f"<td>{esc(TITLES[m])}</td>{_diff_cell(d)}</tr>"
        for cell, ds in c.cells.items()
        for m, d in ds.items()
        if m in ("faithful", "first_answer")
    )
    return (
        "<h4>Per grid cell (Holm-corrected across cells and both measures)</h4>"
        "<div class='scroll'><table class='cells'><thead><tr><th scope='col'>cell</th>"
        f"<th scope='col'>N</th><th scope='col'>L</th><th scope='col'>measure</th>{_DIFF_HEAD}"
        f"</tr></thead><tbody>{rows}</tbody></table></div>"
    )


def _verdict(o: Outcome) -> str:
    if o.faithful:
        return "faithful"
    labels = ", ".join(sorted(o.labels))
    return ("right answer, " if o.answer else "wrong answer, ") + (labels or "no label")


def _discordant(c: Comparison, result: CompareResult, anchors: dict[Place, str]) -> str:
    """The paired episodes faithful in one arm only, each linked to both drill-downs."""
    base = {(o.scenario_id, o.trial): o for o in result.arms[c.baseline].outcomes}
    pairs = [
        (base[(o.scenario_id, o.trial)], o)
        for o in result.arms[c.arm].outcomes
        if (o.scenario_id, o.trial) in base
        and base[(o.scenario_id, o.trial)].faithful != o.faithful
    ]
    pairs.sort(key=lambda p: (p[1].faithful, p[0].scenario_id, p[0].trial))

    def link(arm: str, o: Outcome) -> str:
        at = anchors.get((arm, o.scenario_id, o.trial))
        text = esc(_verdict(o))
        return f"<a class='discordant' href='#{at}'>{text}</a>" if at else text

    rows = "".join(
        f"<tr><th scope='row'>{esc(b.scenario_id)}</th><td>{b.trial}</td>"
        f"<td>{link(c.baseline, b)}</td><td>{link(c.arm, v)}</td></tr>"
        for b, v in pairs[:SHOWN]
    )
    more = f"<p>{len(pairs) - SHOWN} more not listed.</p>" if len(pairs) > SHOWN else ""
    if not pairs:
        return "<h4>Discordant scenarios</h4><p>None: every paired episode agrees.</p>"
    return (
        f"<h4>Discordant scenarios ({len(pairs)}: faithful in one arm only)</h4>"
        "<p class='hint'>Open an episode to see its calls beside the procedure.</p>"
        "<div class='scroll'><table class='discordant'><thead><tr>"
        f"<th scope='col'>scenario</th><th scope='col'>trial</th>"
        f"<th scope='col'>{esc(c.baseline)} (baseline)</th><th scope='col'>{esc(c.arm)}</th>"
        f"</tr></thead><tbody>{rows}</tbody></table></div>{more}"
    )


def comparison_section(result: CompareResult, anchors: dict[Place, str]) -> str:
    """The comparison's section of the page: verdict lines, arms, differences."""
    verdicts = "".join(f"<li class='verdict'>{esc(c.line())}</li>" for c in result.comparisons)
    each = "".join(
        f"<section class='vs'><h3>{esc(c.arm)} vs {esc(c.baseline)}: {c.pairs} paired "
        f"episodes on {c.scenarios} scenarios"
        + (f" ({c.unpaired} unpaired left out)" if c.unpaired else "")
        + f"</h3>{_labels(c)}{_cells(c)}{_discordant(c, result, anchors)}</section>"
        for c in result.comparisons
    )
    return (
        "<section id='comparison'><h2>Comparison</h2>"
        f"<ul class='verdicts'>{verdicts}</ul>{_arms(result)}{_horizons(result)}{each}</section>"
    )


def compare_html(
    paths: Sequence[Path], result: CompareResult, budget: int = DETAIL_BUDGET
) -> HtmlReport:
    """The page of ``result``, the comparison of the run files ``paths``."""
    warnings: list[str] = []
    heads = _heads(paths, warnings)
    records = [rec for _, rec in heads.values()]
    steps = WorkflowNames().learn_heads(heads.values())
    report = aggregate(records, steps)
    warnings.extend(report.notes)
    warnings.extend(steps.warnings())
    rows = episode_rows(heads, report, steps)
    drill = details(heads, report, warnings, budget)
    lead = comparison_section(result, _anchors(heads, result))
    runs = [str(p) for p in paths]
    html = render_page(
        report,
        figures(records, report, steps),
        rows,
        drill,
        runs,
        warnings,
        lead=("agentproc compare", "comparison", lead),
    )
    return HtmlReport(html, len(records), len(drill), warnings)


def write_compare_html(
    paths: Sequence[Path], result: CompareResult, out: Path, budget: int = DETAIL_BUDGET
) -> HtmlReport:
    """Render the comparison page and write it to ``out`` whole (any file already there is
    left as it was if writing fails)."""
    return write_page(out, lambda: compare_html(paths, result, budget))
