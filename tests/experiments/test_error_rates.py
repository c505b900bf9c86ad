"""The comparison's error rates on a simulated agent: seeded repetitions of a comparison
with no difference reject about 5% of the time, and a known difference is found."""

from __future__ import annotations

import random

from agentproc.agents.sim import run_sim_episode
from agentproc.analysis.compare.arms import compare_records
from agentproc.analysis.measures.trials import outcome_of
from agentproc.analysis.stats.exact import mcnemar, verdict
from agentproc.procedures import Cell, generate_procedure
from agentproc.runs import episode_record
from agentproc.workflow import compile_procedure
from agentproc.workflow.variant import load_variant

SCENARIOS = [
    compile_procedure(generate_procedure(Cell(steps=20, lookback=4), 0, i)) for i in range(60)
]
SEEDS = 10


DEFAULT = [
    [episode_record(run_sim_episode(s, "sim:decay", seed=seed)) for seed in range(SEEDS)]
    for s in SCENARIOS
]
"""Per scenario, sim:decay's episode under each of SEEDS run seeds."""


def test_a_comparison_of_an_agent_with_itself_rejects_about_five_percent_of_the_time():
    outcomes = [[outcome_of(r) for r in row] for row in DEFAULT]
    unfaithful = sum(not o.faithful for row in outcomes for o in row) / (60 * SEEDS)
    assert 0.15 < unfaithful < 0.75  # enough discordance for the test to have a chance
    rng = random.Random(0)
    reps = 600
    rejected = 0
    for _ in range(reps):
        lost = gained = 0
        for row in outcomes:
            a, b = rng.sample(row, 2)  # two independent runs of the same scenario
            lost += a.faithful and not b.faithful
            gained += b.faithful and not a.faithful
        rejected += verdict(gained - lost, mcnemar(lost, gained)) != "no detectable difference"
    assert 0.02 <= rejected / reps <= 0.08


def test_the_comparison_finds_the_known_prose_effect_and_not_a_seed_change():
    prose = load_variant("prose")
    base = [dict(r, variant="default") for r in (row[0] for row in DEFAULT)]
    reseeded = [dict(r, variant="reseeded") for r in (row[1] for row in DEFAULT)]
    skipping = [
        episode_record(run_sim_episode(s, "sim:decay", seed=0, variant=prose)) for s in SCENARIOS
    ]
    result = compare_records([*base, *reseeded, *skipping])
    verdicts = {c.arm: c.verdict for c in result.comparisons}
    assert verdicts == {"reseeded": "no detectable difference", "prose": "worse"}
    (prose_vs_default,) = [c for c in result.comparisons if c.arm == "prose"]
    skipped = next(d for d in prose_vs_default.labels if d.measure == "skipped_step")
    assert skipped.significant and skipped.diff > 0
