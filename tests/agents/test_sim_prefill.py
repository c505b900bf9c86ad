"""Simulated agents under a pre-fill: they go on from the first step not pre-filled, their
truth still agrees with the monitor, and sim:selfcond errs more once its history holds an
error."""

from __future__ import annotations

import pytest

from agentproc.agents.sim import SIM_AGENTS, run_sim_episode
from agentproc.agents.sim.conditioning import self_conditioning
from agentproc.agents.sim.selfcheck import run_selfcheck
from agentproc.procedures import Cell, generate_procedure
from agentproc.workflow import scenario_of
from agentproc.workflow.variant import load_variant, variant_from_json

SCENARIO = scenario_of(generate_procedure(Cell(steps=10, lookback=2), 0, 3))
HALF = load_variant("prefill-wrong-50")


def test_the_oracle_goes_on_from_the_first_step_not_prefilled():
    ep = run_sim_episode(SCENARIO, "sim:oracle", variant=HALF)
    given = ep.metrics["given_steps"]
    assert given == 5
    assert [c.name for c in ep.calls] == [f"step_{k}" for k in range(1, 11)] + ["submit_answer"]
    assert ep.metrics["verdict"] == "faithful" and ep.labels == [] and ep.metrics["calls"] == 6


@pytest.mark.parametrize("agent", sorted(SIM_AGENTS))
def test_every_simulated_agent_runs_under_a_prefill_with_its_truth_agreeing(agent):
    for index in range(4):
        scenario = scenario_of(generate_procedure(Cell(steps=6, lookback=2), 1, index))
        ep = run_sim_episode(scenario, agent, variant=HALF, trial=index)
        assert {lab.key() for lab in ep.labels} == {lab.key() for lab in ep.injected or []}
        assert all(lab.call_index is None or lab.call_index >= 3 for lab in ep.labels)


def test_the_selfcheck_under_a_half_wrong_prefill_is_perfect():
    grid = {
        "steps": (2, 5, 10),
        "lookback": (1, 3),
        "range": ((0.0, 1.0), (10.0, 100.0)),
        "mode": ("decimal", "integer"),
    }
    result = run_selfcheck(count=2, grid=grid, variant=HALF)
    assert result.perfect, result.mismatches[:3]


def test_selfcond_slips_at_base_with_a_clean_history_and_base_plus_lift_after_an_error():
    always_after = self_conditioning(base=0.0, lift=1.0)
    clean = run_sim_episode(
        SCENARIO, "sim:selfcond", variant=load_variant("prefill-clean"), factory=always_after
    )
    assert clean.metrics["verdict"] == "faithful"
    wrong = run_sim_episode(SCENARIO, "sim:selfcond", variant=HALF, factory=always_after)
    assert wrong.metrics["first_divergence"]["step"] == 6  # the first step of its own
    own_slips = [lab for lab in wrong.labels if lab.cause == "other"]
    assert [lab.step for lab in own_slips] == [6, 7, 8, 9, 10]  # every one of its steps
    alone = run_sim_episode(SCENARIO, "sim:selfcond", factory=self_conditioning(1.0, 0.0))
    assert alone.metrics["first_divergence"]["step"] == 1


def test_selfcond_refuses_rates_outside_zero_to_one():
    with pytest.raises(ValueError, match="must lie in"):
        self_conditioning(0.5, 0.6)


def test_a_prefill_variant_under_a_calculator_is_refused():
    with pytest.raises(Exception, match="per-step tools"):
        variant_from_json({"tools": "calculator", "prefill": {"fraction": 0.5}})
