"""A run file's lines as they lie on disk: where each is, its bytes read one at a time,
and one line parsed whole, checked and expanded (a version-2 line's compact calls and
bulk back to the record the whole view gives).

:mod:`agentproc.runs.runfile`, the one reader, builds its views on these.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from agentproc.errors import InputError, RunFileError
from agentproc.jsonio import loads, seekable, unreadable
from agentproc.runs.check import check_whole
from agentproc.runs.layout import BULK_KEYS
from agentproc.runs.records import EpisodeRecord

READ_BUFFER = 1 << 20
"""Bytes read from a run file at a time: a line is often longer than the default 8 KiB,
and reading it in pieces and joining them cost more than parsing its head."""


@dataclass
class ReadReport:
    """What reading a run file skipped."""

    torn_last_line: int | None = None
    """The line number of a torn last line, if there was one."""
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Where:
    """Where a record lies: file, line number, byte offset and length."""

    path: Path
    lineno: int
    offset: int
    length: int


def read_at(where: Where) -> EpisodeRecord:
    """The whole record at ``where``, checked."""
    try:
        with open(seekable(where.path), "rb") as fh:
            fh.seek(where.offset)
            raw = fh.read(where.length)
    except OSError as exc:
        raise unreadable(where.path, exc) from None
    rec = parse_line(where.path, where.lineno, raw)
    if rec is None:
        raise RunFileError(where.path, "not valid JSON (a torn line)", f"line {where.lineno}")
    return rec


def raw_lines(path: Path) -> Iterator[tuple[Where, bytes]]:
    """Every non-blank line of a run file, as bytes, and where it lies."""
    try:
        fh = open(seekable(path), "rb", buffering=READ_BUFFER)  # noqa: SIM115 (closed by the with block below)
    except IsADirectoryError:
        what = "a suite folder" if (Path(path) / "suite.json").is_file() else "a folder"
        raise InputError(path, f"is {what}, not a run file") from None
    except OSError as exc:  # a missing file among them: "no such file"
        raise unreadable(path, exc) from None
    with fh:
        offset = 0
        for lineno, raw in enumerate(fh, start=1):
            if raw and not raw.isspace():  # not raw.strip(), which copies the line
                yield Where(path, lineno, offset, len(raw)), raw
            offset += len(raw)


def parse_line(
    path: Path, lineno: int, raw: bytes, report: ReadReport | None = None
) -> EpisodeRecord | None:
    """One whole line, checked and expanded; ``None`` for a torn last line (an
    unterminated line that is not JSON), which is noted in ``report``."""
    try:
        rec = loads(raw)
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError both are
        if not raw.endswith(b"\n"):  # only the last line can lack one
            if report is not None:
                report.torn_last_line = lineno
                report.warnings.append(
                    f"{path}: line {lineno}: torn last line (an interrupted write) skipped"
                )
            return None
        raise RunFileError(path, f"not valid JSON ({exc})", f"line {lineno}") from None
    check_whole(path, lineno, rec)
    try:
        return cast(EpisodeRecord, expand(rec))
    except (ValueError, TypeError) as exc:
        raise RunFileError(path, str(exc), f"line {lineno}") from None


def is_compact(rec: dict[str, Any]) -> bool:
    """Whether a parsed line is laid out as version 2."""
    v = rec.get("schema_version")
    return isinstance(v, int) and not isinstance(v, bool) and v >= 2


def expand(rec: dict[str, Any]) -> dict[str, Any]:
    """A parsed line as the whole view gives it: calls as dicts, bulk fields at the top
    level. Version-1 lines are already so and come back unchanged. Raises ``TypeError``,
    ``IndexError`` or ``ValueError`` for calls of the wrong shape.
    """
    if not is_compact(rec) or not isinstance(rec.get("calls"), list):
        return rec
    bulk = rec.pop("bulk", None)
    bulk = bulk if isinstance(bulk, dict) else {}
    results = bulk.get("results") or []
    hashes = bulk.get("state_hashes") or []
    metrics = rec.get("metrics")
    given = metrics.get("given_steps", 0) if isinstance(metrics, dict) else 0  # pre-filled
    calls = []
    for i, c in enumerate(rec["calls"]):
        if not isinstance(c, list) or len(c) != 5:
            raise ValueError(f"calls[{i}]: expected [name, arguments, step, refused, value]")
        name, arguments, step, refused, value = c
        call: dict[str, Any] = {
            "index": i,
            "name": name,
            "arguments": arguments,
            "result": results[i] if i < len(results) else "",
            "step": step,
            "refused": refused,
            "state_hash": hashes[i] if i < len(hashes) else "",
        }
        if value is not None:
            call["value" if step is not None else "answer"] = value
        if isinstance(given, int) and i < given:
            call["given"] = True
        calls.append(call)
    rec["calls"] = calls
    for key in BULK_KEYS:
        if key in bulk:
            rec[key] = bulk[key]
    return rec
