"""A suite folder's files, read without the models: its procedure ids in order, and the
check that it is complete and unchanged.

Light to import (no pydantic): the parent of ``run --workers`` reads the suite's order
with it alone; :mod:`agentproc.procedures.suites` builds the rest on it.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from agentproc.errors import InputError
from agentproc.jsonio import loads, read_json, seekable, unreadable

MANIFEST = "suite.json"
PROCEDURES = "procedures.jsonl"
SCENARIOS = "scenarios.jsonl"
"""A declared workflow's suite holds its compiled scenarios here (without tools and
prompt), in place of :data:`PROCEDURES`."""


def check_complete(folder_: Path, target: Path) -> None:
    """A suite is complete only with its manifest, and its procedures are what it says.

    A file found unchanged since it last matched its digest in this process (see
    :func:`stamp`) is not read again: a worker running a suite's spans one after another
    checks the suite once."""
    manifest_path = folder_ / MANIFEST
    if not manifest_path.exists():
        raise InputError(
            folder_,
            f"an unfinished suite: {MANIFEST} is missing (its generation did not complete); "
            "generate it again",
        )
    manifest = read_json(manifest_path)
    expected = manifest.get("sha256") if isinstance(manifest, dict) else None
    if expected is None:  # a suite written before manifests carried a digest
        return
    try:
        with open(seekable(target), "rb") as fh:
            seen = stamp(os.fstat(fh.fileno()))
            if seen is not None and _checked.get(str(target)) == (seen, expected):
                return
            digest = hashlib.sha256()
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
    except OSError as exc:
        raise unreadable(target, exc) from None
    if digest.hexdigest() != expected:
        raise InputError(
            target, f"does not match the digest in {MANIFEST} (changed after generation)"
        )
    if seen is not None:
        _remember(_checked, str(target), (seen, expected))


Stamp = tuple[int, int, int, int]
"""A file's device, inode, size and modification time (ns): the same stamp, the same bytes."""
SETTLED_NS = 2_000_000_000
"""How long ago a file must have last changed for its stamp to be trusted. The kernel
dates a change by a coarse clock, so a file written twice within one tick keeps its
stamp; one last changed earlier than this gets a new stamp if it changes again (as git
treats a "racily clean" file)."""
_REMEMBERED = 4
"""Files whose check and line index a process remembers (a run reads one suite)."""
_checked: dict[str, tuple[Stamp, str]] = {}
"""Procedures file -> its stamp when it last matched its manifest's digest, and that digest."""
_indexes: dict[str, tuple[Stamp, list[Line]]] = {}
"""Procedures file -> its stamp when it was indexed, and its :func:`line_index`."""


def stamp(st: os.stat_result) -> Stamp | None:
    """The stamp of a file's ``stat``; ``None`` when it changed too recently to trust
    (:data:`SETTLED_NS`)."""
    if time.time_ns() - st.st_mtime_ns < SETTLED_NS:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _remember(memo: dict[str, Any], key: str, value: Any) -> None:
    if key not in memo and len(memo) >= _REMEMBERED:
        memo.clear()
    memo[key] = value


Line = tuple[int, int, int, str | None]
"""``(line number, offset, length, id)`` of a non-blank line of a procedures file; the id
is ``None`` where the line is laid out otherwise than ``write_suite`` writes it."""


def line_index(target: Path) -> list[Line]:
    """Where each non-blank line of a procedures file is, and its id, read in one pass
    without parsing the lines; remembered while the file keeps its :func:`stamp`, so the
    spans of a suite run one after another in a worker find their lines without reading
    the others."""
    with _open(target) as fh:
        return _index(target, fh)


def indexed_lines(
    target: Path, keep: Callable[[str], bool] | None = None
) -> Iterator[tuple[int, bytes]]:
    """The non-blank lines of a procedures file with their numbers, by its
    :func:`line_index`; with ``keep``, a line whose id it refuses is passed over unread.
    Without ``keep``, every line is read straight through and no index is made: a run over
    a whole suite then holds nothing per line, whatever the suite's size."""
    with _open(target) as fh:
        if keep is None:
            for lineno, raw in enumerate(fh, start=1):
                if raw.strip():
                    yield lineno, raw
            return
        for lineno, offset, size, sid in _index(target, fh):
            if keep is not None and sid is not None and not keep(sid):
                continue
            fh.seek(offset)
            yield lineno, fh.read(size)


def _open(target: Path) -> BinaryIO:
    try:
        return open(seekable(target), "rb")
    except OSError as exc:
        raise unreadable(target, exc) from None


def _index(target: Path, fh: BinaryIO) -> list[Line]:
    seen = stamp(os.fstat(fh.fileno()))
    known = _indexes.get(str(target))
    if seen is not None and known is not None and known[0] == seen:
        return known[1]
    index: list[Line] = []
    offset = 0
    for lineno, raw in enumerate(fh, start=1):
        if raw.strip():
            index.append((lineno, offset, len(raw), id_of(raw)))
        offset += len(raw)
    if seen is not None:
        _remember(_indexes, str(target), (seen, index))
    return index


IdReader = Callable[[Path, str, Any], str]
"""``(procedures file, "line N", parsed line) -> id``: the id of a line laid out otherwise
than ``write_suite`` writes it, read as a procedure (raising as reading one does)."""


def procedure_ids(folder_: Path, read_id: IdReader) -> Iterator[str]:
    """The ids of a suite's procedures in order, read without checking each procedure
    (the suite is checked complete and unchanged); ``read_id`` reads the id of a line laid
    out otherwise."""
    target = Path(folder_) / PROCEDURES
    if not target.exists():
        raise InputError(folder_, f"not a suite folder: {PROCEDURES} is missing")
    check_complete(Path(folder_), target)
    with _open(target) as fh:
        for lineno, offset, size, sid in _index(target, fh):
            if sid is None:  # laid out otherwise: read as a procedure
                fh.seek(offset)
                try:
                    sid = read_id(target, f"line {lineno}", loads(fh.read(size)))
                except ValueError as exc:
                    raise InputError(target, f"not valid JSON ({exc})", f"line {lineno}") from None
            yield sid


def line_digest(raw: bytes) -> str:
    """SHA-256 of a line of a suite's file, its line ending left out: what a run file
    refers to a declared workflow's scenario by (its ``scenarios.jsonl`` line)."""
    return hashlib.sha256(raw.rstrip(b"\r\n")).hexdigest()


_ID_AT = tuple(at.encode() for at in ('{"id":"', '{"schema_version":1,"id":"'))
"""How a procedures line and a declared workflow's scenarios line, as written, start
(spelt as text: only the run-file reader spells a line's keys in bytes)."""


def id_of(raw: bytes) -> str | None:
    """The id of a procedures line as ``write_suite`` writes it (``{"id":"...",``) or of a
    scenarios line as a declared workflow's suite writes it, or ``None`` for a line laid
    out otherwise (then parse it)."""
    for at in _ID_AT:
        if raw.startswith(at):
            start = len(at)
            end = raw.find(b'"', start)
            if end < 0 or b"\\" in raw[start:end]:
                return None
            return raw[start:end].decode("utf-8", "replace")
    return None
