"""Run files: one flushed JSON line per episode, read back one line at a time."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentproc.errors import InputError, RunFileError
from agentproc.runs import ReadReport, completed_ids, read_run


def record(scenario_id: str = "s-0000", agent: str = "sim:oracle", **override: Any) -> dict:
    """A minimal record with every required field."""
    rec: dict[str, Any] = {
        "schema_version": 1,
        "scenario_id": scenario_id,
        "agent": agent,
        "cell": "n3-L3-r1_10-mixed-decimal",
        "params": {"steps": 3, "lookback": 3},
        "scenario": {},
        "calls": [],
        "labels": [],
        "metrics": {
            "verdict": "faithful",
            "total_steps": 3,
            "first_answer_correct": True,
            "final_answer_correct": True,
            "progress_rate": 1.0,
            "longest_correct_prefix": 4,
        },
        "verdict": "faithful",
    }
    rec.update(override)
    return rec


def line(rec: dict) -> bytes:
    return (json.dumps(rec) + "\n").encode()


def write_bytes(path: Path, *chunks: bytes) -> Path:
    path.write_bytes(b"".join(chunks))
    return path


def test_read_run_yields_line_numbers_and_records(tmp_path: Path):
    path = write_bytes(tmp_path / "run.jsonl", line(record("a")), line(record("b")))
    got = [(n, r["scenario_id"]) for n, r in read_run(path)]
    assert got == [(1, "a"), (2, "b")]


def test_read_run_skips_blank_lines_but_counts_them(tmp_path: Path):
    path = write_bytes(
        tmp_path / "run.jsonl", b"\n", line(record("a")), b"   \n\n", line(record("b")), b"\n"
    )
    assert [(n, r["scenario_id"]) for n, r in read_run(path)] == [(2, "a"), (5, "b")]


def test_read_run_of_an_empty_file_yields_nothing(tmp_path: Path):
    path = write_bytes(tmp_path / "run.jsonl")
    report = ReadReport()
    assert list(read_run(path, report)) == []
    assert report.torn_last_line is None and report.warnings == []


def test_torn_last_line_is_skipped_and_reported(tmp_path: Path):
    torn = line(record("c"))[:40]
    path = write_bytes(tmp_path / "run.jsonl", line(record("a")), line(record("b")), torn)
    report = ReadReport()
    assert [r["scenario_id"] for _, r in read_run(path, report)] == ["a", "b"]
    assert report.torn_last_line == 3
    assert len(report.warnings) == 1
    assert "line 3" in report.warnings[0] and "torn" in report.warnings[0]


def test_torn_last_line_is_skipped_without_a_report(tmp_path: Path):
    path = write_bytes(tmp_path / "run.jsonl", line(record("a")), b'{"scenario_id": "b", "ag')
    assert [r["scenario_id"] for _, r in read_run(path)] == ["a"]


def test_torn_last_line_cut_inside_a_multibyte_character_is_skipped(tmp_path: Path):
    whole = json.dumps(record("é" * 5), ensure_ascii=False).encode()
    cut = whole[: whole.index("é".encode()) + 1]  # the first of the two UTF-8 bytes of é
    path = write_bytes(tmp_path / "run.jsonl", line(record("a")), cut)
    report = ReadReport()
    assert [r["scenario_id"] for _, r in read_run(path, report)] == ["a"]
    assert report.torn_last_line == 2


def test_complete_last_line_without_newline_is_kept(tmp_path: Path):
    path = write_bytes(tmp_path / "run.jsonl", line(record("a")), line(record("b"))[:-1])
    report = ReadReport()
    assert [r["scenario_id"] for _, r in read_run(path, report)] == ["a", "b"]
    assert report.torn_last_line is None


def test_bad_middle_line_raises_naming_the_line(tmp_path: Path):
    path = write_bytes(tmp_path / "run.jsonl", line(record("a")), b"{not json\n", line(record()))
    with pytest.raises(RunFileError) as err:
        list(read_run(path))
    assert err.value.field == "line 2"
    assert err.value.path == str(path)
    assert "not valid JSON" in str(err.value)


def test_bad_last_line_with_a_newline_is_an_error_not_a_torn_line(tmp_path: Path):
    path = write_bytes(tmp_path / "run.jsonl", line(record("a")), b"{not json\n")
    with pytest.raises(RunFileError) as err:
        list(read_run(path, ReadReport()))
    assert err.value.field == "line 2"


def test_a_line_that_is_not_an_object_raises(tmp_path: Path):
    path = write_bytes(tmp_path / "run.jsonl", b"[1, 2]\n")
    with pytest.raises(RunFileError, match="must be a JSON object") as err:
        list(read_run(path))
    assert err.value.field == "line 1"


@pytest.mark.parametrize("key", ["scenario_id", "agent", "calls", "labels", "metrics", "verdict"])
def test_a_missing_required_field_raises_naming_it(tmp_path: Path, key: str):
    rec = record()
    del rec[key]
    path = write_bytes(tmp_path / "run.jsonl", line(record()), line(rec))
    with pytest.raises(RunFileError, match="missing") as err:
        list(read_run(path))
    assert err.value.field == f"line 2: {key}"


def test_an_unknown_verdict_raises_naming_the_field(tmp_path: Path):
    path = write_bytes(tmp_path / "run.jsonl", line(record(verdict="great")))
    with pytest.raises(RunFileError, match="unknown verdict 'great'") as err:
        list(read_run(path))
    assert err.value.field == "line 1: verdict"
    assert "faithful" in str(err.value)


def test_an_unknown_label_kind_raises_naming_the_label(tmp_path: Path):
    labels = [
        {"kind": "wrong_answer", "call_index": 3, "step": None},
        {"kind": "typo", "call_index": 0, "step": 1},
    ]
    path = write_bytes(tmp_path / "run.jsonl", line(record(labels=labels)))
    with pytest.raises(RunFileError, match="unknown label kind 'typo'") as err:
        list(read_run(path))
    assert err.value.field == "line 1: labels[1].kind"


def test_a_label_that_is_not_an_object_raises_naming_it(tmp_path: Path):
    path = write_bytes(tmp_path / "run.jsonl", line(record(labels=["wrong_answer"])))
    with pytest.raises(RunFileError) as err:
        list(read_run(path))
    assert err.value.field == "line 1: labels[0].kind"


def test_labels_that_are_not_a_list_raise(tmp_path: Path):
    path = write_bytes(tmp_path / "run.jsonl", line(record(labels={"kind": "wrong_answer"})))
    with pytest.raises(RunFileError, match="expected a list"):
        list(read_run(path))


def test_a_missing_run_file_is_an_input_error_naming_it(tmp_path: Path):
    with pytest.raises(InputError, match="no such file") as err:
        list(read_run(tmp_path / "nope.jsonl"))
    assert str(tmp_path / "nope.jsonl") in str(err.value)


# -- completed_ids -------------------------------------------------------------


def test_completed_ids_are_keyed_by_scenario_agent_mode_variant_and_trial(tmp_path: Path):
    path = write_bytes(
        tmp_path / "run.jsonl",
        line(record("a", "x")),
        line(record("a", "y")),
        line(record("b", "x")),
        line(record("a", "x")),
        line({**record("a", "x"), "variant": "prose", "trial": 2}),
    )
    assert completed_ids(path) == {
        ("a", "x", "tools", "default", 0),
        ("a", "y", "tools", "default", 0),
        ("b", "x", "tools", "default", 0),
        ("a", "x", "tools", "prose", 2),
    }


def test_an_episode_whose_last_record_is_an_error_is_not_complete(tmp_path: Path):
    failed = {**record("a", "x"), "stop_reason": "error"}
    path = write_bytes(
        tmp_path / "run.jsonl",
        line(record("b", "x")),
        line(record("a", "x")),
        line(failed),
        line({**record("b", "x"), "stop_reason": "error"}),
        line(record("b", "x")),
    )
    assert completed_ids(path) == {("b", "x", "tools", "default", 0)}


def test_completed_ids_leave_out_a_torn_last_line(tmp_path: Path):
    path = write_bytes(tmp_path / "run.jsonl", line(record("a")), line(record("b"))[:30])
    assert completed_ids(path) == {("a", "sim:oracle", "tools", "default", 0)}


def test_completed_ids_of_a_missing_file_are_empty(tmp_path: Path):
    assert completed_ids(tmp_path / "nope.jsonl") == set()
