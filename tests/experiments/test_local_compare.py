"""``agentproc compare`` with the embedded model, end to end: two variants, one tiny suite."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import records

from agentproc.agents.local import check_installed
from agentproc.cli import main
from agentproc.errors import ConfigError

try:
    check_installed()
except ConfigError as e:
    pytest.skip(str(e), allow_module_level=True)


def test_the_embedded_model_compared_under_two_prompts(tmp_path: Path, capsys, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    suite, runs = tmp_path / "s", tmp_path / "runs"
    argv = ["generate", "--steps", "3", "--lookback", "2", "--count", "1", "--out", str(suite)]
    assert main(argv) == 0
    capsys.readouterr()
    argv = ["compare", str(suite), "--variants", "default,terse", "--agent", "local"]
    assert main([*argv, "--budget", "3", "--out", str(runs), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [a["name"] for a in data["arms"]] == ["default", "terse"]
    assert all(a["agent"] == "local" and a["episodes"] == 1 for a in data["arms"])
    (c,) = data["comparisons"]
    assert (c["arm"], c["baseline"], c["pairs"]) == ("terse", "default", 1)
    # one scenario cannot show anything: the verdict says so, with the effect it would need
    assert c["verdict"] == "no detectable difference" and c["min_detectable_effect"] == 1.0
    recs = records(runs / "terse.jsonl")
    assert recs[0]["variant"] == "terse" and recs[0]["calls"]
    prompt = recs[0]["messages"][1]["content"]
    default = records(runs / "default.jsonl")[0]["messages"][1]["content"]
    assert prompt != default  # the variant's prompt reached the model


def test_the_embedded_model_under_a_tiny_stress_sweep(tmp_path: Path, capsys, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    suite, runs = tmp_path / "s", tmp_path / "runs"
    argv = ["generate", "--steps", "3", "--lookback", "2", "--count", "1", "--out", str(suite)]
    assert main(argv) == 0
    capsys.readouterr()
    argv = ["stress", str(suite), "--agent", "local", "--variants", "terse,prose"]
    assert main([*argv, "--budget", "3", "--out", str(runs), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert sorted(r["variant"] for r in data["ranking"]) == ["prose", "terse"]
    assert {b["variant"] for b in data["breaking_points"]} == {"default", "terse", "prose"}
    for name in ("default", "terse", "prose"):  # one real episode of the model per variant
        (rec,) = records(runs / f"{name}.jsonl")
        assert rec["agent"] == "local" and rec["variant"] == name and rec["messages"]
