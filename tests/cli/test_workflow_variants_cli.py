"""Variant runs of a declared workflow's suite: run, replayed and relabelled unchanged,
reported; a run file whose variant cannot present the workflow is one line and exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentproc.cli import main
from agentproc.resources import folder
from tests.helpers import cli


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wfvariants") / "stock"
    path = folder("workflows") / "inventory_reorder.toml"
    assert main(["generate", "--workflow", str(path), "--count", "5", "--out", str(out)]) == 0
    return out


@pytest.mark.parametrize(
    "variant",
    [
        "random-names",
        "shuffled",
        "flaky-tools",
        "feedback",
        "json",
        "distractors",
        "prefill-wrong-50",
    ],
)
def test_a_variant_run_replays_and_relabels_unchanged(suite, tmp_path, capsys, variant):
    run = tmp_path / "run.jsonl"
    argv = ["run", suite, "--agent", "sim:decay", "--variant", variant, "--out", run]
    code, _, _ = cli(capsys, *argv)
    assert code == 0
    records = [json.loads(line) for line in run.read_text(encoding="utf-8").splitlines()]
    assert {r["variant"] for r in records if "variant" in r} == {variant}
    code, out, _ = cli(capsys, "replay", run)
    assert code == 0 and "0 differ from the recording" in out
    code, out, _ = cli(capsys, "relabel", run)
    assert code == 0 and "0 changed" in out
    code, _, _ = cli(capsys, "report", run, "--json")
    assert code == 0


def test_a_run_file_whose_variant_cannot_apply_is_refused_in_one_line(suite, tmp_path, capsys):
    run = tmp_path / "run.jsonl"
    assert (
        main(["run", str(suite), "--agent", "sim:oracle", "--variant", "prose", "--out", str(run)])
        == 0
    )
    capsys.readouterr()
    lines = []
    for line in run.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record.get("variant_spec"):
            record["variant_spec"] = {"name": "prose", "tools": "calculator"}
        lines.append(json.dumps(record))
    run.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, _, err = cli(capsys, "relabel", run)
    assert code == 2
    assert err.strip().splitlines() == [
        "agentproc: error: inventory_reorder-0000: variant 'prose' does not apply to a "
        "declared workflow (the calculator offers add, sub, mul and div; a declared step "
        "computes a formula, which no one of them is)"
    ]


def test_a_pre_fill_gives_a_workflows_first_steps_and_judges_the_agents_own(
    suite, tmp_path, capsys
):
    run = tmp_path / "run.jsonl"
    argv = ["run", suite, "--agent", "sim:oracle", "--variant", "prefill-wrong-100", "--out", run]
    code, _, _ = cli(capsys, *argv)
    assert code == 0
    records = [json.loads(line) for line in run.read_text(encoding="utf-8").splitlines()]
    episodes = [r for r in records if "metrics" in r]
    assert len(episodes) == 5
    for r in episodes:  # half of the 12 steps given, every one wrong: carried forward, correct
        assert r["metrics"]["given_steps"] == 6 and r["metrics"]["total_steps"] == 6
        assert r["verdict"] == "faithful" and r["labels"] == []
