"""The HTML report's procedure horizon figure: the binned rates, the fitted band that
crosses each level where the horizon's interval ends, and the marks (or the words when
a horizon is out of the tested lengths)."""

from __future__ import annotations

import itertools
import json
import math
import random
import re
from typing import Any

import pytest
from html_runs import write_run

from agentproc.agents.sim import run_sim_episode
from agentproc.analysis import aggregate
from agentproc.analysis.html import html_report
from agentproc.analysis.html.horizon_figure import horizon_figures
from agentproc.analysis.html.svg import esc
from agentproc.analysis.measures.horizon import horizon, horizon_fit
from agentproc.analysis.measures.report import AgentReport
from agentproc.procedures import Cell, generate_procedure
from agentproc.runs import episode_record
from agentproc.workflow import scenario_of

LENGTHS = (5, 10, 20, 40, 80)


def rows_of(p: float, per: int = 10, trials: int = 2, seed: int = 3) -> list[tuple[int, int, int]]:
    rng = random.Random(seed)
    return [
        (n, sum(rng.random() < (1 - p) ** n for _ in range(trials)), trials)
        for n in LENGTHS
        for _ in range(per)
    ]


@pytest.fixture(scope="module")
def records() -> dict[str, list[dict[str, Any]]]:
    """Episodes over 5 to 80 steps of sim:decay (its horizon within them), sim:oracle
    (beyond them) and sim:skipped_step (below them)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for agent in ("sim:decay", "sim:oracle", "sim:skipped_step"):
        out[agent] = [
            json.loads(json.dumps(episode_record(run_sim_episode(scenario_of(proc), agent))))
            for n in LENGTHS
            for i in range(8)
            for proc in [generate_procedure(Cell(steps=n, lookback=1), 0, i)]
        ]
    return out


def agent_of(recs: list[dict[str, Any]]) -> AgentReport:
    (a,) = aggregate(recs).agents.values()
    return a


def test_each_length_is_a_bin_with_its_scenarios_rate_and_interval():
    got = horizon_fit([(5, 2, 2), (5, 0, 2), (10, 1, 2), (10, 1, 2)]).observed()
    assert [(2**x, r.k, r.n, r.clusters) for x, r in got] == [
        (pytest.approx(5), 2, 4, 2),
        (pytest.approx(10), 2, 4, 2),
    ]
    assert got[0][1].deff > 1  # trials of one scenario agree: the interval widens


def test_many_lengths_fall_in_eight_bins_of_log2():
    rows = [(n, 1, 1) for n in range(4, 129)]
    got = horizon_fit(rows).observed()
    assert len(got) == 8 and sum(r.n for _, r in got) == len(rows)
    assert [x for x, _ in got] == sorted(x for x, _ in got)


@pytest.mark.parametrize(("level", "p", "per"), [(0.5, 0.02, 10), (0.8, 0.01, 20)])
def test_the_band_crosses_the_level_where_the_horizons_interval_ends(level, p, per):
    rows = rows_of(p, per)
    h = horizon(rows, level)
    assert h.low is not None and h.high is not None and h.steps is not None
    curve = horizon_fit(rows).band(32)
    assert curve[0][0] == math.log2(5) and curve[-1][0] == pytest.approx(math.log2(80))

    def crossing(i: int) -> float:  # where column i (1 fit, 2 lower, 3 upper) falls to level
        for a, b in itertools.pairwise(curve):
            if a[i] >= level > b[i]:
                return 2 ** (a[0] + (b[0] - a[0]) * (a[i] - level) / (a[i] - b[i]))
        raise AssertionError("no crossing")

    assert crossing(1) == pytest.approx(h.steps, rel=0.03)
    assert crossing(2) == pytest.approx(h.low, rel=0.03)  # the lower band falls first
    assert crossing(3) == pytest.approx(h.high, rel=0.03)
    assert all(lo <= y <= hi for _, y, lo, hi in curve)


def test_a_figure_per_measure_with_the_curve_band_points_and_both_horizons(records):
    a = agent_of(records["sim:decay"])
    assert a.horizon is not None and a.horizon.of["faithful"][0].steps is not None
    figs = horizon_figures(a)
    assert len(figs) == 2
    faithful, answer = figs
    assert "Procedure horizon: faithful accuracy" in faithful
    assert "Procedure horizon: first-answer accuracy" in answer
    assert faithful.count('class="band"') == 1 and faithful.count('class="series fit"') == 1
    assert faithful.count('<g class="point">') == len(LENGTHS)
    assert faithful.count('class="horizon-mark"') == 2
    for h in a.horizon.of["faithful"]:
        assert f"{100 * h.level:.0f}% horizon: {h.text()}" in faithful
    assert faithful.count('class="horizon-at"') >= 1


def test_a_horizon_out_of_range_is_written_never_drawn_past_the_lengths(records):
    a = agent_of(records["sim:oracle"])  # every episode faithful
    faithful = horizon_figures(a)[0]
    assert "50%: beyond 80 (the longest tested)" in faithful
    assert 'class="horizon-at"' not in faithful and 'class="horizon-ci"' not in faithful
    xs = [float(x) for x in re.findall(r'points="([\d.]+),', faithful)]
    ticks = [float(x) for x in re.findall(r'<text x="([\d.]+)"[^>]*>80</text>', faithful)]
    assert xs and ticks and max(xs) <= ticks[0] + 0.1  # the curve ends at the longest length
    hopeless = horizon_figures(agent_of(records["sim:skipped_step"]))[0]
    assert "50%: below 5 (the shortest tested)" in hopeless


def test_one_length_has_no_figure(records):
    five = [r for r in records["sim:decay"] if r["params"]["steps"] == 5]
    assert horizon_figures(agent_of(five)) == []


def test_the_report_page_has_each_agents_horizon_figures(records, tmp_path):
    recs = records["sim:decay"] + records["sim:oracle"]
    html = html_report([write_run(tmp_path / "run.jsonl", recs)]).html
    assert html.count('class="title">Procedure horizon: faithful accuracy</text>') == 2
    assert html.count('class="title">Procedure horizon: first-answer accuracy</text>') == 2
    section = html.split("aria-label='sim:decay'")[1].split("</section>")[0]
    h = agent_of(records["sim:decay"]).horizon
    assert h is not None
    assert f"50% horizon: {esc(h.of['faithful'][0].text())}" in section


def test_success_rising_with_length_is_written_as_no_horizon_never_marked(records):
    rising = []  # sim:oracle, its episodes of 5 and 10 steps made wrong: success rises
    for r in records["sim:oracle"]:
        r = json.loads(json.dumps(r))
        if r["params"]["steps"] <= 10:
            r["verdict"] = "wrong"
        rising.append(r)
    a = agent_of(rising)
    assert a.horizon is not None
    h = a.horizon.of["faithful"][0]
    assert h.text() == "success does not fall with length over 5 to 80 steps"
    faithful = horizon_figures(a)[0]
    assert "50%: no horizon (success not shown to fall)" in faithful
    assert f"50% horizon: {esc(h.text())}" in faithful
    assert 'class="horizon-at"' not in faithful and 'class="horizon-ci"' not in faithful


def test_a_horizon_beyond_the_longest_length_draws_its_lower_bound_along_the_level(records):
    nearly = []  # sim:oracle with one episode of 80 steps made wrong
    for r in records["sim:oracle"]:
        r = json.loads(json.dumps(r))
        if r["params"]["steps"] == 80 and not any(x["params"]["steps"] == 80 for x in nearly):
            r["verdict"] = "wrong"
        nearly.append(r)
    a = agent_of(nearly)
    assert a.horizon is not None
    eighty = a.horizon.of["faithful"][1]
    assert eighty.beyond is True and eighty.low is not None and 5 < eighty.low < 80
    assert eighty.text() == f"beyond 80 (the longest tested); lower bound {eighty.low:.3g}"
    faithful = horizon_figures(a)[0]
    assert faithful.count('class="horizon-ci"') == 1  # the 80% one; the 50% one's is 80
    assert 'class="horizon-at"' not in faithful
