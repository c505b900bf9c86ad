"""The demo endpoint on a workflow with loops (``business_verification``): a real
``agentproc serve-demo`` on 127.0.0.1, ``agentproc run --agent openai:demo`` against it.
The faithful profile reads the list, each step of a loop by its item and the loop's one
tool from the prompt and the tools, as a model does, and is faithful on every path."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import records

from agentproc.cli import main
from agentproc.resources import folder
from agentproc.workflow.declared.suite import load_workflow, write_workflow_suite
from tests.agents.test_demo_branched import serve

COUNT = 10


def test_the_faithful_profile_is_faithful_on_every_path_of_a_looped_workflow(tmp_path: Path):
    wf = load_workflow(folder("workflows") / "business_verification.toml")
    suite = tmp_path / "suite"
    assert (
        write_workflow_suite(wf, suite, COUNT, 0, "business_verification", balance="paths") == COUNT
    )
    lines = [json.loads(x) for x in (suite / "scenarios.jsonl").read_text().splitlines()]
    assert {len([s for s in x["steps"] if s.get("loop")]) for x in lines} >= {4, 6}
    proc, url = serve("--profile", "faithful")
    try:
        out = tmp_path / "run.jsonl"
        argv = ["run", str(suite), "--agent", "openai:demo", "--base-url", url]
        assert main([*argv, "--out", str(out)]) == 0
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    episodes = records(out)
    assert [e["verdict"] for e in episodes] == ["faithful"] * COUNT
    looped = [c for e in episodes for c in e["calls"] if c["name"] == "owner_share"]
    assert len(looped) >= COUNT  # each owner's share asked of the one tool
