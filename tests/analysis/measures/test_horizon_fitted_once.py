"""The procedure horizon's curve is fitted once per group of rows: the report's horizons at
every level, its HTML figure, a comparison's arms and paired differences all read one fit
(:class:`~agentproc.analysis.measures.horizon.HorizonFit`)."""

from __future__ import annotations

import json
import random
from collections import Counter
from typing import Any

import pytest
from html_runs import write_run

import agentproc.analysis.stats.horizon_fit as horizon_fit
from agentproc.agents.sim import run_sim_episode
from agentproc.analysis.compare.arms import compare_records
from agentproc.analysis.html import html_report
from agentproc.procedures import Cell, generate_procedure
from agentproc.runs import episode_record
from agentproc.workflow import scenario_of

LENGTHS = (5, 10, 20, 40, 80)


@pytest.fixture
def fits(monkeypatch: pytest.MonkeyPatch) -> Counter[tuple[tuple[int, int, int], ...]]:
    """How many times each group of rows is fitted (Firth's fit, the one costly step)."""
    calls: Counter[tuple[tuple[int, int, int], ...]] = Counter()
    real = horizon_fit._fit

    def counted(rows: Any) -> Any:
        calls[tuple(rows)] += 1
        return real(rows)

    monkeypatch.setattr(horizon_fit, "_fit", counted)
    return calls


def test_the_report_page_fits_each_measure_and_look_back_once(fits, tmp_path):
    recs = [
        json.loads(json.dumps(episode_record(run_sim_episode(scenario_of(proc), "sim:decay"))))
        for n in LENGTHS
        for lookback in (1, 3)
        for i in range(4)
        for proc in [generate_procedure(Cell(steps=n, lookback=lookback), 0, i)]
    ]
    html = html_report([write_run(tmp_path / "run.jsonl", recs)]).html
    assert html.count('class="series fit"') == 2  # both measures' figures are drawn
    # two measures overall and at each of two look-backs: six groups, each fitted once
    # (the figure reads the report's fits, both levels read one fit)
    assert sum(fits.values()) == 6


def rec(sid: str, variant: str, steps: int, faithful: bool) -> dict[str, Any]:
    return {
        "scenario_id": sid,
        "agent": "sim:x",
        "mode": "tools",
        "variant": variant,
        "trial": 0,
        "cell": f"n{steps}-L1",
        "params": {"steps": steps, "lookback": 1},
        "metrics": {"first_answer_correct": faithful},
        "verdict": "faithful" if faithful else "wrong",
        "labels": [],
        "calls": [],
        "output": f"{sid}/{faithful}",
        "stop_reason": "answer",
    }


def test_a_comparison_fits_each_arms_rows_once(fits):
    rng = random.Random(2)
    rates = {"base": 0.03, "careful": 0.015, "hasty": 0.06}
    result = compare_records(
        rec(f"n{n}-{i}", v, n, rng.random() < (1 - p) ** n)
        for v, p in rates.items()
        for n in LENGTHS
        for i in range(10)
    )
    assert all(c.horizon is not None and c.horizon.p is not None for c in result.comparisons)
    # each arm's rows (the baseline's paired with each arm are the same rows): one fit each
    assert len(fits) == 3 and set(fits.values()) == {1}
