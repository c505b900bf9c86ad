"""Simulated agents: the oracle is faithful, injectors inject, decay decays."""

from __future__ import annotations

import pytest

from agentproc import Cell, ConfigError, generate_procedure, run_sim_episode, scenario_of
from agentproc.agents.sim import sim_agent


def scenarios(steps: int, n: int = 30, lookback: int = 3):
    return [
        scenario_of(generate_procedure(Cell(steps=steps, lookback=lookback), 0, i))
        for i in range(n)
    ]


def test_oracle_is_faithful_on_every_scenario():
    for s in scenarios(25):
        ep = run_sim_episode(s, "sim:oracle")
        assert ep.metrics["verdict"] == "faithful" and ep.labels == [] and ep.injected == []


@pytest.mark.parametrize(
    "kind", ["skipped_step", "reordered", "wrong_argument", "premature_finish"]
)
def test_injector_truth_contains_its_own_label(kind: str):
    for s in scenarios(10, 10):
        ep = run_sim_episode(s, f"sim:{kind}")
        assert kind in {lab.kind.value for lab in ep.injected}


def test_same_seed_same_episode_and_other_seed_other_fault_place():
    s = scenarios(25, 1)[0]
    a = run_sim_episode(s, "sim:wrong_argument", seed=1)
    b = run_sim_episode(s, "sim:wrong_argument", seed=1)
    assert [c.arguments for c in a.calls] == [c.arguments for c in b.calls]
    places = {
        next(lab.call_index for lab in run_sim_episode(s, "sim:wrong_argument", seed=k).injected)
        for k in range(10)
    }
    assert len(places) > 1


def test_decay_accuracy_falls_with_length():
    short = [
        run_sim_episode(s, "sim:decay").metrics["first_answer_correct"] for s in scenarios(5, 150)
    ]
    long = [
        run_sim_episode(s, "sim:decay").metrics["first_answer_correct"] for s in scenarios(95, 150)
    ]
    assert sum(short) / len(short) > sum(long) / len(long) + 0.2


def test_decay_errs_more_with_far_lookback():
    def errors(lookback: int) -> int:
        return sum(
            len(run_sim_episode(s, "sim:decay").injected) > 0 for s in scenarios(50, 100, lookback)
        )

    assert errors(7) > errors(1)


def test_unknown_agent_lists_the_valid_ones():
    with pytest.raises(ConfigError, match=r"unknown agent 'sim:nope'.*sim:oracle"):
        sim_agent("sim:nope")


def test_episode_messages_are_openai_chat_format():
    ep = run_sim_episode(scenarios(3, 1)[0], "sim:oracle")
    roles = [m["role"] for m in ep.messages]
    assert roles[:2] == ["system", "user"] and roles[-1] == "assistant"
    call = ep.messages[2]["tool_calls"][0]
    assert call["type"] == "function" and call["function"]["name"] == "step_1"
    assert ep.messages[3] == {
        "role": "tool",
        "tool_call_id": call["id"],
        "content": ep.calls[0].result,
    }
