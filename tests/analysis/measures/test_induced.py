"""The agent's own error rate after a pre-fill, and the curve over the wrong share,
against hand-computed cases."""

from __future__ import annotations

import math

import pytest

from agentproc.analysis.measures.induced import own_error_rate, own_steps, share_curve
from agentproc.analysis.stats.binomial import Rate, wilson
from agentproc.analysis.stats.clustered import difference_interval


def rec(sid: str, own: int, prefix: int, step: int | None = None, **extra) -> dict:
    div = None if step is None else {"call_index": 9, "step": step, "label": "wrong_argument"}
    metrics = {"total_steps": own, "longest_correct_prefix": prefix, "first_divergence": div}
    return {"scenario_id": sid, "metrics": metrics, **extra}


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        (rec("a", 5, 5), (0, 5)),  # faithful own part: every own step, no error
        (rec("a", 5, 2, step=8), (1, 3)),  # departed at its third own step
        (rec("a", 5, 0, step=6), (1, 1)),  # at its first
        (rec("a", 5, 5, step=None), (0, 5)),
        (
            {
                **rec("a", 5, 5),
                "metrics": {
                    **rec("a", 5, 5)["metrics"],
                    "first_divergence": {"call_index": 9, "step": None, "label": "wrong_answer"},
                },
            },
            (0, 5),
        ),  # a departure at the answer, after every step, is no step error
        (rec("a", 4, 5), (0, 4)),  # the prefix counts the finish call: capped at the steps
    ],
)
def test_own_steps_count_up_to_the_first_own_departure(record, expected):
    assert own_steps(record) == expected


def test_the_rate_is_departures_over_own_steps_attempted_with_scenarios_as_clusters():
    recs = [
        rec("a", 10, 10),
        rec("a", 10, 3, step=9),
        rec("b", 10, 0, step=6),
        rec("b", 10, 10),
        rec("c", 10, 4, step=10),
        rec("c", 10, 10, error={"kind": "endpoint"}),
    ]
    rate = own_error_rate(recs)
    assert (rate.k, rate.n) == (3, 10 + 4 + 1 + 10 + 5)  # the errored episode counts nowhere
    assert rate.clusters == 3 and rate.deff >= 1.0
    assert rate.value == pytest.approx(3 / 30)


def test_one_scenario_gives_the_plain_wilson_interval():
    rate = own_error_rate([rec("a", 10, 3, step=9), rec("a", 10, 10)])
    assert rate.ci == wilson(1, 14)


def test_newcombes_interval_of_independent_rates_from_the_two_wilson_intervals():
    a, b = Rate(10, 100), Rate(30, 100)
    (la, ua), (lb, ub) = wilson(10, 100), wilson(30, 100)
    low, high = difference_interval(b, a)
    assert low == pytest.approx(0.2 - math.sqrt((0.3 - lb) ** 2 + (ua - 0.1) ** 2))
    assert high == pytest.approx(0.2 + math.sqrt((ub - 0.3) ** 2 + (0.1 - la) ** 2))
    assert low > 0


def test_the_curve_orders_by_share_and_measures_each_from_the_clean_prefill():
    clean = [rec(f"s{i}", 10, 10) for i in range(20)] + [rec("x", 10, 0, step=6)]
    wrong = [rec(f"s{i}", 10, 1, step=7) for i in range(20)] + [rec("x", 10, 10)]
    curve = share_curve("sim:x", [("w", 1.0, wrong), ("c", 0.0, clean)])
    assert [p.variant for p in curve.points] == ["c", "w"] and curve.baseline == "c"
    assert curve.points[0].lift is None
    diff, (lo, _) = curve.points[1].lift
    assert diff == pytest.approx(20 / 50 - 1 / 201) and lo > 0
    data = curve.to_json()
    assert data["measure"] == "own_error_rate" and data["baseline"] == "c"
    assert data["curve"][1]["difference"]["verdict"] == "higher"
    assert data["curve"][1]["own_error_rate"]["k"] == 20


def test_without_a_clean_prefill_no_difference_is_claimed():
    curve = share_curve("a", [("w", 0.5, [rec("a", 5, 1, step=2)])])
    assert curve.baseline is None and curve.points[0].lift is None
