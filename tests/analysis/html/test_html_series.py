"""The HTML report draws what the suite varies: figures by length only over several
lengths, by look-back only over several look-backs, and the cell table's N, L and dist
columns likewise."""

from __future__ import annotations

import json
import re
from pathlib import Path

from html_runs import write_run

from agentproc.agents.sim import run_sim_episode
from agentproc.analysis.html import html_report
from agentproc.procedures import Cell, generate_procedure
from agentproc.runs import episode_record
from agentproc.workflow import scenario_of


def records(cells: list[tuple[int, int]], agents: tuple[str, ...] = ("sim:skipped_step",)):
    out = []
    for steps, lookback in cells:
        for i in range(3):
            scenario = scenario_of(generate_procedure(Cell(steps=steps, lookback=lookback), 0, i))
            for agent in agents:
                out.append(json.loads(json.dumps(episode_record(run_sim_episode(scenario, agent)))))
    return out


def headings(html: str) -> list[str]:
    table = re.search(r"<table id='cell-table'.*?</thead>", html, re.S)
    assert table is not None
    return re.findall(r"<button type='button'>(.*?)</button>", table.group(0))


def test_one_length_draws_nothing_by_length_but_keeps_the_look_backs(tmp_path: Path):
    html = html_report([write_run(tmp_path / "r.jsonl", records([(5, 1), (5, 3)]))]).html
    for gone in ("Faithful accuracy by length", "Execution by length", "Label mix by length"):
        assert gone not in html
    assert "First-answer accuracy by look-back" in html
    assert "Where the first divergence happens" in html  # its rows are look-backs
    assert headings(html)[:5] == ["series", "cell", "L", "dist", "n"]


def test_one_cell_draws_neither_and_its_table_has_no_knob(tmp_path: Path):
    agents = ("sim:oracle", "sim:skipped_step")
    html = html_report([write_run(tmp_path / "r.jsonl", records([(5, 1)], agents))]).html
    assert " by length" not in html and " by look-back" not in html
    assert "Where the first divergence happens" not in html
    assert "<section id='compare'>" not in html and "#compare" not in html  # nothing by length
    assert headings(html)[:3] == ["series", "cell", "n"]
    assert "Accuracy of a step by its position" in html  # the per-step figures stay


def test_two_lengths_and_look_backs_draw_every_figure_as_before(tmp_path: Path):
    html = html_report([write_run(tmp_path / "r.jsonl", records([(3, 1), (6, 3)]))]).html
    for title in ("Faithful accuracy by length", "Faithful accuracy by look-back",
                  "Label mix by length", "Where the first divergence happens"):  # fmt: skip
        assert title in html
    assert headings(html)[:5] == ["series", "cell", "N", "L", "dist"]
