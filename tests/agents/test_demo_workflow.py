"""The demo endpoint's profiles on a declared workflow's suite: they read the tools and
the prompt, as a model does, and the monitor labels what they do."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from helpers import cli, records

from agentproc.agents.demo import demo_server
from agentproc.resources import folder

SHIPPED = sorted(folder("workflows").glob("*.toml"))


@pytest.fixture(scope="module", params=SHIPPED, ids=[p.stem for p in SHIPPED])
def suite(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Path:
    from agentproc.cli import main

    workflow = request.param
    out = tmp_path_factory.mktemp("demo-workflow") / workflow.stem
    argv = ["generate", "--workflow", str(workflow), "--count", "8", "--out", str(out)]
    assert main(argv) == 0
    return out


def run(capsys, suite: Path, profile: str, out: Path) -> list[dict]:
    with demo_server(profile) as srv:
        code, _, err = cli(
            capsys, "run", suite, "--agent", "openai:demo", "--base-url", srv.base_url,
            "--out", out,
        )  # fmt: skip
    assert code == 0, err
    return records(out)


def test_the_faithful_profile_follows_a_declared_workflow(capsys, suite, tmp_path):
    recs = run(capsys, suite, "faithful", tmp_path / "run.jsonl")
    assert len(recs) == 8
    assert {r["verdict"] for r in recs} == {"faithful"}


def test_the_skipper_skips_workflow_steps_working_their_formulas_out_itself(
    capsys, suite, tmp_path
):
    recs = run(capsys, suite, "skipper", tmp_path / "run.jsonl")
    kinds = Counter(label["kind"] for r in recs for label in r["labels"])
    assert set(kinds) == {"skipped_step"}
    assert {r["verdict"] for r in recs} <= {"faithful", "unfaithful_correct"}
    assert sum(r["verdict"] == "unfaithful_correct" for r in recs) >= 2
