"""The version-2 line layout: what each part holds, that readers can cut it, and that
version-1 files (the committed recorded run) stay readable."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from helpers import records
from hypothesis import given, settings
from hypothesis import strategies as st

from agentproc.agents.sim import run_sim_episode
from agentproc.analysis import relabel_run, replay_record
from agentproc.errors import RunFileError
from agentproc.procedures import Cell, generate_procedure, preset, write_suite
from agentproc.runs import (
    EpisodeSession,
    RunWriter,
    ScenarioStore,
    episode_record,
    read_run,
    scenario_of_record,
)
from agentproc.runs.layout import dumps_read, line_of
from agentproc.runs.runfile import BULK_AT, CALLS_AT, expand, head_of, relabel_part_of
from agentproc.workflow import load_scenarios, scenario_of

ROOT = Path(__file__).resolve().parents[2]
RECORDED = ROOT / "scenarios" / "recorded" / "local-smollm2.jsonl"


def sim(agent: str = "sim:wrong_argument", i: int = 0) -> dict[str, Any]:
    scenario = scenario_of(generate_procedure(Cell(steps=6), 0, i))
    return dict(episode_record(run_sim_episode(scenario, agent)))


def written(rec: dict[str, Any]) -> dict[str, Any]:
    """A record as a reader gets it back from its line."""
    return expand(json.loads(line_of(rec)))


def test_a_record_read_back_from_its_line_is_the_record():
    rec = sim()
    back = written(rec)
    assert back["calls"] == rec["calls"]
    assert back["injected"] == rec["injected"] and back["labels"] == rec["labels"]
    assert {k: v for k, v in back.items() if v is not None} == {
        k: v for k, v in rec.items() if v is not None
    }


def test_the_head_holds_what_report_reads_and_nothing_bulky():
    rec = sim()
    raw = line_of(rec).encode()
    head = head_of(raw)
    assert head is not None
    for key in ("scenario_id", "agent", "params", "verdict", "metrics", "labels"):
        assert head[key] == rec[key]
    assert not {"calls", "procedure", "messages", "bulk", "injected"} & head.keys()


def test_the_relabel_part_stops_before_the_bulk():
    rec = sim()
    part = relabel_part_of(line_of(rec).encode())
    assert part is not None
    # The procedure is left as its text (compiled once per distinct text by the store).
    assert isinstance(part["procedure"], bytes)
    assert json.loads(part["procedure"]) == rec["procedure"]
    assert len(part["calls"]) == len(rec["calls"]) and "bulk" not in part
    assert {**part, "procedure": rec["procedure"]} == relabel_part_of_parsed(rec)


def relabel_part_of_parsed(rec: dict[str, Any]) -> dict[str, Any]:
    raw = line_of(rec).encode()
    parsed = json.loads(raw[: raw.find(BULK_AT)] + b"}")
    assert isinstance(parsed, dict)
    return parsed


def test_a_line_with_a_procedure_and_a_scenario_is_parsed_whole():
    rec = sim()
    rec["scenario"] = {"id": rec["scenario_id"]}  # not a layout the writer makes
    part = relabel_part_of(line_of(rec).encode())
    assert part is not None and part["procedure"] == rec["procedure"]
    assert part["scenario"] == rec["scenario"]


def test_the_store_reads_a_procedure_text_once_and_as_the_parsed_one(
    monkeypatch: pytest.MonkeyPatch,
):
    import agentproc.runs.stored as stored

    compiled: list[Any] = []
    real = stored._read_text
    monkeypatch.setattr(stored, "_read_text", lambda *a: compiled.append(a) or real(*a))
    recs = [sim(i=0), sim(i=0), sim(i=1)]
    store = ScenarioStore()
    parts = [relabel_part_of(line_of(r).encode()) for r in recs]
    got = [store.scenario("run.jsonl", k, p) for k, p in enumerate(parts, 1)]  # type: ignore[arg-type]
    assert len(compiled) == 2 and got[0] is got[1] and got[0] is not got[2]
    assert [g.id for g in got] == [r["scenario_id"] for r in recs]
    assert got[2] == ScenarioStore().scenario("run.jsonl", 3, recs[2])  # type: ignore[arg-type]


def test_a_procedure_text_that_is_not_json_names_its_line_and_field(tmp_path: Path):
    raw = line_of(sim()).encode()
    at = raw.find(b',"procedure":{') + len(b',"procedure":{')
    broken = raw[:at] + b"nope" + raw[at:]
    run = tmp_path / "r.jsonl"
    run.write_bytes(raw + broken)
    with pytest.raises(RunFileError, match=r"line 2: procedure"):
        relabel_run(run)


@pytest.mark.parametrize(
    "text", [',"calls":[', ',"bulk":{', ',"procedure":{', ',"scenario":', '"}', "\\", "\n"]
)
def test_model_text_that_spells_a_marker_does_not_cut_the_line(text: str):
    s = EpisodeSession(scenario_of(generate_procedure(Cell(steps=2), 0, 0)), "me", mode="text")
    s.read_text(f"S3 = 1 {text}\nAnswer: 2 {text}")
    rec = dict(episode_record(s.finish("answer")))
    raw = line_of(rec).encode()
    assert raw.find(CALLS_AT) > raw.find(b'"labels":')
    head, part = head_of(raw), relabel_part_of(raw)
    assert head is not None and head["labels"] == rec["labels"]
    assert part is not None and part["output"] == rec["output"]
    assert raw.find(BULK_AT) > raw.find(b'"output":')


def test_a_line_that_does_not_cut_is_read_whole(tmp_path: Path):
    rec = sim()
    line = json.loads(line_of(rec))
    shuffled = {"labels": line.pop("labels"), **line}  # keys out of the layout's order
    path = tmp_path / "run.jsonl"
    path.write_text(json.dumps(shuffled) + "\n")
    assert head_of(path.read_bytes()) is None
    (back,) = records(path)
    assert back["calls"] == rec["calls"]
    (head,) = [r for _, r in read_run(path, view="head")]
    assert head["labels"] == rec["labels"]


# -- version 1 -------------------------------------------------------------------


def test_the_committed_recorded_run_is_version_1():
    lines = RECORDED.read_text(encoding="utf-8").splitlines()
    assert {json.loads(x)["schema_version"] for x in lines} == {1}


def test_a_version_1_file_reads_replays_and_relabels(tmp_path: Path):
    old = records(RECORDED)
    assert old and all(isinstance(c, dict) for r in old for c in r["calls"])
    for lineno, rec in read_run(RECORDED):
        assert replay_record(rec, scenario_of_record(RECORDED, lineno, rec), "r").differences == []
    heads = [r for _, r in read_run(RECORDED, view="head")]
    assert [h["labels"] for h in heads] == [r["labels"] for r in old]
    result = relabel_run(RECORDED, tmp_path / "new.jsonl")
    assert result.episodes == len(old) and result.changed_episodes == 0
    new_lines = (tmp_path / "new.jsonl").read_text().splitlines()
    assert {json.loads(x)["schema_version"] for x in new_lines} == {2}  # converted
    new = records(tmp_path / "new.jsonl")
    for a, b in zip(old, new, strict=True):
        assert b["calls"] == a["calls"] and b["messages"] == a["messages"]
        assert b["labels"] == a["labels"] and b["scenario"] == a["scenario"]


# -- scenarios by reference ----------------------------------------------------------


@pytest.fixture
def suite_run(tmp_path: Path) -> tuple[Path, Path]:
    suite = tmp_path / "suite"
    write_suite(preset("quick").model_copy(update={"count": 1}), suite)
    run = tmp_path / "run.jsonl"
    with RunWriter(run) as writer:
        for scenario in list(load_scenarios(suite))[:3]:
            writer.write(episode_record(run_sim_episode(scenario, "sim:decay")))
    return suite, run


def test_a_run_from_a_suite_refers_to_it_and_relabels_from_it(suite_run):
    suite, run = suite_run
    assert all(json.loads(x)["scenario_ref"]["suite"] == str(suite.resolve())
               for x in run.read_text().splitlines())  # fmt: skip
    lines = [json.loads(x) for x in run.read_text().splitlines()]
    assert all("scenario_ref" in x and "procedure" not in x for x in lines)
    assert relabel_run(run).changed_episodes == 0


def test_a_suite_that_moved_is_found_with_suite(suite_run, tmp_path: Path):
    suite, run = suite_run
    moved = tmp_path / "elsewhere"
    shutil.move(suite, moved)
    with pytest.raises(RunFileError) as err:
        relabel_run(run)
    assert err.value.field == "line 1: scenario_ref"
    assert "--suite" in str(err.value) and "--self-contained" in str(err.value)
    assert relabel_run(run, suite=moved).changed_episodes == 0
    for lineno, rec in read_run(run):
        assert scenario_of_record(run, lineno, rec, ScenarioStore(moved)).id == rec["scenario_id"]


def test_a_suite_changed_since_the_run_is_refused_naming_the_digest(suite_run):
    suite, run = suite_run
    first = json.loads(run.read_text().splitlines()[0])
    procedures = suite / "procedures.jsonl"
    lines = procedures.read_text().splitlines()
    at = next(i for i, x in enumerate(lines) if json.loads(x)["id"] == first["scenario_id"])
    changed = json.loads(lines[at])
    changed["seed"] += 1  # the same id, another procedure
    lines[at] = json.dumps(changed, separators=(",", ":"))
    procedures.write_text("\n".join(lines) + "\n")
    with pytest.raises(RunFileError) as err:
        scenario_of_record(run, 1, first, ScenarioStore())  # type: ignore[arg-type]
    assert err.value.field == "line 1: scenario_ref.sha256"


def test_run_self_contained_stores_the_compact_procedures(capsys, tmp_path: Path):
    from helpers import cli

    suite = tmp_path / "s"
    assert cli(capsys, "generate", "--steps", "3", "--count", "2", "--out", suite)[0] == 0
    run = tmp_path / "r.jsonl"
    argv = ["run", suite, "--agent", "sim:oracle", "--out", run, "--self-contained"]
    assert cli(capsys, *argv)[0] == 0
    lines = [json.loads(x) for x in run.read_text().splitlines()]
    assert lines and all("procedure" in x and "scenario_ref" not in x for x in lines)
    shutil.rmtree(suite)  # a self-contained file needs no suite
    code, out, _ = cli(capsys, "relabel", run)
    assert code == 0 and "0 changed" in out
    code, out, _ = cli(capsys, "replay", run)
    assert code == 0 and "0 differ" in out


def test_relabel_and_replay_take_suite_for_a_suite_that_moved(capsys, tmp_path: Path):
    from helpers import cli

    suite = tmp_path / "s"
    assert cli(capsys, "generate", "--steps", "3", "--count", "2", "--out", suite)[0] == 0
    run = tmp_path / "r.jsonl"
    assert cli(capsys, "run", suite, "--agent", "sim:decay", "--out", run)[0] == 0
    moved = tmp_path / "moved"
    shutil.move(suite, moved)
    code, _, err = cli(capsys, "relabel", run)
    assert code == 2 and "scenario_ref" in err and "--suite" in err and len(err.splitlines()) == 1
    assert cli(capsys, "relabel", run, "--suite", moved)[0] == 0
    assert cli(capsys, "replay", run, "--suite", moved)[0] == 0
    assert cli(capsys, "report", run)[0] == 0  # a report needs no scenario


@pytest.mark.parametrize("agent", ["sim:wrong_argument", "sim:oracle", "sim:decay"])
def test_the_relabel_part_can_leave_the_labels_as_their_text_in_their_place(agent: str):
    raw = line_of(sim(agent)).encode()
    parsed, texts = relabel_part_of(raw), relabel_part_of(raw, labels_text=True)
    assert parsed is not None and texts is not None
    assert isinstance(texts["labels"], bytes) and json.loads(texts["labels"]) == parsed["labels"]
    assert list(texts) == list(parsed)  # the keys in the same order
    assert {**texts, "labels": parsed["labels"]} == parsed


@pytest.mark.parametrize("labels_text", [False, True])
def test_a_line_without_its_bulk_has_no_relabel_part(labels_text: bool):
    raw = line_of(sim()).encode()
    cut = raw[: raw.find(BULK_AT)] + b"}\n"  # as a version-2 line, it lacks its bulk
    assert relabel_part_of(cut, labels_text=labels_text) is None


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)
"""What a run file can hold: JSON values with finite floats (the reader refuses NaN)."""


@settings(max_examples=300, deadline=None)
@given(JSON_VALUES)
def test_a_head_written_fast_is_the_standard_encoders_text(value: Any):
    assert dumps_read(value) == json.dumps(value, separators=(",", ":"))


@pytest.mark.parametrize(
    "value",
    [
        [1e-05, 2.5],  # orjson: 0.00001
        {"got": 1.5e-7},  # orjson: 1.5e-7
        ["\x7f"],  # not escaped by orjson
        ["caf\u00e9"],  # not escaped by orjson
        ["\ud800"],  # refused by orjson
        [2**64, -(2**63) - 1],  # refused by orjson
        ["9e-3 as text", 1e16, -0.0, 1.732],
    ],
)
def test_values_orjson_writes_otherwise_are_written_as_the_standard_encoder_does(value: Any):
    assert dumps_read(value) == json.dumps(value, separators=(",", ":"))
