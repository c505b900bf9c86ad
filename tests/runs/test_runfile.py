"""Run files: one flushed JSON line per episode, read back one line at a time."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from agentproc.errors import InputError, RunFileError
from agentproc.runs import ReadReport, RunWriter, completed_ids, drop_torn_tail, read_run


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


# -- RunWriter -----------------------------------------------------------------


def test_writer_writes_one_compact_line_per_record(tmp_path: Path):
    path = tmp_path / "run.jsonl"
    with RunWriter(path) as w:
        w.write(record("a"))
        w.write(record("b"))
    text = path.read_text(encoding="utf-8")
    assert text.count("\n") == 2 and text.endswith("\n")
    assert [json.loads(x)["scenario_id"] for x in text.splitlines()] == ["a", "b"]
    assert ", " not in text and '": ' not in text


def test_writer_line_is_on_disk_before_the_writer_is_closed(tmp_path: Path):
    path = tmp_path / "run.jsonl"
    w = RunWriter(path)
    try:
        w.write(record("a"))
        assert [r["scenario_id"] for _, r in read_run(path)] == ["a"]
    finally:
        w.close()


def _count_fsyncs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    synced: list[int] = []
    real_fsync = os.fsync

    def spy(fd: int) -> None:
        synced.append(fd)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", spy)
    return synced


def test_writer_syncs_at_most_every_interval_and_on_close(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    synced = _count_fsyncs(monkeypatch)
    with RunWriter(tmp_path / "run.jsonl", sync_every=3600) as w:
        for i in range(50):
            w.write(record(str(i)))
        assert synced == []  # flushed to the kernel, not yet pushed to the disk
        assert len(list(read_run(tmp_path / "run.jsonl"))) == 50
    assert len(synced) == 1  # on close


def test_writer_with_no_interval_syncs_every_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    synced = _count_fsyncs(monkeypatch)
    with RunWriter(tmp_path / "run.jsonl", sync_every=0) as w:
        w.write(record("a"))
        w.write(record("b"))
        assert synced == [w._fh.fileno()] * 2


def test_writer_creates_missing_parent_folders(tmp_path: Path):
    path = tmp_path / "deep" / "er" / "run.jsonl"
    with RunWriter(path) as w:
        w.write(record())
    assert path.exists()


def test_writer_without_append_replaces_the_file(tmp_path: Path):
    path = write_bytes(tmp_path / "run.jsonl", line(record("old")))
    with RunWriter(path) as w:
        w.write(record("new"))
    assert [r["scenario_id"] for _, r in read_run(path)] == ["new"]


def test_writer_in_append_mode_keeps_earlier_lines(tmp_path: Path):
    path = write_bytes(tmp_path / "run.jsonl", line(record("old")))
    with RunWriter(path, append=True) as w:
        w.write(record("new"))
    assert [r["scenario_id"] for _, r in read_run(path)] == ["old", "new"]


def test_writer_redacts_a_secret_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    secret = "foo-secret-value-0123456789abcdef"
    monkeypatch.setenv("FOO_API_KEY", secret)
    path = tmp_path / "run.jsonl"
    with RunWriter(path) as w:
        w.write(record(errors=[f"401 Unauthorized: key {secret} rejected"]))
    text = path.read_text(encoding="utf-8")
    assert secret not in text
    [(_, rec)] = list(read_run(path))
    assert rec["errors"] == ["401 Unauthorized: key [REDACTED] rejected"]


def test_writer_redacts_a_bearer_token(tmp_path: Path):
    path = tmp_path / "run.jsonl"
    with RunWriter(path) as w:
        w.write(record(errors=["headers: Authorization: Bearer abc.def-123456"]))
    assert "abc.def-123456" not in path.read_text(encoding="utf-8")


# -- read_run ------------------------------------------------------------------


def test_write_raw_appends_lines_as_given_in_bytes_or_text(tmp_path: Path):
    path = tmp_path / "run.jsonl"
    long = line(record("b", output="é" * 700_000))  # longer than the writer's buffer
    with RunWriter(path) as w:
        w.write_raw(line(record("a")))
        w.write_raw(long.decode())
        w.write_raw(line(record("c")))
        w.sync()
        assert path.read_bytes() == line(record("a")) + long + line(record("c"))
    assert [r["scenario_id"] for _, r in read_run(path)] == ["a", "b", "c"]


def test_write_raw_lines_reach_the_file_on_close_without_a_sync(tmp_path: Path):
    path = tmp_path / "run.jsonl"
    with RunWriter(path) as w:
        w.write_raw(line(record("a")))
    assert path.read_bytes() == line(record("a"))


def test_a_written_record_keeps_non_ascii_text(tmp_path: Path):
    path = tmp_path / "run.jsonl"
    with RunWriter(path) as w:
        w.write(record("a", output="naïve 数"))
    assert next(read_run(path))[1]["output"] == "naïve 数"


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


# -- drop_torn_tail ------------------------------------------------------------


def test_drop_torn_tail_cuts_the_unterminated_line_and_returns_its_size(tmp_path: Path):
    whole = line(record("a")) + line(record("b"))
    torn = line(record("c"))[:25]
    path = write_bytes(tmp_path / "run.jsonl", whole, torn)
    assert drop_torn_tail(path) == len(torn)
    assert path.read_bytes() == whole


def test_drop_torn_tail_leaves_a_complete_file_alone(tmp_path: Path):
    whole = line(record("a")) + line(record("b"))
    path = write_bytes(tmp_path / "run.jsonl", whole)
    assert drop_torn_tail(path) == 0
    assert path.read_bytes() == whole


def test_drop_torn_tail_of_a_single_torn_line_empties_the_file(tmp_path: Path):
    path = write_bytes(tmp_path / "run.jsonl", b'{"scenario_id": "a"')
    assert drop_torn_tail(path) == 19
    assert path.read_bytes() == b""


def test_drop_torn_tail_finds_the_last_newline_beyond_one_read_chunk(tmp_path: Path):
    whole = line(record("a"))
    torn = b'{"scenario_id": "' + b"x" * 200_000
    path = write_bytes(tmp_path / "run.jsonl", whole, torn)
    assert drop_torn_tail(path) == len(torn)
    assert path.read_bytes() == whole


def test_drop_torn_tail_of_an_empty_or_missing_file_cuts_nothing(tmp_path: Path):
    assert drop_torn_tail(write_bytes(tmp_path / "empty.jsonl")) == 0
    assert drop_torn_tail(tmp_path / "nope.jsonl") == 0
    assert not (tmp_path / "nope.jsonl").exists()


def test_appending_after_drop_torn_tail_gives_a_readable_file(tmp_path: Path):
    path = write_bytes(tmp_path / "run.jsonl", line(record("a")), line(record("b"))[:30])
    drop_torn_tail(path)
    with RunWriter(path, append=True) as w:
        w.write(record("c"))
    report = ReadReport()
    assert [r["scenario_id"] for _, r in read_run(path, report)] == ["a", "c"]
    assert report.torn_last_line is None
