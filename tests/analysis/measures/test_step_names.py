"""A declared workflow's steps by name: from its scenario, after a pre-fill, agreed over
several workflows, and found once per workflow from a run's lines (or not, saying why)."""

from __future__ import annotations

from pathlib import Path

from agentproc.agents.sim import run_sim_episode
from agentproc.analysis import aggregate
from agentproc.analysis.measures.step_names import (
    StepName,
    WorkflowNames,
    agreed,
    scenario_names,
    shifted,
    step_text,
)
from agentproc.procedures import Cell, generate_procedure
from agentproc.resources import folder
from agentproc.runs import RunWriter, episode_record, read_lines
from agentproc.workflow import scenario_of
from agentproc.workflow.declared.suite import load_workflow, workflow_scenarios

REFUND = folder("workflows") / "refund_approval.toml"


def refund(count: int = 2) -> list:
    return list(workflow_scenarios(load_workflow(REFUND), "refund_approval", count, 0))


def test_a_declared_workflows_steps_are_named_by_tool_and_output_a_procedures_not():
    names = scenario_names(refund(1)[0])
    assert [(n.tool, n.output) for n in names.values()] == [
        (s.tool, s.output) for s in load_workflow(REFUND).steps
    ]
    assert list(names) == list(range(1, len(names) + 1))
    assert scenario_names(scenario_of(generate_procedure(Cell(steps=4, lookback=1), 0, 0))) == {}


def test_a_step_named_after_its_output_reads_once_and_one_without_a_name_by_number():
    names = {1: StepName("net", "net"), 2: StepName("late_penalty", "late_days")}
    assert [step_text(k, names) for k in (1, 2, 3)] == [
        "step 1 (net)",
        "step 2 (late_penalty → late_days)",
        "step 3",
    ]


def test_after_a_pre_fill_positions_count_from_the_agents_own_first_step():
    names = scenario_names(refund(1)[0])
    assert shifted(names, 2)[1] == names[3]
    assert 0 not in shifted(names, 2) and len(shifted(names, 2)) == len(names) - 2


def test_steps_two_workflows_name_differently_stay_numbers():
    a, b, c = StepName("a", "x"), StepName("b", "y"), StepName("c", "z")
    assert agreed([{1: a, 2: b}, {1: a, 2: c}]) == {1: a}


def write(path: Path, scenarios: list) -> Path:
    with RunWriter(path) as w:
        for s in scenarios:
            w.write(episode_record(run_sim_episode(s, "sim:skipped_step")))
    return path


def test_names_are_found_from_the_scenario_a_line_keeps(tmp_path: Path):
    run = write(tmp_path / "r.jsonl", refund())  # no suite: each line keeps its scenario
    steps = WorkflowNames()
    lines = list(read_lines(run, view="head"))
    assert all(steps.needs(line.rec) for line in lines)
    heads = list(steps.passing(lines))
    assert steps.of("refund_approval") == scenario_names(refund(1)[0])
    assert steps.warnings() == []
    agent = aggregate(heads, steps).agents["sim:skipped_step"]
    assert agent.declared and agent.step_names == scenario_names(refund(1)[0])


def test_a_procedures_records_are_never_read_for_names(tmp_path: Path):
    scenario = scenario_of(generate_procedure(Cell(steps=3, lookback=1), 0, 0))
    run = write(tmp_path / "p.jsonl", [scenario])
    steps = WorkflowNames()
    (head,) = steps.passing(read_lines(run, view="head"))
    assert not steps.needs(head) and steps.workflows == {} and steps.of_record(head) == {}
    agent = aggregate([head], steps).agents["sim:skipped_step"]
    assert not agent.declared and agent.step_names == {} and agent.by_workflow == {}
