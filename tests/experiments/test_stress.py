"""The stress sweep: which axis a variant changes, combinations, rankings, breaking points."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentproc.analysis.trials import Outcome
from agentproc.cli import main
from agentproc.errors import ConfigError
from agentproc.experiments import axis_of, breaking_point, combine, preset_variants
from agentproc.workflow.variant import DEFAULT_VARIANT, load_variant


@pytest.mark.parametrize(
    ("name", "axis"),
    [
        ("default", "default"),
        ("terse", "prompt"),
        ("checklist", "prompt"),
        ("prose", "rendering"),
        ("shuffled", "rendering"),
        ("random-names", "rendering"),
        ("calculator", "tools"),
        ("flaky-tools", "tools"),
        ("scrambled-names", "tools"),
        ("enforce", "guard"),
    ],
)
def test_each_shipped_variant_changes_one_axis(name, axis):
    assert axis_of(load_variant(name)) == axis


def test_combining_variants_makes_every_change_and_refuses_a_clash():
    both = combine([load_variant("terse"), load_variant("prose"), DEFAULT_VARIANT])
    assert both.name == "terse+prose"
    assert both.rendering == "prose" and both.prompt == load_variant("terse").prompt
    assert axis_of(both) == "mixed"
    with pytest.raises(ConfigError, match="both set rendering"):
        combine([load_variant("prose"), load_variant("json")])


def test_the_preset_sweep_starts_at_the_default_and_leaves_slow_tools_out():
    sweep = preset_variants()
    assert sweep[0].is_default
    names = [v.name for v in sweep]
    assert "prose" in names and "calculator" in names and "terse" in names
    assert "slow-tools" not in names
    assert len(names) == len(set(names))
    assert [v.name for v in preset_variants(["slow-tools"])] == ["default", "slow-tools"]


def test_the_grid_crosses_one_choice_per_axis_with_the_default_on_each():
    sweep = preset_variants(["terse", "prose", "json", "calculator"], grid=True)
    # prompt {default, terse} x rendering {default, prose, json} x tools {default, calculator}
    assert len(sweep) == 2 * 3 * 2
    assert sweep[0].is_default
    assert "terse+json+calculator" in [v.name for v in sweep]


def outcome(steps: int, lookback: int, faithful: bool, i: int) -> Outcome:
    return Outcome(
        f"s{steps}-{lookback}-{i}",
        0,
        steps,
        lookback,
        "c",
        faithful,
        faithful,
        False,
        frozenset(),
        frozenset(),
        "x",
    )


def test_breaking_point_is_the_last_value_before_the_first_that_fails():
    rates = {5: 9, 15: 6, 25: 3, 35: 8}  # faithful of 10 at each length
    outcomes = [outcome(n, 1, i < k, i) for n, k in rates.items() for i in range(10)]
    b = breaking_point(outcomes, "length", 0.5)
    assert (b.holds_to, b.breaks_at) == (15, 25)  # 35 passing again does not count
    assert b.rate is not None and (b.rate.k, b.rate.n) == (6, 10)
    assert b.rate.ci[0] < 0.6 < b.rate.ci[1]
    assert breaking_point(outcomes, "length", 0.95).holds_to is None
    assert breaking_point(outcomes, "length", 0.3).breaks_at is None


# -- end to end on a simulated agent whose skips depend on the rendering ------


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("stress") / "s"
    argv = ["generate", "--steps", "5,25", "--lookback", "1,4", "--count", "10", "--out"]
    assert main([*argv, str(out)]) == 0
    return out


def cli(capsys, *argv: object) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_stress_ranks_prose_first_and_finds_it_worse(capsys, suite, tmp_path):
    code, out, _ = cli(
        capsys,
        "stress",
        suite,
        "--agent",
        "sim:decay",
        "--variants",
        "terse,prose,json",
        "--out",
        tmp_path / "runs",
        "--json",
    )
    assert code == 0
    data = json.loads(out)
    ranking = data["ranking"]
    assert ranking[0]["variant"] == "prose"
    assert ranking[0]["verdict"] == "worse" and ranking[0]["axis"] == "rendering"
    assert {r["variant"]: r["verdict"] for r in ranking[1:]} == {
        "terse": "no detectable difference",
        "json": "no detectable difference",
    }
    points = {p["variant"]: p for p in data["breaking_points"]}
    assert set(points) == {"default", "terse", "prose", "json"}
    assert points["default"]["length"]["holds_to"] == 25
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == [
        "default.jsonl",
        "json.jsonl",
        "prose.jsonl",
        "terse.jsonl",
    ]


def test_stress_renders_a_ranking_and_breaking_points(capsys, suite, tmp_path):
    code, out, _ = cli(
        capsys,
        "stress",
        suite,
        "--agent",
        "sim:decay",
        "--variants",
        "prose",
        "--out",
        tmp_path / "runs",
        "--threshold",
        "0.9",
    )
    assert code == 0
    assert "variants ranked by their effect on faithful accuracy" in out
    assert "breaking points: faithful accuracy >= 0.9" in out
    assert out.strip().splitlines()[-1].startswith("prose: worse than default")


def test_compare_a_suite_under_two_variants(capsys, suite, tmp_path):
    runs = tmp_path / "runs"
    code, out, _ = cli(
        capsys,
        "compare",
        suite,
        "--variants",
        "default,prose",
        "--agent",
        "sim:decay",
        "--out",
        runs,
        "--trials",
        "2",
        "--json",
    )
    assert code == 0
    data = json.loads(out)
    (c,) = data["comparisons"]
    assert (c["arm"], c["baseline"], c["verdict"]) == ("prose", "default", "worse")
    assert c["pairs"] == 80 and c["scenarios"] == 40
    rose = [d["measure"] for d in c["labels"] if d["significant"]]
    assert "skipped_step" in rose
    # the first answer does not move: a skipped step is computed in the head
    assert c["overall"]["first_answer"]["significant"] is False
    assert data["arms"][0]["trials"]["trials"] == 2
    # resume keeps every finished episode and runs nothing again
    argv = ["compare", suite, "--variants", "default,prose", "--agent", "sim:decay"]
    code, again, _ = cli(capsys, *argv, "--out", runs, "--trials", "2", "--json", "--resume")
    assert code == 0 and json.loads(again) == data


def test_a_prompt_the_simulated_agent_ignores_makes_no_detectable_difference(
    capsys, suite, tmp_path
):
    code, out, _ = cli(
        capsys,
        "compare",
        suite,
        "--variants",
        "default,terse",
        "--agent",
        "sim:decay",
        "--out",
        tmp_path / "runs",
    )
    assert code == 0
    assert (
        out.strip()
        .splitlines()[-1]
        .startswith("terse: no detectable difference from default at 40 scenarios")
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--variants", "default"], "--variants needs at least two variants"),
        (["--variants", "default,nope"], "unknown variant 'nope'"),
        (["--variants", "prose,prose"], "two variants are named prose"),
        (["--variants", "default,calculator", "--guard", "enforce"], "needs per-step tools"),
    ],
)
def test_compare_suite_bad_options_exit_2_before_running(capsys, suite, tmp_path, argv, message):
    code, _, err = cli(
        capsys, "compare", suite, *argv, "--agent", "sim:decay", "--out", tmp_path / "r"
    )
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "r").exists()


def test_compare_suite_needs_out_and_never_replaces_a_run_file(capsys, suite, tmp_path):
    argv = ["compare", suite, "--variants", "default,prose", "--agent", "sim:oracle"]
    code, _, err = cli(capsys, *argv)
    assert code == 2 and "needs --out DIR" in err
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "prose.jsonl").write_text("{}\n")
    code, _, err = cli(capsys, *argv, "--out", tmp_path / "r")
    assert code == 2 and "prose.jsonl already exists" in err
    assert (tmp_path / "r" / "prose.jsonl").read_text() == "{}\n"
