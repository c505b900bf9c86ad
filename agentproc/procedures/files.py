"""A suite folder's files, read without the models: its procedure ids in order, and the
check that it is complete and unchanged.

Light to import (no pydantic): the parent of ``run --workers`` reads the suite's order
with it alone; :mod:`agentproc.procedures.suites` builds the rest on it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from agentproc.errors import InputError
from agentproc.jsonio import loads, read_json, unreadable

MANIFEST = "suite.json"
PROCEDURES = "procedures.jsonl"


def check_complete(folder_: Path, target: Path) -> None:
    """A suite is complete only with its manifest, and its procedures are what it says."""
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
    digest = hashlib.sha256()
    try:
        with open(target, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
    except OSError as exc:
        raise unreadable(target, exc) from None
    if digest.hexdigest() != expected:
        raise InputError(
            target, f"does not match the digest in {MANIFEST} (changed after generation)"
        )


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
    for lineno, raw in raw_lines(target):
        sid = id_of(raw)
        if sid is None:
            try:
                sid = read_id(target, f"line {lineno}", loads(raw))
            except ValueError as exc:
                raise InputError(target, f"not valid JSON ({exc})", f"line {lineno}") from None
        yield sid


def id_of(raw: bytes) -> str | None:
    """The id of a procedures line as ``write_suite`` writes it (``{"id":"...",``), or
    ``None`` for a line laid out otherwise (then parse it)."""
    if not raw.startswith(b'{"id":"'):
        return None
    end = raw.find(b'"', 7)
    if end < 0 or b"\\" in raw[7:end]:
        return None
    return raw[7:end].decode("utf-8", "replace")


def raw_lines(path: Path) -> Iterator[tuple[int, bytes]]:
    try:
        fh = open(path, "rb")  # noqa: SIM115 (closed by the with block below)
    except OSError as exc:
        raise unreadable(path, exc) from None
    with fh:
        for lineno, raw in enumerate(fh, start=1):
            if raw.strip():
                yield lineno, raw
