"""A suite folder's files read without the models: the digest check and the line index,
both remembered for a file that has not changed since (a worker runs many spans of one
suite), and never for one that may have."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

import agentproc.procedures.files as files
from agentproc.errors import InputError
from agentproc.procedures import PROCEDURES, Block, Grid, read_procedures, write_suite
from agentproc.runs import in_shard

SMALL = Grid(name="small", blocks=[Block(steps=[3, 4], lookback=[1, 2])], count=4, seed=3)


def settle(path: Path, seconds_ago: float = 60.0) -> None:
    """Date the file's last change back, as a suite generated a while ago is."""
    st = path.stat()
    ns = st.st_mtime_ns - int(seconds_ago * 1e9)
    os.utime(path, ns=(ns, ns))


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    write_suite(SMALL, tmp_path / "s")
    return tmp_path / "s"


@pytest.fixture
def digests(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the digests the check computes."""
    made: list[int] = []
    sha256 = hashlib.sha256

    def counted(*args: bytes) -> object:
        made.append(1)
        return sha256(*args)

    monkeypatch.setattr(files.hashlib, "sha256", counted)
    return made


def test_a_settled_suite_is_checked_once_per_process(suite: Path, digests: list[int]):
    target = suite / PROCEDURES
    settle(target)
    files.check_complete(suite, target)
    files.check_complete(suite, target)
    assert len(digests) == 1


def test_a_suite_changed_after_its_check_is_checked_again_and_refused(
    suite: Path, digests: list[int]
):
    target = suite / PROCEDURES
    settle(target)
    files.check_complete(suite, target)
    data = bytearray(target.read_bytes())
    data[-3] = ord("9") if data[-3] != ord("9") else ord("8")  # same size, other bytes
    target.write_bytes(bytes(data))
    with pytest.raises(InputError, match="digest"):
        files.check_complete(suite, target)
    assert len(digests) == 2


def test_a_suite_changed_just_now_is_never_taken_as_checked(suite: Path, digests: list[int]):
    # Written within the kernel's clock tick, a second change could keep the stamp.
    target = suite / PROCEDURES
    files.check_complete(suite, target)
    files.check_complete(suite, target)
    assert len(digests) == 2


def test_a_stamp_is_withheld_while_a_file_may_still_change_within_its_tick(tmp_path: Path):
    path = tmp_path / "f"
    path.write_bytes(b"x")
    assert files.stamp(path.stat()) is None
    settle(path)
    st = path.stat()
    assert files.stamp(st) == (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def test_the_line_index_gives_each_line_where_it_is_and_its_id(suite: Path):
    target = suite / PROCEDURES
    data = target.read_bytes()
    index = files.line_index(target)
    assert len(index) == len(data.splitlines()) == SMALL.count * 4
    for lineno, offset, size, sid in index:
        raw = data[offset : offset + size]
        assert raw == data.splitlines(keepends=True)[lineno - 1]
        assert sid == files.id_of(raw) and sid is not None


def test_the_line_index_is_remembered_only_while_the_file_is_unchanged(suite: Path):
    target = suite / PROCEDURES
    assert files.line_index(target) is not files.line_index(target)  # just written
    settle(target)
    first = files.line_index(target)
    assert files.line_index(target) is first
    with open(target, "ab") as fh:
        fh.write(b"\n")
    settle(target, 30)
    assert files.line_index(target) is not first


def test_a_span_reads_only_its_own_lines_of_a_settled_suite(suite: Path):
    target = suite / PROCEDURES
    settle(target)
    whole = [p.id for p in read_procedures(suite)]
    shard = (1, 1, 3)
    mine = [p.id for p in read_procedures(suite, lambda sid: in_shard(sid, shard))]
    assert mine == [sid for sid in whole if in_shard(sid, shard)]
    read = [ln for ln, _ in files.indexed_lines(target, lambda sid: in_shard(sid, shard))]
    assert len(read) == len(mine) < len(whole)  # the others' lines are not read


def test_a_line_laid_out_otherwise_is_read_and_kept_by_its_parsed_id(tmp_path: Path):
    target = tmp_path / PROCEDURES
    target.write_bytes(b'{"id":"a","x":1}\n\n{ "id": "b"}\n{"id":"c"}\n')
    assert [(ln, sid) for ln, _, _, sid in files.line_index(target)] == [
        (1, "a"),
        (3, None),
        (4, "c"),
    ]
    kept = [raw for _, raw in files.indexed_lines(target, lambda sid: sid == "c")]
    assert kept == [b'{ "id": "b"}\n', b'{"id":"c"}\n']  # the caller parses the unknown one


def test_reading_every_line_of_a_settled_suite_keeps_no_index_of_them(suite: Path):
    # A run over a whole suite reads each line once: an index of every line would grow
    # the run's memory with the suite's size.
    target = suite / PROCEDURES
    settle(target)
    files._indexes.clear()
    data = target.read_bytes()
    read = list(files.indexed_lines(target))
    assert [raw for _, raw in read] == data.splitlines(keepends=True)
    assert [ln for ln, _ in read] == list(range(1, len(read) + 1))
    assert str(target) not in files._indexes
