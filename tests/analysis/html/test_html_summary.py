"""The HTML report's first screen: agents x headline rates with the text report's
intervals, verdict counts and the worst first divergence, linked to an episode."""

from __future__ import annotations

import re
from pathlib import Path

from helpers import step, submit
from html_runs import scripted_record, sim_records, write_run

from agentproc.analysis import aggregate
from agentproc.analysis.html import html_report
from agentproc.analysis.html.episodes import anchor
from agentproc.analysis.html.figures import Example
from agentproc.analysis.html.summary import worst
from agentproc.analysis.stats.binomial import wilson
from agentproc.runs.runfile import last_heads

AGENTS = ("sim:oracle", "sim:wrong_argument", "sim:skipped_step")


def summary_rows(html: str) -> dict[str, list[str]]:
    """Agent -> the text of each cell of its row (tags removed)."""
    table = re.search(r"<table id='summary-table'.*?<tbody>(.*?)</tbody>", html, re.S)
    assert table is not None
    out = {}
    for row in re.findall(r"<tr>(.*?)</tr>", table.group(1), re.S):
        cells = [re.sub(r"<[^>]+>", " ", c) for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row)]
        cells = [" ".join(c.split()) for c in cells]
        out[cells[0]] = cells[1:]
    return out


def cell(value: float, ci: tuple[float, float]) -> str:
    return f"{100 * value:.1f}% [{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]"


def test_each_agent_has_its_headline_rates_with_the_text_reports_intervals(tmp_path: Path):
    records = sim_records(AGENTS, per_cell=2)
    again = [{**r, "trial": 1} for r in records]  # two trials a scenario: a design effect
    run = write_run(tmp_path / "run.jsonl", [*records, *again])
    rows = summary_rows(html_report([run]).html)
    report = aggregate(rec for _, rec in last_heads([run], []).values())
    assert list(rows) == list(report.agents)
    for name, a in report.agents.items():
        s = a.overall
        n, first, faithful, gap, left, errored = rows[name][:6]
        assert n == str(s.n) == str(2 * 2 * 2 * 2)  # lengths, look-backs, procedures, trials
        assert first == cell(*s.rate("accuracy"))
        assert faithful == cell(*s.rate("faithful_accuracy"))
        assert gap == cell(*s.rate("unfaithful_correct_rate"))
        assert left == cell(s.diverged / s.n, s.diverged_ci)
        assert errored == cell(0.0, wilson(0, s.n))
        assert rows[name][6:10] == [str(s.verdicts[v]) for v in s.verdicts]
    s = report.agents["sim:wrong_argument"].overall
    # the trials' interval, not n's
    assert s.rate("faithful_accuracy")[1] != wilson(s.faithful, s.n)


def test_the_worst_first_divergence_is_named_and_links_the_first_episode_of_it(tmp_path: Path):
    late = scripted_record([step(1), step(2), step(4), submit()], "a")  # skips step 3
    early = scripted_record([step(1), step(3), step(4), submit()], "a")  # skips step 2
    early["scenario_id"] = "second"
    other = {**early, "scenario_id": "third"}
    run = write_run(tmp_path / "run.jsonl", [late, early, other])
    html = html_report([run]).html
    row = summary_rows(html)["a"]
    assert row[-1] == "skipped_step at step 2 2 of 3 episodes · see one"
    key = next(k for k in last_heads([run], []) if k[0] == "second")
    assert f"<a href='#{anchor(key)}' class='example'>" in html


def test_ties_go_to_the_earlier_step_and_the_answer_comes_last():
    found = worst({("wrong_answer", None): Example(3, "x"), ("skipped_step", 4): Example(3, "y")})
    assert found is not None and found[:2] == ("skipped_step", 4)
    assert worst({}) is None


def test_an_agent_that_never_left_the_procedure_says_none(tmp_path: Path):
    run = write_run(tmp_path / "run.jsonl", sim_records(("sim:oracle",), per_cell=1))
    assert summary_rows(html_report([run]).html)["sim:oracle"][-1] == "none"


def test_the_summary_comes_first_then_the_runs_side_by_side_then_each_agent(tmp_path: Path):
    run = write_run(tmp_path / "run.jsonl", sim_records(AGENTS, per_cell=1))
    html = html_report([run]).html
    at = [html.index(f"<section id='{s}'") for s in ("summary", "compare", "figures", "cells")]
    assert at == sorted(at)
    for i, name in enumerate(sorted(AGENTS)):
        assert f"<a href='#series-{i}'>{name}</a>" in html
        assert f"<section class='series' id='series-{i}' aria-label='{name}'>" in html
