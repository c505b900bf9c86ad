"""The demo endpoint's profiles on the shipped branched workflows (format 2: conditions,
exits, categories and booleans): a real ``agentproc serve-demo`` on 127.0.0.1, ``agentproc
run --agent openai:demo`` against it, on a suite of each workflow whose instances take its
paths in turn (``balance="paths"``), and the labels and path metrics the monitor gives each
profile. The profiles read the conditions, the exits and the typed values from the prompt
and the tools, as a model does: nothing of the scenario's own path is known to them."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import records

from agentproc.resources import folder
from agentproc.workflow.declared.suite import load_workflow, write_workflow_suite

BRANCHED = ("hazard_class", "refund_approval", "service_triage")
"""The shipped workflows with conditions and exits."""
COUNT = 10
"""Instances of each workflow."""
Episodes = dict[str, list[dict[str, Any]]]
"""Workflow -> its episodes (each with its scenario's line under ``scenario``)."""


def serve(*argv: str) -> tuple[subprocess.Popen[str], str]:
    """``agentproc serve-demo`` on a free port, and its base URL."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentproc", "serve-demo", "--port", "0", *argv],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    first = proc.stdout.readline()
    return proc, first[first.index("http://") :].split()[0]


@pytest.fixture(scope="module")
def suites(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("demo-branched")
    for name in BRANCHED:
        wf = load_workflow(folder("workflows") / f"{name}.toml")
        assert wf.branched
        assert write_workflow_suite(wf, root / name, COUNT, 0, name, balance="paths") == COUNT
    return {name: root / name for name in BRANCHED}


def run(suite: Path, url: str, out: Path) -> list[dict[str, Any]]:
    from agentproc.cli import main

    argv = ["run", str(suite), "--agent", "openai:demo", "--base-url", url]
    assert main([*argv, "--concurrency", "4", "--out", str(out)]) == 0
    episodes = records(out)
    assert len(episodes) == COUNT
    lines = (suite / "scenarios.jsonl").read_text(encoding="utf-8").splitlines()
    scenarios = {s["id"]: s for s in map(json.loads, lines)}
    for e in episodes:  # an episode refers to its suite's line
        e["scenario"] = scenarios[e["scenario_id"]]
    return episodes


@pytest.fixture(scope="module")
def played(
    suites: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Callable[[str], Episodes]]:
    """A profile -> its episodes on every branched suite (one endpoint a profile, its runs
    kept for the module)."""
    done: dict[str, Episodes] = {}

    def play(profile: str) -> Episodes:
        if profile not in done:
            out = tmp_path_factory.mktemp(f"runs-{profile}")
            proc, url = serve("--profile", profile)
            try:
                done[profile] = {
                    name: run(suite, url, out / f"{name}.jsonl") for name, suite in suites.items()
                }
            finally:
                proc.terminate()
                proc.wait(timeout=10)
        return done[profile]

    yield play


def kinds(episodes: list[dict[str, Any]]) -> Counter[str]:
    return Counter(label["kind"] for e in episodes for label in e["labels"])


def required_calls(scenario: dict[str, Any]) -> list[str]:
    """The tools an instance requires, in listed order, then the finish tool."""
    steps = [
        s["expected_call"]["name"] for s in scenario["steps"] if s.get("required") is not False
    ]
    return [*steps, scenario["finish"]["tool"]]


def conditional(scenario: dict[str, Any], step: int | None) -> bool:
    """Whether a step (by number) has a condition."""
    return step is not None and bool(scenario["steps"][step - 1].get("when"))


def test_the_suites_take_every_kind_of_path(suites):
    """Each suite holds instances that run a conditional step, that leave one out and
    that end at an exit, so that the checks below see every kind of branch."""
    for name, suite in suites.items():
        lines = (suite / "scenarios.jsonl").read_text(encoding="utf-8").splitlines()
        scenarios = [json.loads(line) for line in lines]
        assert any(s["path"]["exit"] for s in scenarios), name
        assert any(not s["path"]["exit"] for s in scenarios), name
        steps = [
            st for s in scenarios if not s["path"]["exit"] for st in s["steps"] if st.get("when")
        ]
        assert {st.get("required") is not False for st in steps} == {True, False}, name


@pytest.mark.parametrize("workflow", BRANCHED)
def test_the_faithful_profile_follows_every_path_and_exit_exactly(played, workflow):
    episodes = played("faithful")[workflow]
    assert {e["verdict"] for e in episodes} == {"faithful"}
    assert kinds(episodes) == Counter()
    for e in episodes:
        metrics = e["metrics"]
        assert metrics["path"] == e["scenario"]["path"]["name"]
        assert metrics["path_correct"] is True
        assert metrics["exit_correct"] is True
        assert metrics["first_answer_correct"] is True
        # the required steps only, in listed order, then the answer (an exit's at once)
        assert [c["name"] for c in e["calls"]] == required_calls(e["scenario"])
        assert all(c.get("refused") is None for c in e["calls"])


def test_the_faithful_profile_gives_typed_arguments_and_leaves_out_a_step_not_run(played):
    """Categories go as strings and booleans as JSON true/false; an optional argument of a
    step the instance does not run is left out."""
    by_workflow = played("faithful")
    routed = [c for e in by_workflow["service_triage"] for c in e["calls"]]
    routes = [json.loads(c["arguments"]) for c in routed if c["name"] == "route_ticket"]
    assert routes and all(isinstance(r["issue_type"], str) for r in routes)
    assert all(isinstance(r["escalate"], bool) for r in routes)
    assert any("deadline" not in r for r in routes)  # response_deadline not run
    answers = [c for c in routed if c["name"] == "submit_routing"]
    assert {type(json.loads(c["arguments"])["answer"]) for c in answers} == {str}


@pytest.mark.parametrize("workflow", BRANCHED)
def test_the_skipper_answers_right_and_follows_conditions_and_exits(played, workflow):
    episodes = played("skipper")[workflow]
    assert {e["verdict"] for e in episodes} <= {"faithful", "unfaithful_correct"}
    assert all(e["metrics"]["first_answer_correct"] for e in episodes)
    found = kinds(episodes)
    # it leaves out required steps (and may answer an exit with some left out before it),
    # never runs a step the instance does not require
    assert set(found) <= {"skipped_step", "premature_finish"}
    assert all(e["metrics"]["exit_correct"] for e in episodes)
    for e in episodes:  # the answer's own step is never left out
        last = len(e["scenario"]["steps"])
        assert all(label["step"] != last for label in e["labels"])


def test_the_skipper_skips_steps_on_each_branched_workflow(played):
    episodes = played("skipper")
    assert all(kinds(episodes[name])["skipped_step"] > 0 for name in BRANCHED)
    skipping = sum(e["verdict"] == "unfaithful_correct" for es in episodes.values() for e in es)
    assert skipping >= len(BRANCHED) * COUNT // 4


def test_the_sloppy_profile_takes_a_wrong_branch_somewhere(played):
    """Besides its slips, a step whose condition is false run, or one whose condition
    holds left out."""
    wrong_branch = []
    for name, episodes in played("sloppy").items():
        for e in episodes:
            for label in e["labels"]:
                if label["kind"] == "unneeded_step":
                    assert label["reason"] == "condition"  # it never runs past an exit
                    wrong_branch.append((name, label))
                elif label["kind"] == "skipped_step" and conditional(e["scenario"], label["step"]):
                    wrong_branch.append((name, label))
    assert wrong_branch
