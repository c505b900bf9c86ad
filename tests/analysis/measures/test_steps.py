"""Per-step measures: each step's outcome read from a record's labels, accuracy by
position, and the measures of a whole agent, against cases worked out by hand."""

from __future__ import annotations

from typing import Any

import pytest

from agentproc.analysis import aggregate, report_json
from agentproc.analysis.measures.steps import episode_steps, per_step
from agentproc.analysis.stats.binomial import wilson


def lab(kind: str, call: int | None, step: int | None, **attrs: Any) -> dict[str, Any]:
    return {"kind": kind, "call_index": call, "step": step, **attrs}


def rec(steps: int, labels: list[dict[str, Any]], diverged: int | None = None, **extra: Any):
    div = None if diverged is None else {"call_index": 0, "step": diverged, "label": "x"}
    return {"labels": labels, "metrics": {"total_steps": steps, "first_divergence": div}, **extra}


# Four episodes worked through by hand (outcome per step: c correct, e error,
# p carried forward, s skipped):
EPISODES = [
    # a new mistake at step 2, carried forward at step 3: c e p
    rec(
        3,
        [
            lab("wrong_argument", 1, 2, cause="other"),
            lab("wrong_argument", 2, 3, cause="propagated"),
        ],
        2,
    ),
    # step 2 never ran: c s c
    rec(3, [lab("skipped_step", None, 2, live=True)], 2),
    # a wrong repeat of step 1 and an invalid call before step 2's clean run: c c c
    rec(
        3,
        [
            lab("repeated_step", 1, 1, self_correction=False),
            lab("wrong_argument", 1, 1, cause="other"),
            lab("invalid_arguments", 2, 2),
        ],
        2,
    ),
    # a carried and a new wrong argument on one call, then a step out of order: c c c e e
    rec(
        5,
        [
            lab("wrong_argument", 3, 4, cause="propagated"),
            lab("wrong_argument", 3, 4, cause="lookback_confusion"),
            lab("reordered", 4, 5, breaks_dependency=False),
        ],
        4,
    ),
]


def test_each_steps_outcome_is_read_from_the_labels_of_its_first_run():
    assert [episode_steps(r).outcomes for r in EPISODES] == [b"cep", b"csc", b"ccc", b"cccee"]


def test_a_refused_reordering_and_a_hallucinated_call_execute_nothing():
    r = rec(
        2,
        [
            lab("reordered", 0, 2, breaks_dependency=True, refused=True),
            lab("hallucinated_call", 1, None),
            lab("unreadable", 2, 1, argument="S3"),
        ],
    )
    assert episode_steps(r).outcomes == b"cc"


def test_the_time_is_the_divergence_step_else_censored_at_the_procedures_end():
    assert (episode_steps(EPISODES[0]).time, episode_steps(EPISODES[0]).left) == (2, True)
    faithful = episode_steps(rec(7, []))
    at_answer = episode_steps(rec(7, [lab("wrong_answer", 7, None)], None))
    assert (faithful.time, faithful.left) == (7, False)
    assert (at_answer.time, at_answer.left) == (7, False)
    answer_div = rec(7, [])
    answer_div["metrics"]["first_divergence"] = {
        "call_index": 7,
        "step": None,
        "label": "wrong_answer",
    }
    assert (episode_steps(answer_div).time, episode_steps(answer_div).left) == (7, False)


def test_after_a_pre_fill_positions_count_from_the_agents_own_first_step():
    # 10 steps given, 4 the agent's own (absolute steps 11 to 14): a new mistake at step
    # 13 is its own third step, carried into step 14; the first divergence likewise
    r = rec(
        4,
        [
            lab("wrong_argument", 12, 13, cause="other"),
            lab("wrong_argument", 13, 14, cause="propagated"),
        ],
        13,
    )
    r["metrics"]["given_steps"] = 10
    e = episode_steps(r)
    assert (e.outcomes, e.time, e.left) == (b"ccep", 3, True)
    skip = rec(4, [lab("skipped_step", None, 11, live=True)], 11)
    skip["metrics"]["given_steps"] = 10
    assert (episode_steps(skip).outcomes, episode_steps(skip).time) == (b"sccc", 1)


