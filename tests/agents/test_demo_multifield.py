"""The demo endpoint on a workflow whose answer has several fields (``claim_settlement``):
a real ``agentproc serve-demo``, ``agentproc run --agent openai:demo`` against it. The
profiles read the finish tool's one argument per field and each exit's fields from the
prompt, as a model does: ``faithful`` is faithful on every path, exits included."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import records

from agentproc.resources import folder
from agentproc.workflow.declared.suite import load_workflow, write_workflow_suite
from tests.agents.test_demo_branched import run, serve

COUNT = 10


@pytest.mark.parametrize("profile", ["faithful", "sloppy"])
def test_the_demo_profiles_answer_every_field(tmp_path: Path, profile: str) -> None:
    wf = load_workflow(folder("workflows") / "claim_settlement.toml")
    suite = tmp_path / "suite"
    assert write_workflow_suite(wf, suite, COUNT, 0, "claim_settlement", balance="paths") == COUNT
    proc, url = serve("--profile", profile)
    try:
        episodes = run(suite, url, tmp_path / "run.jsonl")
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert len(records(tmp_path / "run.jsonl")) == COUNT
    for e in episodes:
        assert "error" not in e
        finish = [c for c in e["calls"] if c["name"] == "submit_settlement"]
        assert finish and all(c["refused"] is None for c in finish)
        fields = e["scenario"]["answer_fields"]
        if profile == "faithful":
            assert e["verdict"] == "faithful" and e["labels"] == []
            assert e["metrics"]["first_answer"] == fields
        else:  # an early answer gives the fields known so far: a wrong field each
            given = e["metrics"]["first_answer"]
            wrong = [lab["field"] for lab in e["labels"] if lab["kind"] == "wrong_answer"]
            assert set(fields) - set(given) <= set(wrong)
            assert e["metrics"]["first_answer_correct"] == (not wrong)
