"""Reports of declared workflows speak in the workflow's steps: each step named by its
tool and output in the text report, its JSON, the HTML report, ``check`` and ``replay``;
tables and figures by workflow and by path, none by a length or look-back the suite
does not vary; and a section of the workflow's steps one by one."""

from __future__ import annotations

import csv
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from helpers import cli

from agentproc.cli import main
from agentproc.resources import folder
from agentproc.runs import read_run
from agentproc.workflow.declared.suite import load_workflow

INVOICE = folder("workflows") / "invoice_approval.toml"
REFUND = folder("workflows") / "refund_approval.toml"


def steps_of(path: Path) -> list[tuple[str, str]]:
    """A workflow file's steps as ``(tool, output)``, in order."""
    return [(s.tool, s.output) for s in load_workflow(path).steps]


def named(tool: str, output: str) -> str:
    return tool if tool == output else f"{tool} → {output}"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("workflow_report")
    out: dict[str, Path] = {}
    for name, path in (("invoice", INVOICE), ("refund", REFUND)):
        suite = root / name
        argv = ["generate", "--workflow", str(path), "--count", "8", "--out", str(suite)]
        assert main([*argv, *(["--balance", "paths"] if name == "refund" else [])]) == 0
        out[name] = suite
    pairs = (("invoice", "skipped_step"), ("invoice", "decay"), ("refund", "wrong_branch"))
    for suite, agent in pairs:
        run = out[f"{suite}-{agent}"] = root / f"{suite}-{agent}.jsonl"
        assert main(["run", str(out[suite]), "--agent", f"sim:{agent}", "--out", str(run)]) == 0
    return out


def report_json(capsys: Any, *runs: Path) -> dict[str, Any]:
    code, out, err = cli(capsys, "report", *runs, "--json")
    assert code == 0, err
    return json.loads(out)  # type: ignore[no-any-return]


def test_the_text_report_of_one_workflow_has_no_table_by_length_or_look_back(capsys, runs):
    code, out, _ = cli(capsys, "report", runs["invoice-skipped_step"], runs["invoice-decay"])
    assert code == 0
    assert "by length" not in out and "by look-back" not in out and "L=" not in out
    assert "dist:" not in out  # the realised look-back stands only beside a look-back
    assert "all episodes" in out  # the rates, labels and execution measures still shown


def test_the_text_report_lists_each_step_by_its_tool_with_its_accuracy(capsys, runs):
    _, out, _ = cli(capsys, "report", runs["invoice-skipped_step"], "--json")
    per_step = json.loads(out)["agents"]["sim:skipped_step"]["per_step"]
    code, out, _ = cli(capsys, "report", runs["invoice-skipped_step"])
    assert code == 0
    section = out[out.index("by step") : out.index("legend")]
    rows = [r.split("│")[1:6] for r in section.splitlines() if r.startswith("│")]
    assert [(int(k), s.strip()) for k, s, *_ in rows] == [
        (k, named(*step)) for k, step in enumerate(steps_of(INVOICE), start=1)
    ]
    for (_, _, ran, acc, left), p, h in zip(
        rows, per_step["accuracy_by_position"], per_step["hazard"], strict=True
    ):  # the figures the JSON gives, computed once
        assert int(ran) == p["executed"] and acc.strip().startswith(f"{p['value']:.3f} [")
        assert int(left) == h["events"]
    median = per_step["median_survival_step"]
    tool, output = steps_of(INVOICE)[median["step"] - 1]
    line = "sim:skipped_step: median step of leaving the procedure (Kaplan-Meier): "
    assert f"{line}{median['step']} ({named(tool, output)}) [" in " ".join(out.split())
    assert "step acc: share of the episodes that ran the step" in " ".join(out.split())


def test_the_headline_names_the_median_step_of_the_first_divergence(capsys, runs):
    data = report_json(capsys, runs["invoice-skipped_step"])
    step = data["agents"]["sim:skipped_step"]["overall"]["first_divergence"]["median_step"]
    code, out, _ = cli(capsys, "report", runs["invoice-skipped_step"])
    assert code == 0
    assert f"median step {step} ({named(*steps_of(INVOICE)[step - 1])}), on" in " ".join(
        out.split()
    )


def test_json_adds_each_steps_tool_and_output_beside_its_number(capsys, runs):
    agent = report_json(capsys, runs["invoice-skipped_step"])["agents"]["sim:skipped_step"]
    steps = steps_of(INVOICE)
    assert agent["step_names"] == {
        str(k): {"tool": t, "output": o} for k, (t, o) in enumerate(steps, start=1)
    }
    per = agent["per_step"]
    for key in ("accuracy_by_position", "survival", "hazard"):
        for p in per[key]:  # the number kept, the names added
            assert (p["step_tool"], p["step_output"]) == steps[p["step"] - 1]
    median = per["median_survival_step"]
    assert (median["step_tool"], median["step_output"]) == steps[median["step"] - 1]
    div = agent["overall"]["first_divergence"]
    assert (div["median_step_tool"], div["median_step_output"]) == steps[div["median_step"] - 1]
    (wf,) = agent["by_workflow"]
    assert wf["workflow"] == "invoice_approval" and wf["n"] == agent["overall"]["n"]


