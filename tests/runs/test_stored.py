"""The scenario of a stored episode of a declared workflow: referred to by its suite and
its ``scenarios.jsonl`` line's digest, as a procedure is by its line's; read back indexed
as the run indexed it."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from agentproc.agents.sim import run_sim_episode
from agentproc.analysis import relabel_run
from agentproc.errors import RunFileError
from agentproc.resources import folder
from agentproc.runs import RunWriter, episode_record, read_run, scenario_of_record
from agentproc.workflow import Scenario, build_workflow, load_scenarios
from agentproc.workflow.declared.suite import load_workflow, write_workflow_suite
from agentproc.workflow.runtime import declared_workflow

WORKFLOWS = sorted(folder("workflows").glob("*.toml"))
LINEAR = folder("workflows") / "etl_aggregation.toml"


def workflow_suite(out: Path, path: Path = LINEAR, count: int = 3) -> Path:
    write_workflow_suite(load_workflow(path), out, count=count, seed=0)
    return out


def write_run(suite: Path, out: Path, agent: str = "sim:decay", **options: bool) -> Path:
    with RunWriter(out) as writer:
        for i, scenario in enumerate(load_scenarios(suite)):
            writer.write(episode_record(run_sim_episode(scenario, agent, seed=i), **options))
    return out


def test_an_episode_of_a_workflow_suite_refers_to_its_scenario_line(tmp_path: Path):
    suite = workflow_suite(tmp_path / "suite")
    run = write_run(suite, tmp_path / "run.jsonl")
    lines = (suite / "scenarios.jsonl").read_bytes().splitlines()
    stored = [json.loads(line) for line in run.read_text(encoding="utf-8").splitlines()]
    for rec, line in zip(stored, lines, strict=True):
        assert rec["scenario_ref"] == {
            "suite": str(suite.resolve()),
            "sha256": hashlib.sha256(line).hexdigest(),
        }
        assert "scenario" not in rec and "procedure" not in rec


def test_a_self_contained_episode_of_a_workflow_suite_holds_its_scenario_whole(tmp_path: Path):
    suite = workflow_suite(tmp_path / "suite")
    run = write_run(suite, tmp_path / "run.jsonl", self_contained=True)
    first = json.loads((suite / "scenarios.jsonl").read_bytes().splitlines()[0])
    rec = json.loads(run.read_text(encoding="utf-8").splitlines()[0])
    assert rec["scenario"] == first and "scenario_ref" not in rec
    assert relabel_run(run).changed_episodes == 0  # and it reads as such files always did


def test_a_referenced_workflow_scenario_reads_back_as_the_run_ran_it(tmp_path: Path):
    suite = workflow_suite(tmp_path / "suite")
    run = write_run(suite, tmp_path / "run.jsonl")
    for (lineno, rec), scenario in zip(read_run(run), load_scenarios(suite), strict=True):
        back = scenario_of_record(run, lineno, rec)
        assert back.model_dump() == scenario.model_dump(exclude={"tools", "prompt"}) | {
            "tools": [],
            "prompt": "",
        }
    result = relabel_run(run)
    assert result.episodes == 3 and result.changed_episodes == 0


def test_a_moved_workflow_suite_is_found_with_suite_dir(tmp_path: Path):
    suite = workflow_suite(tmp_path / "suite")
    run = write_run(suite, tmp_path / "run.jsonl")
    moved = tmp_path / "moved"
    shutil.move(suite, moved)
    with pytest.raises(RunFileError, match=r"line 1: scenario_ref: .*the suite .* is not here"):
        relabel_run(run)
    assert relabel_run(run, suite=moved).changed_episodes == 0


def test_a_changed_scenario_line_is_refused_naming_scenario_ref_sha256(tmp_path: Path):
    suite = workflow_suite(tmp_path / "suite")
    run = write_run(suite, tmp_path / "run.jsonl")
    target = suite / "scenarios.jsonl"
    lines = target.read_text(encoding="utf-8").splitlines(keepends=True)
    data = json.loads(lines[1])
    data["answer"] = data["answer"] + 1
    lines[1] = json.dumps(data, separators=(",", ":")) + "\n"
    target.write_text("".join(lines), encoding="utf-8")
    with pytest.raises(RunFileError) as caught:
        relabel_run(run)
    text = str(caught.value)
    assert "line 2: scenario_ref.sha256" in text and "holds another scenario" in text


def test_a_referenced_line_of_another_shape_is_refused_naming_its_field(tmp_path: Path):
    # A suite line the run could not have read, with a run file made to match it: the
    # error names the field, as reading the line as a scenario does.
    suite = workflow_suite(tmp_path / "suite", count=1)
    run = write_run(suite, tmp_path / "run.jsonl")
    target = suite / "scenarios.jsonl"
    data = json.loads(target.read_bytes())
    del data["tolerance"]
    line = json.dumps(data, separators=(",", ":")).encode()
    target.write_bytes(line + b"\n")
    rec = json.loads(run.read_bytes())
    rec["scenario_ref"]["sha256"] = hashlib.sha256(line).hexdigest()
    run.write_text(json.dumps(rec, separators=(",", ":")) + "\n", encoding="utf-8")
    with pytest.raises(
        RunFileError, match=r"scenarios.jsonl: id .*-0000: tolerance: Field required"
    ):
        relabel_run(run)


@pytest.mark.parametrize("path", WORKFLOWS, ids=[p.stem for p in WORKFLOWS])
def test_a_scenario_line_indexes_as_its_validated_scenario_does(tmp_path: Path, path: Path):
    suite = workflow_suite(tmp_path / "suite", path, count=5)
    for line in (suite / "scenarios.jsonl").read_bytes().splitlines():
        scenario = Scenario.model_validate_json(line)
        model = build_workflow(scenario)
        fast = declared_workflow(json.loads(line), lambda s=scenario: s)  # type: ignore[misc]
        assert fast == model
        assert (fast.live, fast.depends_on, fast.var_names) == (
            model.live,
            model.depends_on,
            model.var_names,
        )
        assert fast.expected_calls() == model.expected_calls()
