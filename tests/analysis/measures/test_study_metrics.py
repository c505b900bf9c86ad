"""The reference study's measures, the knobs a report groups by, and what the report
counts once: tested on episodes whose answers are known."""

from __future__ import annotations

import io
import json
from pathlib import Path

from rich.console import Console

from agentproc.agents.sim import run_sim_episode
from agentproc.analysis import aggregate, report_json
from agentproc.cli import main
from agentproc.cli.output import print_json
from agentproc.procedures import Cell, generate_procedure
from agentproc.runs import RunWriter, episode_record
from agentproc.workflow import scenario_of


def records(agent: str, n: int = 10, **cell: object) -> list[dict]:
    c = Cell(steps=6, lookback=3, **cell)  # type: ignore[arg-type]
    return [
        episode_record(run_sim_episode(scenario_of(generate_procedure(c, 0, i)), agent))
        for i in range(n)
    ]  # type: ignore[misc]


def overall(agent: str):
    return aggregate(records(agent)).agents[agent].overall


def test_an_oracle_executes_every_step_exactly():
    s = overall("sim:oracle")
    assert (s.exact_steps, s.under_executed, s.over_executed) == (10, 0, 0)
    assert s.rate("exact_step_rate")[0] == 1.0


def test_a_skipped_step_is_under_execution_and_not_exact():
    s = overall("sim:skipped_step")
    assert (s.exact_steps, s.under_executed, s.over_executed) == (0, 10, 0)


def test_repeats_and_invented_steps_are_over_execution():
    assert overall("sim:repeated_step").over_executed == 10
    assert overall("sim:hallucinated_call").over_executed == 10


def test_missing_and_premature_answers_are_counted_per_episode():
    assert overall("sim:missing_answer").missing_answer == 10
    premature = overall("sim:premature_finish")
    assert premature.premature_answer == 10 and premature.under_executed == 10


def test_self_correction_counts_episodes_that_fixed_a_wrong_value_or_answer():
    recs = records("sim:repeated_step", 40) + records("sim:answer_revised", 40)
    fixed = sum(any(lab.get("self_correction") for lab in r["labels"]) for r in recs)
    report = aggregate(recs)
    total = sum(a.overall.self_corrected for a in report.agents.values())
    assert total == fixed and 0 < fixed < 80


def test_every_study_rate_has_a_wilson_interval_in_the_json():
    data = report_json(aggregate(records("sim:skipped_step")))
    o = data["agents"]["sim:skipped_step"]["overall"]
    assert o["under_execution_rate"] == 1.0 and o["under_execution_ci"][0] > 0.6
    for name in ("exact_step", "over_execution", "missing_answer", "premature_answer"):
        assert f"{name}_rate" in o and len(o[f"{name}_ci"]) == 2


def test_groups_by_input_range_and_op_mix(tmp_path: Path, capsys):
    path = tmp_path / "r.jsonl"
    with RunWriter(path) as w:
        for rec in records("sim:oracle", 3, range=(0.0, 1.0)) + records(
            "sim:oracle", 2, ops="add+sub"
        ):
            w.write(rec)  # type: ignore[arg-type]
    assert main(["report", str(path), "--json"]) == 0
    agent = json.loads(capsys.readouterr().out)["agents"]["sim:oracle"]
    assert {g["range"]: g["n"] for g in agent["by_range"]} == {"0:1": 3, "1:10": 2}
    assert {g["ops"]: g["n"] for g in agent["by_ops"]} == {"add+sub": 2, "mixed": 3}
    assert main(["report", str(path), "--by", "range,ops"]) == 0
    out = capsys.readouterr().out
    assert {"by input range", "by op mix"} <= set(out.splitlines())
    assert "by length" not in out


def test_an_unknown_grouping_is_bad_input(tmp_path: Path, capsys):
    path = tmp_path / "r.jsonl"
    with RunWriter(path) as w:
        w.write(records("sim:oracle", 1)[0])  # type: ignore[arg-type]
    assert main(["report", str(path), "--by", "colour"]) == 2
    assert "unknown knob 'colour'" in capsys.readouterr().err


def test_a_file_given_twice_counts_once_with_a_warning(tmp_path: Path, capsys):
    path = tmp_path / "r.jsonl"
    with RunWriter(path) as w:
        for rec in records("sim:decay", 5):
            w.write(rec)  # type: ignore[arg-type]
    assert main(["report", str(path), str(path), "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["episodes"] == 5
    assert "5 records were superseded" in captured.err


def test_json_output_is_strict_json():
    buffer = io.StringIO()
    print_json(Console(file=buffer), {"a": float("nan"), "b": [float("inf"), 1.5]})
    assert json.loads(buffer.getvalue(), parse_constant=lambda c: 1 / 0) == {
        "a": None,
        "b": [None, 1.5],
    }
