"""The procedure horizon in ``compare``: each arm's, the paired difference from the
baseline in text and JSON, Holm across arms, and never a difference out of range."""

from __future__ import annotations

import io
import itertools
import random
from typing import Any

import pytest
from rich.cells import cell_len
from rich.console import Console

from agentproc.analysis.compare.arms import compare_records
from agentproc.analysis.compare.text import render_compare
from agentproc.analysis.measures.horizon import horizon

LENGTHS = (5, 10, 20, 40, 80)


def rec(sid: str, variant: str, steps: int, faithful: bool, trial: int = 0) -> dict[str, Any]:
    return {
        "scenario_id": sid,
        "agent": "sim:x",
        "mode": "tools",
        "variant": variant,
        "trial": trial,
        "cell": f"n{steps}-L1",
        "params": {"steps": steps, "lookback": 1},
        "metrics": {"first_answer_correct": faithful},
        "verdict": "faithful" if faithful else "wrong",
        "labels": [],
        "calls": [],
        "output": f"{sid}/{trial}/{faithful}",  # trials that differ: not deterministic
        "stop_reason": "answer",
    }


def records(rates: dict[str, float], per: int = 12, trials: int = 2) -> list[dict[str, Any]]:
    """Each variant leaving the procedure with its chance a step, over the same scenarios."""
    rng = random.Random(5)
    return [
        rec(f"n{n}-{i}", v, n, rng.random() < (1 - p) ** n, t)
        for v, p in rates.items()
        for n in LENGTHS
        for i in range(per)
        for t in range(trials)
    ]


def test_each_arm_has_its_horizon_and_each_comparison_the_paired_difference():
    result = compare_records(records({"default": 0.04, "careful": 0.015}))
    arms = result.arms
    assert arms["default"].horizon is not None and arms["careful"].horizon is not None
    assert arms["default"].horizon.steps < arms["careful"].horizon.steps
    (c,) = result.comparisons
    d = c.horizon
    assert d is not None and d.verdict == "longer" and d.ci is not None and d.ci[0] > 1
    data = result.to_json()
    assert data["arms"][0]["horizon"]["text"] == arms["default"].horizon.text()
    h = data["comparisons"][0]["horizon"]
    assert h["verdict"] == "longer" and h["significant"] is True and h["why"] is None
    assert h["ratio_ci"][0] > 1 and h["p"] < 0.05 and h["level"] == 0.5
    assert h["diff_steps"] == round(d.diff, 4)


def test_the_arm_horizon_is_the_one_report_fits_on_its_scenarios():
    recs = records({"default": 0.03, "other": 0.03})
    result = compare_records(recs)
    rows: dict[str, list[int]] = {}
    for r in recs:
        if r["variant"] == "default":
            row = rows.setdefault(r["scenario_id"], [r["params"]["steps"], 0, 0])
            row[1] += r["verdict"] == "faithful"
            row[2] += 1
    assert result.arms["default"].horizon == horizon([tuple(r) for r in rows.values()])


def test_with_several_arms_the_horizon_tests_are_holm_corrected_and_intervals_agree():
    result = compare_records(records({"default": 0.04, "a": 0.015, "b": 0.04}))
    diffs = {c.arm: c.horizon for c in result.comparisons}
    for d in diffs.values():
        assert d is not None and d.p_holm is not None and d.p_holm >= d.p
        assert d.level >= 0.95  # the level Holm tested it at: 97.5% or 95%
        assert (d.ci[0] > 1 or d.ci[1] < 1) == (d.p_holm < 0.05) == d.significant
    assert diffs["a"].verdict == "longer"


def test_a_horizon_out_of_range_says_so_instead_of_a_difference():
    recs = records({"default": 0.03}) + [
        rec(f"n{n}-{i}", "perfect", n, True, t) for n in LENGTHS for i in range(12) for t in (0, 1)
    ]
    result = compare_records(recs)
    (c,) = result.comparisons
    assert c.horizon is not None and c.horizon.verdict == "not compared"
    h = result.to_json()["comparisons"][0]["horizon"]
    assert h["diff_steps"] is None and h["ratio"] is None
    assert h["text"] == "cannot be compared: the arm's horizon is beyond 80"


def test_a_significant_verdict_never_sits_beside_no_difference_in_horizons():
    # 1 of 20 faithful (5%) against 20 of 20 at 5 and 10 steps
    recs = [
        rec(f"n{n}-{i}", v, n, v == "careful" or (n == 5 and i == 0))
        for v in ("default", "careful")
        for n in (5, 10)
        for i in range(10)
    ]
    result = compare_records(recs)
    (c,) = result.comparisons
    assert c.line().startswith("careful: better than default: faithful accuracy 5.0% -> 100.0%")
    text = " ".join(text_of(result, 120).split())
    assert "no difference" not in text
    assert (
        "careful: 50% faithful horizon against default below 5; upper bound 5 -> beyond 10; "
        "lower bound 10: cannot be compared: the baseline's horizon is below 5 and the arm's "
        "horizon is beyond 10"
    ) in text
    h = result.to_json()["comparisons"][0]["horizon"]
    assert h["verdict"] == "not compared" and h["why"].startswith("the baseline's horizon is below")


def text_of(result: Any, width: int) -> str:
    out = Console(file=io.StringIO(), width=width, color_system=None)
    render_compare(result, out)
    return out.file.getvalue()  # type: ignore[attr-defined]


def test_the_text_has_the_horizon_table_and_a_line_per_arm_before_the_verdicts():
    result = compare_records(records({"default": 0.04, "careful": 0.015}))
    d = result.comparisons[0].horizon
    text = text_of(result, 120)
    table = text.index("procedure horizon (where faithful accuracy falls to 50%")
    line = text.index("careful: 50% faithful horizon against default ")
    assert table < line < text.index("careful: better than default")
    assert f"x{d.ratio:.3g} [{d.ci[0]:.3g}, {d.ci[1]:.3g}]" in text
    assert " ".join(text[line:].split()).startswith(
        f"careful: 50% faithful horizon against default {d.baseline.text(short=True)} -> "
        f"{d.arm.text(short=True)}: {d.text()}, longer"
    )


def test_one_length_gives_no_horizon_table():
    recs = [rec(f"s{i}", v, 5, i % 2 == 0) for v in ("default", "b") for i in range(10)]
    assert "procedure horizon" not in text_of(compare_records(recs), 120)


@pytest.mark.parametrize("width", [80, 120])
def test_at_80_and_120_columns_each_figure_keeps_its_interval_on_its_line(width):
    result = compare_records(records({"default": 0.04, "careful": 0.015, "rushed": 0.05}))
    text = text_of(result, width)
    lines = text.splitlines()
    assert all(cell_len(line) <= width for line in lines)
    for c in result.comparisons:
        d = c.horizon
        assert d is not None and d.ci is not None
        ratio = f"x{d.ratio:.3g} [{d.ci[0]:.3g}, {d.ci[1]:.3g}]"
        assert any(ratio in line for line in lines), ratio
        for h in (d.baseline, d.arm):
            assert any(h.text(short=True) in line for line in lines)
    for before, after in itertools.pairwise(lines):
        assert not (before[-1:].isdigit() and after.lstrip().startswith("[")), (before, after)