def test_a_report_of_two_workflows_has_tables_by_workflow_and_paths_within_them(capsys, runs):
    both = (runs["invoice-decay"], runs["refund-wrong_branch"])
    code, out, _ = cli(capsys, "report", *both)
    assert code == 0
    table = out[out.index("by workflow") :]
    assert "invoice_approval" in table and "refund_approval" in table
    paths = out[out.index("by path") :].split("└")[0]
    assert "workflow" in paths and "refund_approval" in paths and "exit:outside_window" in paths
    data = report_json(capsys, *both)
    (path,) = {p["workflow"] for p in data["agents"]["sim:wrong_branch"]["by_path"]}
    assert path == "refund_approval"
    assert "by_workflow" in data["agents"]["sim:decay"]


def test_check_names_a_forbidden_labels_step_by_its_tool(capsys, runs):
    run = runs["invoice-skipped_step"]
    code, out, _ = cli(capsys, "check", run, "--labels", "skipped_step")
    assert code == 1
    text = " ".join(out.split())
    places = re.findall(r"skipped_step at step (\d+) \(([^)]*)\) in \d+ scenario", text)
    assert places, text
    steps = steps_of(INVOICE)
    assert all(name == named(*steps[int(k) - 1]) for k, name in places)


def test_replay_names_the_first_divergence_and_the_skipped_steps(capsys, runs):
    run = runs["invoice-skipped_step"]
    _, rec = next(iter(read_run(run)))
    div = rec["metrics"]["first_divergence"]
    assert div is not None and div["step"] is not None
    step = named(*steps_of(INVOICE)[div["step"] - 1])
    code, out, _ = cli(capsys, "replay", run, "--episode", rec["scenario_id"])
    assert code == 0
    assert f"at step {div['step']} ({step}): {div['label']}" in out
    code, out, _ = cli(capsys, "replay", run, "--episode", rec["scenario_id"], "--json")
    data = json.loads(out)
    shown = data["metrics"]["first_divergence"]
    assert (
        shown["step"] == div["step"] and shown["step_tool"] == steps_of(INVOICE)[div["step"] - 1][0]
    )
    assert all("step_output" in lab for lab in data["labels"] if lab["step"] is not None)


def test_the_csv_tables_name_the_divergence_step(capsys, runs, tmp_path):
    code, _, err = cli(capsys, "report", runs["invoice-skipped_step"], "--csv", tmp_path / "t")
    assert code == 0, err
    with open(tmp_path / "t" / "episodes.csv", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    steps = steps_of(INVOICE)
    for row in rows:
        k = int(row["divergence_step"])
        assert (row["divergence_tool"], row["divergence_output"]) == steps[k - 1]


def test_the_html_report_names_the_steps_and_draws_by_workflow(capsys, runs, tmp_path):
    page = tmp_path / "r.html"
    both = (runs["invoice-skipped_step"], runs["refund-wrong_branch"])
    code, _, err = cli(capsys, "report", *both, "--html", page)
    assert code == 0, err
    html = page.read_text(encoding="utf-8")
    for gone in ("Faithful accuracy by length", "by look-back", "Where the first divergence"):
        assert gone not in html
    assert "Accuracy by workflow" in html and "Accuracy by path" in html
    assert "<h2>Workflows</h2>" in html
    assert "step of the workflow" in html  # the per-step figures' axis, by name
    for _, output in steps_of(INVOICE):
        assert f">{output}</text>" in html or f">{output[:13]}…</text>" in html
    data = json.loads(re.search(r"id='data'>(.*?)</script>", html, re.S).group(1))  # type: ignore[union-attr]
    rows = data["rows"]
    invoice = rows["cell_names"].index("invoice_approval")
    assert rows["step_names"][invoice] == [list(s) for s in steps_of(INVOICE)]
    worst = re.search(r"class='worst'>.*?</span> at (step \d+ \([^)]*\))", html)
    assert worst is not None  # the worst first divergence, its step named


def test_a_workflow_suite_that_moved_reports_its_steps_by_number_and_says_why(
    capsys, runs, tmp_path
):
    suite = tmp_path / "gone"
    shutil.copytree(runs["invoice"], suite)
    run = tmp_path / "run.jsonl"
    assert main(["run", str(suite), "--agent", "sim:skipped_step", "--out", str(run)]) == 0
    shutil.rmtree(suite)
    capsys.readouterr()
    code, out, err = cli(capsys, "report", run)
    assert code == 0
    assert "invoice_approval: its steps are shown by number" in " ".join(err.split())
    section = out[out.index("by step") : out.index("legend")]
    assert "→" not in section and "line_amount_a" not in section


def test_after_a_pre_fill_the_agents_own_steps_are_named_from_its_first_own_step(
    capsys, runs, tmp_path
):
    run = tmp_path / "prefill.jsonl"
    argv = ["run", runs["invoice"], "--agent", "sim:skipped_step", "--variant", "prefill-clean"]
    assert cli(capsys, *argv, "--out", run)[0] == 0
    _, rec = next(iter(read_run(run)))
    given = rec["metrics"]["given_steps"]
    assert given > 0
    agent = next(iter(report_json(capsys, run)["agents"].values()))
    steps = steps_of(INVOICE)
    assert agent["step_names"]["1"] == dict(zip(("tool", "output"), steps[given], strict=True))
    first = agent["per_step"]["accuracy_by_position"][0]
    assert (first["step"], first["step_tool"]) == (1, steps[given][0])
