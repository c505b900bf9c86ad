"""The run-file line: episode records, the JSON Schema generated from them, and calls."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from helpers import step, submit, tiny_scenario
from jsonschema import Draft202012Validator

from agentproc.agents.sim import SIM_AGENTS, run_sim_episode
from agentproc.errors import StoredCallError
from agentproc.procedures import Cell, generate_procedure, preset, procedure_record, write_suite
from agentproc.runs import EpisodeSession, episode_record, record_mode, run_schema
from agentproc.runs.layout import line_of
from agentproc.workflow import (
    FINISH_TOOL,
    CallRecord,
    Scenario,
    Toolkit,
    build_workflow,
    load_scenarios,
    scenario_of,
)

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "schemas" / "run.schema.json"
SCHEMA_V1 = ROOT / "schemas" / "run-v1.schema.json"
RECORDED = sorted((ROOT / "scenarios" / "recorded").glob("*.jsonl"))
UPDATE = os.environ.get("AGENTPROC_UPDATE_GOLDEN") == "1"


def validator(schema: Path = SCHEMA) -> Draft202012Validator:
    return Draft202012Validator(json.loads(schema.read_text(encoding="utf-8")))


def line(rec: Any) -> dict[str, Any]:
    """A record as its run-file line stores it."""
    return json.loads(line_of(rec))


def sim_record(agent: str, i: int = 0, **options: Any) -> dict[str, Any]:
    """The run-file line of a simulated episode, as it is written."""
    scenario = scenario_of(generate_procedure(Cell(steps=5), 0, i))
    return line(episode_record(run_sim_episode(scenario, agent, **options)))


def errors(rec: Any, schema: Path = SCHEMA) -> list[str]:
    return [e.message for e in validator(schema).iter_errors(rec)]


def recorded_lines() -> list[Any]:
    return [
        pytest.param(path, n, id=f"{path.name}:{n}")
        for path in RECORDED
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if line.strip()
    ]


# -- the schema ----------------------------------------------------------------


def test_run_schema_file_is_generated_from_the_records():
    """``AGENTPROC_UPDATE_GOLDEN=1`` rewrites ``schemas/run.schema.json`` instead."""
    if UPDATE:
        SCHEMA.write_text(json.dumps(run_schema(), indent=2) + "\n", encoding="utf-8")
    assert json.loads(SCHEMA.read_text(encoding="utf-8")) == run_schema()


def test_run_schema_is_a_valid_draft_2020_12_schema():
    Draft202012Validator.check_schema(run_schema())
    assert run_schema()["$schema"] == "https://json-schema.org/draft/2020-12/schema"


@pytest.mark.parametrize("i", range(4))
@pytest.mark.parametrize("agent", ["sim:decay", "sim:wrong_argument"])
def test_a_simulated_episode_record_validates(agent: str, i: int):
    assert errors(sim_record(agent, i)) == []


@pytest.mark.parametrize("agent", sorted(SIM_AGENTS))
def test_every_simulated_agent_writes_records_that_validate(agent: str):
    assert errors(sim_record(agent, 1, guard="enforce")) == []


def test_a_text_mode_record_validates():
    s = EpisodeSession(tiny_scenario(), "mine", mode="text")
    s.read_text("S3 = 5\nS4 = 15\nAnswer: 3")
    rec = line(episode_record(s.finish("answer")))
    assert errors(rec) == []
    assert record_mode(rec) == "text" and rec["output"].startswith("S3 = 5")


def test_there_is_a_recorded_run():
    assert RECORDED


@pytest.mark.parametrize(("path", "n"), recorded_lines())
def test_every_recorded_line_validates_against_the_schema_of_its_version(path: Path, n: int):
    rec = json.loads(path.read_text(encoding="utf-8").splitlines()[n - 1])
    assert errors(rec, SCHEMA if rec["schema_version"] >= 2 else SCHEMA_V1) == []


def test_a_record_with_an_unknown_top_level_field_fails_validation():
    rec = sim_record("sim:oracle")
    assert errors(rec) == []
    assert errors({**rec, "surprise": 1}) != []


def test_a_record_without_a_required_field_fails_validation():
    rec = sim_record("sim:oracle")
    del rec["verdict"]
    assert errors(rec) != []


def test_a_label_with_an_unknown_attribute_fails_validation():
    rec = sim_record("sim:wrong_argument")
    rec["labels"][0]["colour"] = "red"
    assert errors(rec) != []


def test_an_unknown_verdict_fails_validation():
    assert errors({**sim_record("sim:oracle"), "verdict": "great"}) != []


# -- episode_record ------------------------------------------------------------


def test_episode_record_holds_the_episode():
    scenario = scenario_of(generate_procedure(Cell(steps=5), 0, 0))
    ep = run_sim_episode(scenario, "sim:wrong_argument")
    rec = episode_record(ep)
    assert rec["scenario_id"] == scenario.id and rec["agent"] == "sim:wrong_argument"
    assert rec["cell"] == scenario.params.cell and rec["mode"] == "tools"
    assert rec["verdict"] == ep.metrics["verdict"] and rec["metrics"] == ep.metrics
    assert rec["labels"] == [lab.to_json() for lab in ep.labels]
    assert rec["injected"] == [lab.to_json() for lab in ep.injected or []]
    assert len(rec["calls"]) == len(ep.calls)


def test_a_generated_scenario_is_stored_as_its_compact_procedure():
    p = generate_procedure(Cell(steps=5), 0, 0)
    rec = sim_record("sim:oracle")
    assert rec["procedure"] == procedure_record(p)
    assert "scenario" not in rec and "scenario_ref" not in rec


def test_a_scenario_read_from_a_suite_is_stored_by_reference(tmp_path: Path):
    suite = tmp_path / "suite"
    write_suite(preset("quick").model_copy(update={"count": 1}), suite)
    scenario = next(iter(load_scenarios(suite)))
    rec = line(episode_record(run_sim_episode(scenario, "sim:oracle")))
    ref = rec["scenario_ref"]
    assert ref["suite"] == str(suite.resolve())
    first = (suite / "procedures.jsonl").read_text().splitlines()[0]
    assert ref["sha256"] == hashlib.sha256(first.encode()).hexdigest()
    assert "procedure" not in rec and "scenario" not in rec
    whole = line(episode_record(run_sim_episode(scenario, "sim:oracle"), self_contained=True))
    assert whole["procedure"] == json.loads(first) and "scenario_ref" not in whole
    # the fingerprint in the head is the reference's digest, however the scenario is kept
    assert rec["scenario_sha256"] == whole["scenario_sha256"] == ref["sha256"]
    assert list(rec).index("scenario_sha256") < list(rec).index("calls")


def test_a_run_with_settings_writes_them_in_the_head_after_the_name():
    ep = run_sim_episode(tiny_scenario(), "sim:decay", seed=3)
    rec = line(episode_record(ep, name="v1", settings={"seed": 3}))
    keys = list(rec)
    assert rec["settings"] == {"seed": 3}
    assert keys.index("name") < keys.index("settings") < keys.index("mode")
    assert "settings" not in line(episode_record(ep))  # nothing set, nothing written


def test_a_scenario_not_compiled_from_a_procedure_is_stored_whole_without_tools_and_prompt():
    written = Scenario.model_validate(tiny_scenario().model_dump())  # as a scenario file gives it
    rec = line(episode_record(run_sim_episode(written, "sim:oracle")))
    assert "tools" not in rec["scenario"] and "prompt" not in rec["scenario"]
    assert rec["scenario"]["steps"] and "procedure" not in rec


def test_the_line_keeps_the_head_then_calls_then_scenario_then_bulk():
    rec = sim_record("sim:wrong_argument")
    keys = list(rec)
    assert keys[0] == "schema_version" and rec["schema_version"] == 2
    assert keys.index("labels") < keys.index("calls") < keys.index("procedure")
    assert keys[-1] == "bulk" and len(rec["bulk"]["results"]) == len(rec["calls"])
    assert all(len(c) == 5 for c in rec["calls"])


def test_record_mode_of_a_record_without_a_mode_is_tools():
    rec = sim_record("sim:oracle")
    del rec["mode"]
    assert record_mode(rec) == "tools"


# -- CallRecord.to_json / from_json --------------------------------------------


def executed(*calls: tuple[str, Any]) -> tuple[list[CallRecord], int]:
    wf = build_workflow(tiny_scenario())
    tk = Toolkit(wf)
    return [tk.call(name, args) for name, args in calls], wf.scale


def round_trip(rec: CallRecord, scale: int) -> CallRecord:
    return CallRecord.read(rec.to_json(scale), rec.index, scale, FINISH_TOOL)


def test_a_step_call_round_trips():
    [rec], scale = executed(step(1))
    back = round_trip(rec, scale)
    assert back == rec
    assert back.value == 5000 and back.step == 1 and back.args == {"S1": 2, "S2": 3}


def test_a_wrong_step_call_round_trips_with_its_value():
    recs, scale = executed(step(1), step(2, S3=4.5))
    assert round_trip(recs[1], scale) == recs[1]
    assert recs[1].to_json(scale)["value"] == 13.5


def test_a_finish_call_round_trips_with_its_answer():
    recs, scale = executed(*[step(k) for k in (1, 2, 3, 4)], submit(3))
    back = round_trip(recs[-1], scale)
    assert back == recs[-1]
    assert back.finish and back.answer == 3


@pytest.mark.parametrize(
    ("name", "arguments", "refused"),
    [
        ("calculator", "not json", "unknown_tool"),
        ("step_1", '{"S1": 2', "invalid_arguments"),
        ("step_1", "[1, 2]", "invalid_arguments"),
        ("step_4", {"S4": 15, "S3": 0}, "division_by_zero"),
    ],
)
def test_a_refused_call_round_trips(name: str, arguments: Any, refused: str):
    [rec], scale = executed((name, arguments))
    assert rec.refused == refused
    back = round_trip(rec, scale)
    assert replace(back, args=rec.args) == rec


def test_read_parses_the_arguments_again():
    [rec], scale = executed(step(1))
    d = {**rec.to_json(scale), "arguments": '{"S1": 7, "S2": 3}'}
    assert CallRecord.read(d, 0, scale, FINISH_TOOL).args == {"S1": 7, "S2": 3}


def test_read_uses_the_given_index_and_finish_tool():
    [rec], scale = executed(submit(3))
    back = CallRecord.read(rec.to_json(scale), 9, scale, "finish")
    assert back.index == 9 and back.finish is False


def test_to_json_leaves_out_an_answer_of_a_call_that_is_not_a_finish():
    [rec], scale = executed(step(1))
    assert "answer" not in rec.to_json(scale)


@pytest.mark.parametrize("arguments", ["[1, 2]", "3", '"text"', "{not json"])
def test_read_of_a_non_object_argument_string_on_an_executed_call_is_a_value_error(
    arguments: str,
):
    d = {"name": "step_1", "arguments": arguments, "result": "S3 = 5.000", "refused": None}
    with pytest.raises(ValueError, match="not a JSON object"):
        CallRecord.read(d, 0, 1000, FINISH_TOOL)


def test_reading_a_call_without_a_name_is_an_error_naming_the_call():
    with pytest.raises(StoredCallError, match="not a recorded call"):
        CallRecord.read({"arguments": "{}"}, 0, 1000, FINISH_TOOL)


def test_reading_a_name_that_is_not_a_string_is_an_error_naming_the_call():
    with pytest.raises(StoredCallError, match="not a recorded call"):
        CallRecord.read({"name": 3, "arguments": "{}"}, 0, 1000, FINISH_TOOL)
