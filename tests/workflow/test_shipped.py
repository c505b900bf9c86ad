"""Every workflow shipped in ``scenarios/workflows/``: drawn cleanly, of 8 to 30 steps with
parallel branches and a dead step, no live step's mistake cancelling out before the answer,
and run through ``agentproc run`` by the simulated agents: the oracle faithful every time,
each fault-injecting agent labelled exactly as it injected."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from helpers import cli, records

from agentproc import Label, load_scenarios
from agentproc.agents.sim import INJECTORS, run_sim_episode
from agentproc.declared import formula_values
from agentproc.declared.file import read_workflow
from agentproc.workflow.declared.suite import workflow_scenarios
from tests.helpers import shipped_workflows

SHIPPED = shipped_workflows()
IDS = [p.stem for p in SHIPPED]
LINEAR = shipped_workflows(branched=False)
COUNT = 7
"""Instances each simulated agent runs."""


@pytest.fixture(scope="module", params=SHIPPED, ids=IDS)
def suite(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from agentproc.cli import main

    out = tmp_path_factory.mktemp("shipped") / request.param.stem
    argv = ["generate", "--workflow", str(request.param), "--count", "50", "--seed", "0"]
    assert main([*argv, "--out", str(out)]) == 0
    return out


def depth(depends_on: list[list[int]]) -> int:
    """The longest chain of steps, each reading the one before."""
    level: dict[int, int] = {}
    for k, deps in enumerate(depends_on, 1):
        level[k] = 1 + max((level[d] for d in deps), default=0)
    return max(level.values())


def test_a_shipped_workflow_draws_fifty_instances_of_7_to_30_steps_parallel_and_dead(suite):
    manifest = json.loads((suite / "suite.json").read_text(encoding="utf-8"))
    assert manifest["scenarios"] == 50
    scenarios = list(load_scenarios(suite))
    assert len({s.id for s in scenarios}) == 50
    if scenarios[0].path is not None:  # a branched one: several paths, answers of each
        assert len({s.path.name for s in scenarios if s.path}) >= 3
        assert len({s.answer for s in scenarios}) >= 4
        return
    for scenario in scenarios:
        assert 8 <= len(scenario.steps) <= 30
        assert not all(s.live for s in scenario.steps)  # a dead step
        assert depth([s.depends_on for s in scenario.steps]) < len(scenario.steps) - 1  # parallel
    answers = {s.answer for s in scenarios}
    assert len(answers) > 45  # answers that depend on the inputs


def answer_with(path: Path, inputs: dict[str, Any], step: int, slip: Fraction) -> Fraction:
    """The answer, worked out exactly, when step ``step``'s value is off by ``slip``."""
    wf = read_workflow(path)
    env = {name: Fraction(repr(v)) for name, v in inputs.items()}
    value = Fraction(0)
    for k, (spec, tree) in enumerate(zip(wf.spec.steps, wf.trees, strict=True)):
        exact = formula_values.evaluate(tree, env)
        assert exact is not None
        value = exact + (slip if k == step else 0)
        env[spec.output] = value
    return value


@pytest.mark.parametrize("path", LINEAR, ids=[p.stem for p in LINEAR])
def test_a_wrong_value_at_any_live_step_changes_the_answer(path):
    """No live step's mistake cancels out on its way to the answer (as a net pay and a
    remittance of the tax it deducts would), so a wrong value is a wrong answer."""
    for scenario in workflow_scenarios(read_workflow(path), path.stem, count=5, seed=0):
        right = answer_with(path, scenario.inputs, -1, Fraction(0))
        for k, step in enumerate(scenario.steps):
            moved = abs(answer_with(path, scenario.inputs, k, Fraction(1)) - right)
            assert (moved != 0) == step.live, (scenario.id, step.output)


def test_the_oracle_is_faithful_on_every_instance_through_run(suite, tmp_path, capsys):
    out = tmp_path / "oracle.jsonl"
    code, text, err = cli(
        capsys, "run", suite, "--agent", "sim:oracle", "--limit", 20, "--out", out
    )
    assert code == 0, err
    assert text.strip().endswith("faithful 20")
    assert {e["verdict"] for e in records(out)} == {"faithful"}


def test_the_batched_oracle_takes_the_fewest_messages_under_the_dependency_policy(
    suite, tmp_path, capsys
):
    out = tmp_path / "batched.jsonl"
    argv = ["run", suite, "--agent", "sim:batched", "--order", "dependency", "--limit", COUNT]
    code, _, err = cli(capsys, *argv, "--out", out)
    assert code == 0, err
    for episode in records(out):
        assert episode["verdict"] == "faithful"
        metrics = episode["metrics"]
        assert metrics["messages"] == metrics["fewest_messages"]
        # fewer messages than calls (on a branched workflow's path, a chain may need them all)
        assert metrics["messages"] < len(episode["calls"]) or "path" in metrics


def truth(scenario: Any, agent: str, order: str) -> set[tuple[Any, ...]]:
    injected = run_sim_episode(scenario, agent, seed=0, order=order).injected or []
    return {label.key() for label in injected}


def as_key(label: dict[str, Any]) -> tuple[Any, ...]:
    return Label.from_json(label).key()


@pytest.mark.parametrize("order", ["listed", "dependency"])
def test_each_fault_injecting_agent_is_labelled_as_it_injected_through_run(
    suite, tmp_path, capsys, order
):
    scenarios = {s.id: s for s in load_scenarios(suite)}
    for agent in INJECTORS:
        out = tmp_path / f"{agent[4:]}-{order}.jsonl"
        argv = ["run", suite, "--agent", agent, "--order", order, "--limit", COUNT]
        code, _, err = cli(capsys, *argv, "--out", out)
        assert code == 0, err
        episodes = records(out)
        assert len(episodes) == COUNT
        for e in episodes:
            got = {as_key(label) for label in e["labels"]}
            assert got == truth(scenarios[e["scenario_id"]], agent, order), (
                agent,
                e["scenario_id"],
            )
        # the fault it is named for shows (an unreturned value only where batches may be)
        if (order == "dependency") == (agent == "sim:unreturned_value"):
            assert any(lab["kind"] == agent[4:] for e in episodes for lab in e["labels"]), agent
