"""The text report of a workflow suite: its steps one by one, named, beside every
agent (a golden file: ``AGENTPROC_UPDATE_GOLDEN=1`` rewrites it), and in narrower
consoles each agent alone or stacked, nothing cut."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from rich.console import Console

from agentproc.agents.sim import run_sim_episode
from agentproc.analysis import aggregate
from agentproc.analysis.measures.report import Report
from agentproc.analysis.measures.step_names import WorkflowNames
from agentproc.analysis.render.report_text import render_report
from agentproc.resources import folder
from agentproc.runs import RunWriter, episode_record, read_lines
from agentproc.workflow.declared.suite import load_workflow, workflow_scenarios

GOLDEN = Path(__file__).parents[2] / "golden"
UPDATE = os.environ.get("AGENTPROC_UPDATE_GOLDEN") == "1"
INVOICE = folder("workflows") / "invoice_approval.toml"


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Report:
    run = tmp_path_factory.mktemp("steps") / "run.jsonl"
    scenarios = list(workflow_scenarios(load_workflow(INVOICE), "invoice_approval", 10, 0))
    with RunWriter(run) as w:
        for agent in ("sim:decay", "sim:skipped_step"):
            for s in scenarios:
                w.write(episode_record(run_sim_episode(s, agent)))
    steps = WorkflowNames()
    return aggregate(list(steps.passing(read_lines(run, view="head"))), steps)


def render(report: Report, width: int) -> str:
    buffer = io.StringIO()
    console = Console(file=buffer, width=width, color_system=None, force_terminal=False)
    render_report(report, console)
    return buffer.getvalue()


def test_a_workflow_report_matches_its_golden_file(report: Report):
    text = render(report, 120)
    path = GOLDEN / "report_workflow.txt"
    if UPDATE:
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8")


def test_the_headline_leaves_the_median_step_of_leaving_to_the_steps_section(report: Report):
    text = render(report, 120)
    head, steps = text.split("\nby step", 1)
    assert "median step of leaving" not in head
    assert "sim:skipped_step: median step of leaving the procedure (Kaplan-Meier): " in steps


@pytest.mark.parametrize("width", [80, 60])
def test_narrow_consoles_show_each_agent_alone_or_stacked_and_cut_nothing(report: Report, width):
    text = render(report, width)
    assert "…" not in text and max(len(line) for line in text.splitlines()) <= width
    for agent in ("sim:decay", "sim:skipped_step"):
        assert f"by step: {agent}" in text  # too wide side by side: named apart
    assert "approval_figure → approval_ratio" in text
