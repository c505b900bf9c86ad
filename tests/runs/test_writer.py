"""The run-file writer: one flushed line per episode under a lock, a torn tail cut before
appending, and lines merged as given."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agentproc.runs import ReadReport, RunWriter, drop_torn_tail, read_run
from tests.runs.test_runfile import line, record, write_bytes

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


# -- replace_with --------------------------------------------------------------


def test_replace_with_renames_the_new_file_over_the_run_file_keeping_its_permissions(
    tmp_path: Path,
):
    run, new = tmp_path / "run.jsonl", tmp_path / "merged"
    run.write_bytes(b'{"old": 1}\n')
    run.chmod(0o600)
    new.write_bytes(b'{"new": 1}\n{"new": 2}\n')
    inode = new.stat().st_ino
    writer = RunWriter(run, append=True)
    writer.replace_with(new)
    assert run.read_bytes() == b'{"new": 1}\n{"new": 2}\n' and not new.exists()
    assert run.stat().st_ino == inode  # renamed, not copied
    assert run.stat().st_mode & 0o777 == 0o600
    writer.close()  # already closed: a second close is harmless
    with RunWriter(run, append=True):  # and the lock is free
        pass


def test_replace_with_copies_where_the_file_cannot_be_renamed(tmp_path: Path, monkeypatch):
    run, new = tmp_path / "run.jsonl", tmp_path / "merged"
    run.write_bytes(b'{"old": 1}\n')
    new.write_bytes(b'{"new": 1}\n' * 3)

    def elsewhere(src, dst):
        raise OSError(18, "Invalid cross-device link")

    monkeypatch.setattr(os, "replace", elsewhere)
    inode = run.stat().st_ino
    with RunWriter(run, append=True) as writer:
        writer.replace_with(new)
    assert run.read_bytes() == b'{"new": 1}\n' * 3 and run.stat().st_ino == inode


def test_holding_a_run_file_another_writer_has_is_refused_and_changes_nothing(tmp_path: Path):
    from agentproc.errors import InputError
    from agentproc.runs.writer import held

    path = tmp_path / "r.jsonl"
    path.write_bytes(b"an earlier line\n")
    with (
        RunWriter(path, append=True),
        pytest.raises(InputError, match="another agentproc"),
        held(path),
    ):
        pass
    with held(path), pytest.raises(InputError, match="another agentproc"):
        RunWriter(path)
    assert path.read_bytes() == b"an earlier line\n"
