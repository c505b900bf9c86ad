"""A suite of several declared workflows: ``generate --workflow A --workflow B`` and the
shipped ``--preset sop``, run and reported per workflow and per path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentproc.cli import main
from agentproc.resources import folder
from agentproc.workflow.declared.suite import PRESETS


def cli(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def shipped(name: str) -> Path:
    return folder("workflows") / f"{name}.toml"


def test_the_sop_preset_is_one_suite_of_every_shipped_branched_workflow(tmp_path, capsys):
    out = tmp_path / "sop"
    code, printed, err = cli(
        capsys, "generate", "--preset", "sop", "--count", "5", "--balance", "paths", "--out", out
    )
    assert code == 0, err
    names = list(PRESETS["sop"])
    assert f"wrote {5 * len(names)} instances of {len(names)} workflows to {out}:" in printed
    assert "order_fulfilment: 5 instances (11 steps, 1 dead)" in printed
    manifest = json.loads((out / "suite.json").read_text())
    assert manifest["workflows"] == names and "workflow" not in manifest
    assert sorted(json.loads((out / "workflows.json").read_text())) == names
    assert not (out / "workflow.json").exists()
    lines = [json.loads(x) for x in (out / "scenarios.jsonl").read_text().splitlines()]
    assert [x["params"]["cell"] for x in lines] == [n for n in names for _ in range(5)]
    assert len({x["id"] for x in lines}) == len(lines)
    # every shipped workflow of format 2, so that the preset follows what ships
    branched = sorted(
        p.stem for p in folder("workflows").glob("*.toml") if "format = 2" in p.read_text()
    )
    assert names == branched


def test_a_suite_of_several_workflows_runs_and_reports_each_path_by_workflow(tmp_path, capsys):
    suite, run = tmp_path / "two", tmp_path / "run.jsonl"
    argv = ["generate", "--workflow", shipped("refund_approval"), "--workflow"]
    argv += [shipped("warehouse_inspection"), "--count", "10", "--balance", "paths"]
    code, printed, err = cli(capsys, *argv, "--out", suite)
    assert code == 0, err
    assert "refund_approval:base 2" in printed and "warehouse_inspection:base 2" in printed
    assert cli(capsys, "run", suite, "--agent", "sim:oracle", "--out", run)[0] == 0
    code, printed, _ = cli(capsys, "report", run, "--json")
    assert code == 0
    agent = json.loads(printed)["agents"]["sim:oracle"]
    paths = {row["path"] for row in agent["by_path"]}
    assert {"refund_approval: base", "warehouse_inspection: base"} <= paths
    assert "base" not in paths  # the two workflows' base paths are told apart


def test_one_workflow_keeps_its_suite_and_path_names(tmp_path, capsys):
    suite, run = tmp_path / "one", tmp_path / "run.jsonl"
    argv = ["generate", "--workflow", shipped("refund_approval"), "--count", "5", "--out", suite]
    assert cli(capsys, *argv)[0] == 0
    manifest = json.loads((suite / "suite.json").read_text())
    assert manifest["workflow"] == "refund_approval" and "workflows" not in manifest
    assert (suite / "workflow.json").exists() and not (suite / "workflows.json").exists()
    assert cli(capsys, "run", suite, "--agent", "sim:oracle", "--out", run)[0] == 0
    agent = json.loads(cli(capsys, "report", run, "--json")[1])["agents"]["sim:oracle"]
    assert all(
        ":" not in row["path"] or row["path"].startswith("exit:") for row in agent["by_path"]
    )


@pytest.mark.parametrize(
    ("workflows", "extra", "message"),
    [
        (["refund_approval", "refund_approval"], [], "refund_approval' is given twice"),
        (["invoice_approval", "payroll"], ["--balance", "paths"], "one path each"),
    ],
)
def test_a_bad_suite_of_workflows_is_one_line_and_nothing_written(
    tmp_path, capsys, workflows, extra, message
):
    out = tmp_path / "bad"
    argv: list[object] = ["generate", *[x for n in workflows for x in ("--workflow", shipped(n))]]
    code, _, err = cli(capsys, *argv, *extra, "--out", out)
    assert code == 2 and message in err and err.count("\n") == 1
    assert not out.exists()


def test_an_unknown_preset_names_the_suites_of_workflows_too(tmp_path, capsys):
    code, _, err = cli(capsys, "generate", "--preset", "sops", "--out", tmp_path / "x")
    assert code == 2 and "expected one of: quick, reference, sop" in err