def test_accuracy_by_position_divides_by_the_executed_steps_there():
    ps = per_step(EPISODES)
    assert ps is not None
    rows = [(k, r.n, r.k, carried) for k, r, carried in ps.accuracy]
    # position 2: three executed (one skipped), one in error; position 3: four, the
    # carried one counted correct and apart; 4 and 5: one procedure, in error
    assert rows == [(1, 4, 4, 0), (2, 3, 2, 0), (3, 4, 4, 1), (4, 1, 0, 0), (5, 1, 0, 0)]
    assert ps.accuracy[1][1].ci == pytest.approx(wilson(2, 3))


def test_survival_and_hazard_of_a_small_run_by_hand():
    ps = per_step(EPISODES)
    assert ps is not None
    # times: left at 2, 2, 2, and at 4 (5-step procedure)
    points = [(p.step, p.at_risk, p.events, p.censored) for p in ps.survival.points]
    assert points == [(1, 4, 0, 0), (2, 4, 3, 0), (3, 1, 0, 0), (4, 1, 1, 0)]
    assert [p.survival for p in ps.survival.points] == pytest.approx([1, 0.25, 0.25, 0])
    assert [(t, r.k, r.n) for t, r in ps.hazard] == [(1, 0, 4), (2, 3, 4), (3, 0, 1), (4, 1, 1)]


def test_trials_of_one_scenario_are_one_cluster():
    a = dict(EPISODES[0], scenario_id="s1")
    b = dict(EPISODES[1], scenario_id="s1")
    c = dict(EPISODES[2], scenario_id="s2")
    ps = per_step([a, b, c])
    assert ps is not None and ps.survival.variance == "cluster-robust"
    pos1 = ps.accuracy[0][1]
    assert (pos1.k, pos1.n, pos1.clusters) == (3, 3, 2)


def test_no_scored_episode_has_no_measures():
    assert per_step([]) is None


def _record(**over: Any) -> dict[str, Any]:
    base = rec(3, [lab("wrong_argument", 1, 2, cause="other")], 2)
    cell = "n3-L1-r1_10-mixed-decimal"
    base.update(
        agent="model:a",
        cell=cell,
        params={"cell": cell, "steps": 3, "lookback": 1},
        verdict="wrong",
    )
    base["metrics"].update(
        verdict="wrong",
        faithful=False,
        first_answer_correct=False,
        final_answer_correct=False,
        progress_rate=0.5,
        longest_correct_prefix=1,
    )
    base.update(over)
    return base


def test_report_json_holds_per_step_and_self_conditioning_per_agent():
    data = report_json(
        aggregate([_record(), _record(), _record(stop_reason="error", error={"kind": "endpoint"})])
    )
    agent = data["agents"]["model:a"]
    per = agent["per_step"]
    assert list(per) == [
        "accuracy_by_position",
        "survival",
        "survival_variance",
        "median_survival_step",
        "hazard",
    ]
    assert per["accuracy_by_position"][1] == {
        "step": 2,
        "executed": 2,
        "correct": 0,
        "value": 0.0,
        "ci": [0.0, round(wilson(0, 2)[1], 4)],
        "carried": 0,
    }
    assert per["survival"][1] == {
        "step": 2,
        "at_risk": 2,
        "events": 2,
        "censored": 0,
        "survival": 0.0,
        "ci": None,
    }
    assert per["median_survival_step"]["step"] == 2
    assert per["hazard"][0]["events"] == 0 and per["hazard"][1]["events"] == 2
    bins = agent["self_conditioning"]["observed"]["bins"]
    assert [(b["from"], b["to"]) for b in bins] == [(1, 1), (2, 3)]
    assert bins[1]["clean_history"]["steps"] == 2 and bins[1]["clean_history"]["errors"] == 2
    assert bins[1]["after_error"]["steps"] == 2 and bins[1]["after_error"]["errors"] == 0


def test_an_agent_with_only_errored_episodes_has_null_measures():
    data = report_json(aggregate([_record(stop_reason="error", error={"kind": "endpoint"})]))
    agent = data["agents"]["model:a"]
    assert agent["per_step"] is None and agent["self_conditioning"] is None
