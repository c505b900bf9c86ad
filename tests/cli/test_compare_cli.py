"""``agentproc compare`` on run files of simulated agents: tables, JSON, verdicts, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import last_paragraph

from agentproc.cli import main
from agentproc.labelling import LabelKind


def cli(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("compare")
    suite = root / "s"
    argv = ["generate", "--steps", "5,25", "--lookback", "1,7", "--count", "10"]
    assert main([*argv, "--out", str(suite)]) == 0
    out = {}
    for agent, trials in (("sim:oracle", 1), ("sim:decay", 1), ("sim:skipped_step", 3)):
        out[agent] = root / f"{agent.split(':')[1]}.jsonl"
        argv = ["run", str(suite), "--agent", agent, "--trials", str(trials)]
        assert main([*argv, "--out", str(out[agent])]) == 0
    out["suite"] = suite
    return out


def test_a_skipping_agent_is_worse_than_the_oracle_and_skipped_step_rose(capsys, runs):
    code, out, _ = cli(capsys, "compare", runs["sim:oracle"], runs["sim:skipped_step"])
    assert code == 0
    last = last_paragraph(out)
    assert last.startswith(
        "sim:skipped_step: worse than sim:oracle: faithful accuracy 100.0% -> 0.0%"
    )
    assert "skipped_step rose" in last
    assert "pass^3" in out and "label stability across trials" in out


def test_json_has_every_arm_rate_difference_and_verdict(capsys, runs):
    code, out, _ = cli(
        capsys, "compare", runs["sim:oracle"], runs["sim:decay"], runs["sim:skipped_step"], "--json"
    )
    assert code == 0
    data = json.loads(out)  # strict: no NaN
    assert data["baseline"] == "sim:oracle"
    assert [a["name"] for a in data["arms"]] == ["sim:oracle", "sim:decay", "sim:skipped_step"]
    oracle = data["arms"][0]
    assert oracle["overall"]["faithful"]["value"] == 1.0
    assert {c["steps"] for c in oracle["cells"]} == {5, 25}
    decay, skipping = data["comparisons"]
    assert skipping["verdict"] == "worse"
    assert skipping["overall"]["faithful"]["diff"] == -1.0
    assert skipping["pairs"] == 40 and skipping["unpaired"] == 80
    skipped = next(d for d in skipping["labels"] if d["measure"] == "skipped_step")
    assert skipped["significant"] and skipped["p_holm"] <= skipped["p"] * len(LabelKind)
    assert data["arms"][2]["trials"]["pass_faithful"] == {"1": 0.0, "2": 0.0, "3": 0.0}
    assert data["arms"][2]["trials"]["deterministic"] is False
    # decay slips on long procedures only
    by_steps = {c["steps"]: c["faithful"]["diff"] for c in decay["cells"]}
    assert by_steps[5] >= by_steps[25]


def test_the_baseline_can_be_chosen(capsys, runs):
    code, out, _ = cli(
        capsys,
        "compare",
        runs["sim:oracle"],
        runs["sim:decay"],
        "--baseline",
        "sim:decay",
        "--json",
    )
    assert code == 0
    (c,) = json.loads(out)["comparisons"]
    assert (c["arm"], c["baseline"]) == ("sim:oracle", "sim:decay")
    assert c["overall"]["faithful"]["diff"] > 0


def test_the_same_seed_gives_the_same_bytes(capsys, runs):
    a = cli(capsys, "compare", runs["sim:oracle"], runs["sim:decay"], "--json", "--seed", "3")[1]
    b = cli(capsys, "compare", runs["sim:oracle"], runs["sim:decay"], "--json", "--seed", "3")[1]
    assert a == b


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["sim:oracle"], "compare needs episodes of at least two variants or agents"),
        (["sim:oracle", "sim:decay", "--baseline", "nope"], "--baseline: no arm named 'nope'"),
        (["suite"], "is a folder: compare a suite with --variants a,b"),
        (["missing"], "missing.jsonl"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(capsys, runs, tmp_path, argv, message):
    paths = [
        str(tmp_path / "missing.jsonl") if a == "missing" else str(runs.get(a, a)) for a in argv
    ]
    code, out, err = cli(capsys, "compare", *paths)
    assert code == 2 and out == ""
    assert err.startswith("agentproc: error: ") and message in err
    assert len(err.strip().splitlines()) == 1
