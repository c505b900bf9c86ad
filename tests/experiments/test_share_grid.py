"""``stress SUITE --variants prefill-... --grid``: the agent's own error rate against the
share of wrong pre-filled steps; ``selfcheck --selfcond``: the measure reads sim:selfcond's
parameters back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import cli, records

from agentproc.cli import main
from agentproc.experiments import axis_of, preset_variants
from agentproc.experiments.selfcond_check import run_selfcond_check
from agentproc.experiments.stress import share_grid
from agentproc.workflow.variant import load_variant

SHARES = "prefill-clean,prefill-wrong-25,prefill-wrong-50,prefill-wrong-100"


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("share") / "s"
    argv = ["generate", "--steps", "10,25", "--lookback", "1,3", "--count", "10", "--out"]
    assert main([*argv, str(out)]) == 0
    return out


def test_prefill_variants_lie_on_their_own_axis_and_stay_out_of_the_preset_sweep():
    assert axis_of(load_variant("prefill-wrong-50")) == "prefill"
    assert not any(v.prefill for v in preset_variants())
    assert [v.name for v in share_grid(SHARES.split(","))] == SHARES.split(",")
    assert share_grid(["prefill-clean", "prose"]) is None and share_grid(None) is None


def test_the_grid_over_the_share_gives_the_curve_as_json(capsys, suite, tmp_path):
    code, out, err = cli(
        capsys,
        "stress",
        suite,
        "--agent",
        "sim:selfcond",
        "--variants",
        SHARES,
        "--grid",
        "--trials",
        "2",
        "--out",
        tmp_path / "runs",
        "--json",
    )
    assert code == 0, err
    data = json.loads(out)
    assert data["measure"] == "own_error_rate" and data["baseline"] == "prefill-clean"
    curve = data["curve"]
    assert [p["wrong_share"] for p in curve] == [0.0, 0.25, 0.5, 1.0]
    assert all(p["episodes"] == 80 for p in curve)
    clean = curve[0]["own_error_rate"]
    assert clean["ci"][0] <= 0.05 <= clean["ci"][1]
    for point in curve[1:]:
        lo, hi = point["own_error_rate"]["ci"]
        assert lo <= 0.2 <= hi and point["difference"]["verdict"] == "higher"
    runs = records(tmp_path / "runs" / "prefill-wrong-50.jsonl")
    assert {r["metrics"]["given_steps"] for r in runs} == {5, 13}


def test_the_grid_over_the_share_prints_one_row_per_share(capsys, suite, tmp_path):
    code, out, _ = cli(
        capsys,
        "stress",
        suite,
        "--agent",
        "sim:oracle",
        "--variants",
        "prefill-wrong-100,prefill-clean",
        "--grid",
        "--out",
        tmp_path / "runs",
    )
    assert code == 0
    assert "own error rate against the share of wrong pre-filled steps" in out
    assert "0.000 [0.000," in out and "no difference" in out
    assert out.index("prefill-clean") < out.index("prefill-wrong-100")


def test_the_selfcond_check_reads_the_agents_parameters_back():
    result = run_selfcond_check(count=20, seed=0)
    assert result.recovered
    assert result.clean.ci[0] <= 0.05 <= result.clean.ci[1]
    assert result.wrong.ci[0] <= 0.2 <= result.wrong.ci[1]
    missed = run_selfcond_check(count=20, seed=0, base=0.2, lift=-0.15)
    assert missed.wrong.value < missed.clean.value  # a history with errors helps it here
    assert missed.to_json()["lift"]["truth"] == -0.15


def test_selfcheck_selfcond_prints_what_it_read_back(capsys):
    code, out, _ = cli(capsys, "selfcheck", "--selfcond", "10")
    assert code == 0
    assert "the measure recovers the parameters" in out and "truth 0.050" in out
    code, out, _ = cli(capsys, "selfcheck", "--selfcond", "10", "--json")
    data = json.loads(out)
    assert data["recovered"] and data["episodes"] == 2 * 6 * 10


def test_a_grid_mixing_prefill_and_other_variants_is_refused_in_one_line(capsys, suite, tmp_path):
    code, _, err = cli(
        capsys, "stress", suite, "--agent", "sim:oracle", "--variants",
        "prose,terse,prefill-wrong-50", "--grid", "--out", tmp_path / "runs",
    )  # fmt: skip
    assert code == 2 and "prefill-wrong-50" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "runs" / "prose.jsonl").exists()
