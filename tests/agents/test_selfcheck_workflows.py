"""The self-check on declared workflows: every fault injector on the shipped workflows'
instances, labelled exactly as injected (every label and cause, precision and recall
1.0), from the library and from ``agentproc selfcheck --workflow`` and ``--suite``."""

from __future__ import annotations

import json

import pytest

from agentproc.agents.sim.selfcheck import run_selfcheck_on
from agentproc.cli import main
from agentproc.resources import folder
from agentproc.workflow.declared.suite import load_workflow, workflow_scenarios
from agentproc.workflow.variant import load_variant
from tests.helpers import cli

SHIPPED = sorted(folder("workflows").glob("*.toml"))
NAMED_CAUSES = ("propagated", "lookback_confusion", "stale_output")
ALWAYS = (
    "hallucinated_call",
    "invalid_arguments",
    "repeated_step",
    "reordered",
    "wrong_argument",
    "skipped_step",
    "premature_finish",
    "missing_answer",
    "wrong_answer",
    "answer_revised",
)


@pytest.mark.parametrize("order", ["listed", "dependency"])
@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_every_label_and_cause_scores_1_on_each_shipped_workflow(path, order):
    scenarios = workflow_scenarios(load_workflow(path), path.stem, count=100, seed=0)
    result = run_selfcheck_on(scenarios, seed=0, order=order)
    assert result.mismatches == []
    assert result.perfect
    for agent in ("sim:oracle", "sim:batched"):  # faithful on every instance
        assert (result.faithful[agent].episodes, result.faithful[agent].faithful) == (100, 100)
    for kind in ALWAYS:  # every label a workflow can show, with at least 5 true instances
        assert result.scores[kind].truth >= 5, kind
    if result.branched:  # its own injectors too; causes of branches, exits and answers
        assert result.episodes == 100 * 13
        assert result.scores["unneeded_step"].truth >= 20
        for kind in ("skipped_step", "unneeded_step", "premature_finish", "wrong_answer"):
            assert result.causes[f"{kind}:unsupported"].truth > 0, kind
        assert result.causes["propagated"].truth >= 5
        return
    assert result.episodes == 100 * 11
    for cause in NAMED_CAUSES:  # a wrong argument explained by each, on named variables
        assert result.causes[cause].truth >= 5, cause
    if order == "dependency":
        assert result.scores["unreturned_value"].truth > 0


@pytest.mark.parametrize("variant", ["random-names", "shuffled", "flaky-tools", "distractors"])
def test_the_selfcheck_holds_on_a_workflow_under_a_variant(variant):
    path = folder("workflows") / "invoice_approval.toml"
    scenarios = workflow_scenarios(load_workflow(path), path.stem, count=20, seed=3)
    result = run_selfcheck_on(scenarios, seed=3, variant=load_variant(variant))
    assert result.mismatches == [] and result.perfect


def test_selfcheck_workflow_on_the_command_line_is_perfect(capsys):
    path = folder("workflows") / "inventory_reorder.toml"
    argv = ["selfcheck", "--workflow", path, "--count", 30, "--order", "dependency", "--json"]
    code, out, _ = cli(capsys, *argv)
    assert code == 0
    result = json.loads(out)
    assert result["perfect"] is True and result["episodes"] == 30 * 11
    assert all(s["precision"] == s["recall"] == 1.0 for s in result["causes"].values())
    assert result["faithful"]["sim:batched"] == {"episodes": 30, "faithful": 30}


def test_selfcheck_says_how_many_episodes_of_the_faithful_agents_were_faithful(capsys):
    path = folder("workflows") / "hazard_class.toml"  # branched, format 2
    code, out, _ = cli(capsys, "selfcheck", "--workflow", path, "--count", 4, "--order", "listed")
    assert code == 0
    assert (
        "faithful episodes of the agents that make no mistake: sim:oracle 4 of 4, "
        "sim:batched 4 of 4"
    ) in " ".join(out.split())


def test_selfcheck_suite_reads_a_workflow_suite(tmp_path, capsys):
    suite = tmp_path / "invoices"
    path = folder("workflows") / "invoice_approval.toml"
    assert main(["generate", "--workflow", str(path), "--count", "8", "--out", str(suite)]) == 0
    capsys.readouterr()
    code, out, _ = cli(capsys, "selfcheck", "--suite", suite, "--count", 8, "--json")
    assert code == 0
    assert json.loads(out)["episodes"] == 8 * 11 and json.loads(out)["perfect"] is True
    code, out, _ = cli(capsys, "selfcheck", "--suite", suite, "--count", 2, "--json")
    assert json.loads(out)["episodes"] == 2 * 11


def test_selfcheck_refuses_the_calculator_on_a_workflow_in_one_line(capsys):
    path = folder("workflows") / "invoice_approval.toml"
    code, out, err = cli(capsys, "selfcheck", "--workflow", path, "--variant", "calculator")
    assert code == 2 and out == ""
    assert err.strip().splitlines() == [
        "agentproc: error: invoice_approval-0000: variant 'calculator' does not apply to a "
        "declared workflow (the calculator offers add, sub, mul and div; a declared step "
        "computes a formula, which no one of them is)"
    ]


def test_selfcheck_json_is_the_same_bytes_whatever_the_hash_seed():
    # Its causes are keyed in the order first met: met in a set's order, that changed
    # with each process's string hashing.
    import os
    import subprocess
    import sys

    path = folder("workflows") / "warehouse_inspection.toml"
    argv = [sys.executable, "-m", "agentproc", "selfcheck", "--workflow", str(path)]
    outs = {
        subprocess.run(
            [*argv, "--count", "10", "--json"],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            check=True,
        ).stdout
        for seed in ("1", "2", "3")
    }
    assert len(outs) == 1
