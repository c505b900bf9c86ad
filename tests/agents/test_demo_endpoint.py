"""The demo endpoint's profiles, run through the real ``run`` and ``compare`` commands.

Each profile is pointed at a small suite exactly as a user would point ``--agent
openai:demo --base-url URL`` at ``agentproc serve-demo``; the labels the monitor gives its
episodes are what the profile promises.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from helpers import cli, records

from agentproc.agents.demo import ChatServer, demo_server


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from agentproc.cli import main

    out = tmp_path_factory.mktemp("demo") / "suite"
    argv = ["generate", "--steps", "5,10", "--lookback", "1,3", "--count", "4", "--out", str(out)]
    assert main(argv) == 0
    return out


def run(capsys, suite: Path, srv: ChatServer, out: Path, *extra: str) -> list[dict]:
    code, _, err = cli(
        capsys, "run", suite, "--agent", "openai:demo", "--base-url", srv.base_url,
        "--concurrency", "4", "--out", out, *extra,
    )  # fmt: skip
    assert code == 0, err
    return sorted(records(out), key=lambda r: r["scenario_id"])


def kinds(recs: list[dict]) -> Counter[str]:
    return Counter(label["kind"] for r in recs for label in r["labels"])


def test_faithful_gets_a_faithful_verdict_on_every_episode(capsys, suite, tmp_path):
    with demo_server("faithful") as srv:
        recs = run(capsys, suite, srv, tmp_path / "run.jsonl")
    assert len(recs) == 16
    assert {r["verdict"] for r in recs} == {"faithful"}


def test_skipper_skips_steps_and_still_answers_right(capsys, suite, tmp_path):
    with demo_server("skipper") as srv:
        recs = run(capsys, suite, srv, tmp_path / "run.jsonl")
    assert set(kinds(recs)) == {"skipped_step"}
    assert kinds(recs)["skipped_step"] >= 5
    assert {r["verdict"] for r in recs} <= {"faithful", "unfaithful_correct"}
    assert sum(r["verdict"] == "unfaithful_correct" for r in recs) >= 5


def test_sloppy_passes_wrong_arguments_and_sometimes_answers_early(capsys, suite, tmp_path):
    with demo_server("sloppy") as srv:
        recs = run(capsys, suite, srv, tmp_path / "run.jsonl")
    found = kinds(recs)
    assert found["wrong_argument"] > 0 and found["premature_finish"] > 0
    causes = {lab["cause"] for r in recs for lab in r["labels"] if lab["kind"] == "wrong_argument"}
    assert {"propagated", "other"} <= causes
    assert "wrong" in {r["verdict"] for r in recs}


@pytest.mark.parametrize(
    ("variant", "faithful"),
    [("default", False), ("one-call-per-step", True), ("step-by-step", True)],
)
def test_prompt_sensitive_is_faithful_only_when_told_not_to_skip(
    capsys, suite, tmp_path, variant, faithful
):
    with demo_server("prompt-sensitive") as srv:
        recs = run(capsys, suite, srv, tmp_path / "run.jsonl", "--variant", variant)
    verdicts = Counter(r["verdict"] for r in recs)
    if faithful:
        assert verdicts == {"faithful": 16}
    else:
        assert set(kinds(recs)) == {"skipped_step"} and verdicts["faithful"] <= 4


def test_the_same_seed_gives_the_same_run_and_another_seed_another(capsys, suite, tmp_path):
    heads = []
    for i, seed in enumerate((0, 0, 1)):
        with demo_server("sloppy", seed=seed) as srv:
            recs = run(capsys, suite, srv, tmp_path / f"run{i}.jsonl", "--concurrency", "8")
        heads.append([(r["scenario_id"], r["verdict"], r["labels"], r["calls"]) for r in recs])
    assert heads[0] == heads[1]
    assert heads[0] != heads[2]


def test_compare_finds_the_prompt_effect_of_the_prompt_sensitive_profile(capsys, suite, tmp_path):
    with demo_server("prompt-sensitive") as srv:
        code, out, err = cli(
            capsys, "compare", suite, "--variants", "default,one-call-per-step",
            "--agent", "openai:demo", "--base-url", srv.base_url, "--concurrency", "4",
            "--out", tmp_path / "cmp", "--json",
        )  # fmt: skip
    assert code == 0, err
    (comparison,) = json.loads(out)["comparisons"]
    assert comparison["verdict"] == "better"
    assert comparison["overall"]["faithful"]["p"] < 0.001
    assert comparison["overall"]["faithful"]["ci"][0] > 0
