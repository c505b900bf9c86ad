"""The demo endpoint's profiles on every shipped declared workflow: a real ``agentproc
serve-demo`` on 127.0.0.1, ``agentproc run --agent openai:demo`` against it, and the labels
the monitor gives each profile, as it behaves. The profiles read the tools and the prompt,
as a model does, so nothing of a workflow's own is known to them."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import cli, records, shipped_workflows

from agentproc.agents.demo import PROFILES
from agentproc.resources import folder

SHIPPED = shipped_workflows(branched=False)
"""The linear workflows (the branched ones' profiles: ``test_demo_branched.py``)."""
COUNT = 8
"""Instances of each workflow."""
CAUSES = {"propagated", "lookback_confusion", "stale_output", "other"}


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


@pytest.fixture(scope="module", params=PROFILES)
def endpoint(request: pytest.FixtureRequest) -> Iterator[tuple[str, str]]:
    proc, url = serve("--profile", request.param)
    try:
        yield request.param, url
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture(scope="module")
def suites(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    from agentproc.cli import main

    root = tmp_path_factory.mktemp("demo-workflows")
    for path in SHIPPED:
        argv = ["generate", "--workflow", str(path), "--count", str(COUNT), "--out"]
        assert main([*argv, str(root / path.stem)]) == 0
    return {path.stem: root / path.stem for path in SHIPPED}


def run(capsys: Any, suite: Path, url: str, out: Path) -> list[dict[str, Any]]:
    code, _, err = cli(
        capsys, "run", suite, "--agent", "openai:demo", "--base-url", url, "--concurrency", 4,
        "--out", out,
    )  # fmt: skip
    assert code == 0, err
    episodes = records(out)
    assert len(episodes) == COUNT
    lines = (suite / "scenarios.jsonl").read_text(encoding="utf-8").splitlines()
    scenarios = {s["id"]: s for s in map(json.loads, lines)}
    for e in episodes:  # an episode refers to its suite's line
        e["scenario"] = scenarios[e["scenario_id"]]
    return episodes


def kinds(episodes: list[dict[str, Any]]) -> Counter[str]:
    return Counter(label["kind"] for e in episodes for label in e["labels"])


def variables(episode: dict[str, Any]) -> set[str]:
    scenario = episode["scenario"]
    return set(scenario["inputs"]) | {s["output"] for s in scenario["steps"]}


def faithful(episodes: list[dict[str, Any]]) -> None:
    assert {e["verdict"] for e in episodes} == {"faithful"}
    assert kinds(episodes) == Counter()
    for e in episodes:  # every step once, then the answer
        assert len(e["calls"]) == len(e["scenario"]["steps"]) + 1


def skipping(episodes: list[dict[str, Any]]) -> None:
    """Steps left out and worked out in its head: right answers, only skipped steps."""
    assert set(kinds(episodes)) == {"skipped_step"}
    assert {e["verdict"] for e in episodes} <= {"faithful", "unfaithful_correct"}
    assert sum(e["verdict"] == "unfaithful_correct" for e in episodes) >= COUNT // 4
    for e in episodes:  # the answer's own step is never left out
        last = len(e["scenario"]["steps"])
        assert all(label["step"] != last for label in e["labels"])


def sloppy(episodes: list[dict[str, Any]]) -> None:
    """Wrong arguments (new mistakes, then carried forward), some answers half-way through."""
    found = kinds(episodes)
    assert set(found) <= {"wrong_argument", "wrong_answer", "premature_finish", "skipped_step"}
    assert found["wrong_argument"] > 0
    causes = Counter(lab["cause"] for e in episodes for lab in e["labels"] if "cause" in lab)
    assert set(causes) <= CAUSES and causes["propagated"] > 0
    assert causes["lookback_confusion"] + causes["other"] > 0  # the new mistakes
    for e in episodes:
        labels = {lab["kind"]: lab for lab in e["labels"]}
        assert ("wrong_answer" in labels) == (e["verdict"] == "wrong")
        skipped = [lab for lab in e["labels"] if lab["kind"] == "skipped_step"]
        missing = labels.get("premature_finish", {}).get("missing_steps", 0)
        assert len(skipped) == missing  # it skips only by answering early
        for lab in e["labels"]:
            if lab.get("cause") in ("lookback_confusion", "stale_output"):
                assert lab["confused_with"] in variables(e)  # a declared name


CHECKS: dict[str, Callable[[list[dict[str, Any]]], None]] = {
    "faithful": faithful,
    "skipper": skipping,
    "sloppy": sloppy,
    "prompt-sensitive": skipping,  # no workflow's prompt tells it not to skip
}


def test_every_profile_has_its_check():
    assert set(CHECKS) == set(PROFILES)


@pytest.mark.parametrize("workflow", [p.stem for p in SHIPPED])
def test_each_profile_runs_on_each_shipped_workflow_labelled_as_it_behaves(
    capsys, endpoint, suites, workflow, tmp_path
):
    profile, url = endpoint
    episodes = run(capsys, suites[workflow], url, tmp_path / "run.jsonl")
    CHECKS[profile](episodes)
    if profile == "prompt-sensitive":  # it skips half the steps, the skipper a quarter
        assert sum(kinds(episodes).values()) > COUNT * 2


def test_the_prompt_sensitive_profile_follows_a_workflow_whose_description_says_step_by_step(
    capsys, tmp_path
):
    from agentproc.cli import main

    text = (folder("workflows") / "payroll.toml").read_text(encoding="utf-8")
    told = tmp_path / "payroll.toml"
    told.write_text(text.replace('description = """', 'description = """Step by step: '), "utf-8")
    suite = tmp_path / "suite"
    argv = ["generate", "--workflow", str(told), "--count", str(COUNT), "--out", str(suite)]
    assert main(argv) == 0
    capsys.readouterr()
    proc, url = serve("--profile", "prompt-sensitive")
    try:
        faithful(run(capsys, suite, url, tmp_path / "run.jsonl"))
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_the_faithful_profiles_report_says_every_episode_is_faithful(capsys, suites, tmp_path):
    proc, url = serve("--profile", "faithful")
    try:
        run(capsys, suites["payroll"], url, tmp_path / "run.jsonl")
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    code, out, _ = cli(capsys, "report", tmp_path / "run.jsonl")
    unwrapped = " ".join(out.split())
    assert code == 0
    assert f"openai:demo: n={COUNT}, first-answer acc 1.000" in unwrapped
    assert f"verdicts: faithful {COUNT}, unfaithful_correct 0, wrong 0, no_answer 0" in unwrapped
