"""The stress sweep: which axis a variant changes, combinations, rankings, breaking points."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import last_paragraph

from agentproc.analysis.measures.trials import Outcome
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


def test_a_length_holds_while_its_lower_bound_clears_the_threshold_and_breaks_below_the_upper():
    rates = {5: 90, 15: 70, 25: 45, 35: 20, 45: 80}  # faithful of 100 at each length
    outcomes = [outcome(n, 1, i < k, i) for n, k in rates.items() for i in range(100)]
    b = breaking_point(outcomes, "length", 0.5)
    # 45 of 100 is [0.35, 0.55]: neither holds nor breaks; 20 of 100 breaks; 80 after it
    # does not count
    assert (b.holds_to, b.breaks_at) == (15, 35)
    assert b.rate is not None and (b.rate.k, b.rate.n) == (70, 100)
    assert b.rate.ci[0] >= 0.5
    assert breaking_point(outcomes, "length", 0.95).holds_to is None
    assert breaking_point(outcomes, "length", 0.1).breaks_at is None


def test_a_point_estimate_above_the_threshold_does_not_hold_when_its_interval_reaches_below():
    # 11 of 20 is 0.55 [0.34, 0.74]: the old rule said "holds to 15" on it
    outcomes = [outcome(n, 1, i < (20 if n == 5 else 11), i) for n in (5, 15) for i in range(20)]
    b = breaking_point(outcomes, "length", 0.5)
    assert (b.holds_to, b.breaks_at) == (5, None)


def test_breaking_points_are_found_per_lookback_not_pooled_over_them():
    rates = {(5, 1): 95, (25, 1): 95, (5, 4): 95, (25, 4): 10}
    outcomes = [outcome(n, lb, i < k, i) for (n, lb), k in rates.items() for i in range(100)]
    b = breaking_point(outcomes, "length", 0.5)
    walks = {w.at: (w.holds_to, w.breaks_at) for w in b.walks}
    assert walks == {1: (25, None), 4: (5, 25)}
    # pooled, 25 steps would be 0.525: the summary is the walk that breaks
    assert (b.holds_to, b.breaks_at) == (5, 25)
    assert {w["at"] for w in b.to_json()["per"]} == {1, 4}


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
    # ten scenarios a cell: 25 steps is not shown to hold, nor to break
    assert (points["default"]["length"]["holds_to"], points["default"]["length"]["breaks_at"]) == (
        5,
        None,
    )
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
    assert "variants ranked by their effect on faithful and first-answer accuracy" in out
    assert "breaking points: a value holds while faithful accuracy's 95% interval is at" in out
    assert last_paragraph(out).startswith("prose: worse than default")


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
    assert last_paragraph(out).startswith(
        "terse: no detectable difference from default at 40 scenarios"
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


def _record(sid: str, variant: str, correct: bool, faithful: bool = True) -> dict[str, object]:
    verdict = ("faithful" if faithful else "unfaithful_correct") if correct else "wrong"
    return {
        "scenario_id": sid,
        "agent": "sim:x",
        "variant": variant,
        "cell": "n5-L1",
        "params": {"steps": 5, "lookback": 1},
        "metrics": {"first_answer_correct": correct},
        "verdict": verdict,
        "labels": [] if verdict != "unfaithful_correct" else [{"kind": "skipped_step"}],
        "stop_reason": "answer",
    }


def test_stress_verdicts_agree_with_the_holm_corrected_ranking_on_both_measures():
    # terse loses 6 of 40 on both measures (raw p = 0.031); Holm over two measures of
    # three variants makes it 6 x 0.031 = 0.19
    from agentproc.analysis.compare.arms import compare_records
    from agentproc.experiments.stress import stress_result

    records = [_record(f"s{i}", "default", True) for i in range(40)]
    records += [_record(f"s{i}", "terse", i >= 6) for i in range(40)]
    records += [_record(f"s{i}", v, True) for v in ("json", "prose") for i in range(40)]
    compared = compare_records(records)
    result = stress_result(compared, [load_variant(n) for n in ("terse", "json", "prose")], 0.5)
    terse = result.ranking[0]
    assert terse.variant == "terse"
    for e in (terse.faithful, terse.first_answer):
        assert e.p == pytest.approx(0.03125) and e.p_holm == pytest.approx(0.1875)
        assert e.verdict == "no detectable difference" and e.ci is not None
        assert e.ci[0] < 0 < e.ci[1] and e.level == pytest.approx(1 - 0.05 / 6)
    assert terse.verdict == "no detectable difference" and terse.flagged == []
    assert terse.line("default").startswith("terse: no detectable difference from default")


def test_stress_flags_a_first_answer_collapse_when_faithful_accuracy_is_zero_in_both_arms():
    # nobody is faithful; "prose" wrecks 26 of 30 right answers
    from agentproc.analysis.compare.arms import compare_records
    from agentproc.experiments.stress import stress_result

    records = [_record(f"s{i}", "default", True, faithful=False) for i in range(30)]
    records += [_record(f"s{i}", "prose", i >= 26, faithful=False) for i in range(30)]
    records += [_record(f"s{i}", "terse", True, faithful=False) for i in range(30)]
    compared = compare_records(records)
    result = stress_result(compared, [load_variant(n) for n in ("prose", "terse")], 0.5)
    prose, terse = result.ranking
    assert prose.variant == "prose" and terse.variant == "terse"
    assert (prose.faithful.baseline, prose.faithful.variant, prose.faithful.diff) == (0, 0, 0)
    assert prose.faithful.verdict == "no detectable difference"
    answer = prose.first_answer
    assert answer.diff == pytest.approx(-26 / 30) and answer.verdict == "worse"
    assert answer.p_holm < 1e-6 and answer.ci is not None and answer.ci[1] < 0
    assert prose.verdict == "worse" and prose.flagged == ["first_answer"]
    assert prose.line("default").startswith(
        "prose: worse than default (collapse in first-answer accuracy): faithful accuracy "
        "0.0% -> 0.0%"
    )
    data = result.to_json()["ranking"][0]
    assert (data["verdict"], data["flagged"]) == ("worse", ["first_answer"])
    assert data["first_answer"]["verdict"] == "worse" and data["faithful"]["diff"] == 0


def test_a_ranked_variants_json_heads_with_its_faithful_figures_then_both_effects():
    from agentproc.analysis.compare.arms import compare_records
    from agentproc.experiments.stress import stress_result

    records = [_record(f"s{i}", "default", True) for i in range(30)]
    records += [_record(f"s{i}", "prose", i >= 20, faithful=i >= 20) for i in range(30)]
    result = stress_result(compare_records(records), [load_variant("prose")], 0.5)
    data = result.to_json()["ranking"][0]
    f = result.ranking[0].faithful
    assert list(data) == [
        "variant", "axis", "baseline", "faithful_accuracy", "diff", "ci", "p", "p_holm",
        "verdict", "method", "flagged", "faithful", "first_answer",
    ]  # fmt: skip
    assert (data["baseline"], data["faithful_accuracy"], data["diff"]) == (1.0, 0.3333, -0.6667)
    assert data["ci"] == [round(x, 4) for x in f.ci]  # type: ignore[union-attr]
    assert (data["p"], data["p_holm"], data["method"]) == (f.p, f.p_holm, f.method)


def test_every_ranked_interval_excludes_zero_exactly_when_its_verdict_is_not_null():
    from agentproc.analysis.compare.arms import compare_records
    from agentproc.experiments.stress import stress_result

    records = [_record(f"s{i}", "default", True, faithful=i % 3 > 0) for i in range(40)]
    for v, cut in (("terse", 4), ("json", 9), ("prose", 14)):
        records += [_record(f"s{i}", v, i >= cut, faithful=i % 2 > 0) for i in range(40)]
    compared = compare_records(records)
    result = stress_result(compared, [load_variant(n) for n in ("terse", "json", "prose")], 0.5)
    verdicts = set()
    for r in result.ranking:
        for e in (r.faithful, r.first_answer):
            assert e.ci is not None
            verdicts.add(e.verdict)
            assert (e.ci[0] > 0 or e.ci[1] < 0) == (e.verdict != "no detectable difference")
    assert verdicts == {"worse", "no detectable difference"}


def test_stress_json_holds_one_verdict_per_variant_the_rankings():
    # prose wrecks first answers only: compare's own verdict (faithful accuracy, Holm
    # across arms) says no difference, the ranking (both measures) says worse
    from agentproc.analysis.compare.arms import compare_records
    from agentproc.experiments.stress import stress_result

    records = [_record(f"s{i}", "default", True, faithful=False) for i in range(30)]
    records += [_record(f"s{i}", "prose", i >= 26, faithful=False) for i in range(30)]
    records += [_record(f"s{i}", "terse", True, faithful=False) for i in range(30)]
    result = stress_result(
        compare_records(records), [load_variant(n) for n in ("prose", "terse")], 0.5
    )
    data = result.to_json()
    ranked = {r["variant"]: r["verdict"] for r in data["ranking"]}
    compared = {c["arm"]: c for c in data["compare"]["comparisons"]}
    assert ranked == {"prose": "worse", "terse": "no detectable difference"}
    assert {a: c["verdict"] for a, c in compared.items()} == ranked
    assert compared["prose"]["line"].startswith("prose: worse than default (collapse in")


def test_with_trials_a_collapse_is_flagged_among_many_variants():
    # 60 scenarios x 3 trials, the default faithful in about half the trials, one variant
    # in none, 251 others like the default (stress --grid makes 252): Holm's first level
    # is 0.05 / 504, below the smallest p a 2,000-resample test could give; the exact
    # test reaches it
    import random

    from agentproc.analysis.compare.arms import compare_records
    from agentproc.experiments.stress import stress_result

    rng = random.Random(5)
    base = {(i, t): rng.random() < 0.53 for i in range(60) for t in range(3)}
    names = ["broken", *(f"same{j}" for j in range(251))]
    records = []
    for variant in ["default", *names]:
        for (i, t), ok in base.items():
            rec = _record(f"s{i}", variant, True, faithful=ok and variant != "broken")
            records.append({**rec, "trial": t})
    result = stress_result(compare_records(records), [], 0.5)
    broken = next(r for r in result.ranking if r.variant == "broken")
    assert broken.faithful.method == "sign-flip permutation"
    assert broken.faithful.p_holm < 0.05 and broken.flagged == ["faithful"]
    assert all(r.verdict == "no detectable difference" for r in result.ranking if r is not broken)
