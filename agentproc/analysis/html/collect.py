"""Read run files for the HTML report: one pass, the last record of each episode.

A run-file line is mostly its scenario, messages and calls; the report's tables
need none of them. A version-2 line (:mod:`agentproc.runs.layout`) is parsed only
up to its calls (its head). A version-1 line keeps its keys in one order, so the
fields before ``"scenario"`` and from ``"labels"`` on are parsed alone, and the
middle is only skipped over (a JSON string cannot hold an unescaped quote, so
``,"labels":[`` is a key). Any line that does not split either way is parsed
whole. Every record is checked as every reader checks it. The drill-down parses
whole only the lines it shows.
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from agentproc.errors import InputError, RunFileError
from agentproc.jsonio import loads, unreadable
from agentproc.runs import EpisodeKey, episode_key
from agentproc.runs.layout import CALLS_AT, expand, is_compact
from agentproc.runs.runfile import REQUIRED, SCENARIO_FIELDS, check_record

_V2_START = b'{"schema_version":'
_HEAD_END = b',"scenario":'
_TAIL_START = b',"labels":['
_CALLS = b'"calls":['
_BULKY = frozenset({"messages", "bulk", "procedure", "scenario_ref", "model_calls"})


@dataclass(frozen=True, slots=True)
class Where:
    """Where a record lies: file, line number, byte offset and length."""

    path: Path
    lineno: int
    offset: int
    length: int


@dataclass
class Collected:
    """The last record of each episode, without scenario, messages and calls."""

    records: dict[EpisodeKey, dict[str, Any]] = field(default_factory=dict)
    where: dict[EpisodeKey, Where] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    superseded: int = 0


def _head_parse(mm: mmap.mmap, start: int, end: int) -> dict[str, Any] | None:
    """The head of a version-2 line, or ``None`` (not one: parse it otherwise)."""
    if mm[start : start + len(_V2_START)] != _V2_START or mm[end - 1 : end] != b"\n":
        return None
    head_end = mm.find(CALLS_AT, start, end)
    if head_end < 0:
        return None
    try:  # orjson refuses what the exact reader must see (huge integers): it then reads all
        head = orjson.loads(mm[start:head_end] + b"}")
    except orjson.JSONDecodeError:
        return None
    if not isinstance(head, dict) or not is_compact(head):
        return None
    head["calls"] = []
    return head


def _split_parse(mm: mmap.mmap, start: int, end: int) -> dict[str, Any] | None:
    """The record of ``mm[start:end]`` without its middle, or ``None`` (parse it whole)."""
    head = _head_parse(mm, start, end)
    if head is not None:
        return head
    head_end = mm.find(_HEAD_END, start, end)
    tail_start = mm.rfind(_TAIL_START, start, end)
    if head_end < 0 or tail_start < head_end or mm.rfind(_CALLS, head_end, tail_start) < 0:
        return None
    try:  # orjson refuses what the exact reader must see (huge integers): it then reads all
        head = orjson.loads(mm[start:head_end] + b"}")
        tail = orjson.loads(b"{" + mm[tail_start + 1 : end])
    except orjson.JSONDecodeError:
        return None
    if not isinstance(head, dict) or not isinstance(tail, dict) or head.keys() & tail.keys():
        return None
    return {**head, "scenario": None, "calls": [], **tail}


def _lines(path: Path) -> Iterator[tuple[int, int, int, mmap.mmap]]:
    """``(line number, start, end, map)`` of each line, the file mapped, not copied."""
    try:
        fh = open(path, "rb")  # noqa: SIM115 (closed by the with block below)
    except IsADirectoryError:
        raise InputError(path, "is a folder, not a run file") from None
    except OSError as exc:
        raise unreadable(path, exc) from None
    with fh:
        size = os.fstat(fh.fileno()).st_size
        if not size:
            return
        try:
            mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError) as exc:
            raise InputError(path, f"cannot read ({exc})") from None
        with mm:
            if hasattr(mmap, "MADV_SEQUENTIAL"):  # read ahead: the file is read once, in order
                mm.madvise(mmap.MADV_SEQUENTIAL)
            start, lineno = 0, 0
            while start < size:
                nl = mm.find(b"\n", start)
                end = size if nl < 0 else nl + 1
                lineno += 1
                yield lineno, start, end, mm
                start = end


def parse_line(path: Path, lineno: int, raw: bytes) -> dict[str, Any]:
    """One whole run-file line, checked and expanded (either layout: calls as dicts,
    bulk fields at the top level); raises :class:`RunFileError` naming the line."""
    try:
        rec = orjson.loads(raw)
    except orjson.JSONDecodeError:
        rec = None
    try:
        rec = loads(raw) if rec is None else rec
    except ValueError as exc:
        raise RunFileError(path, f"not valid JSON ({exc})", f"line {lineno}") from None
    rec = _checked(path, lineno, rec)
    if not any(k in rec for k in SCENARIO_FIELDS):
        raise RunFileError(path, "missing", f"line {lineno}: {' or '.join(SCENARIO_FIELDS)}")
    try:
        return expand(rec)
    except (ValueError, TypeError) as exc:
        raise RunFileError(path, str(exc), f"line {lineno}") from None


def _checked(path: Path, lineno: int, rec: Any) -> dict[str, Any]:
    if not isinstance(rec, dict):
        raise RunFileError(path, "an episode must be a JSON object", f"line {lineno}")
    for key in REQUIRED:
        if key not in rec:
            raise RunFileError(path, "missing", f"line {lineno}: {key}")
    check_record(path, lineno, rec)
    return rec


def collect(paths: list[Path]) -> Collected:
    """The last record of each episode across ``paths`` (later files win), in one pass."""
    out = Collected()
    seen = 0
    for path in paths:
        path = Path(path)
        for lineno, start, end, mm in _lines(path):
            if end - start < 64 and not mm[start:end].strip():
                continue
            rec = _split_parse(mm, start, end)
            if rec is None:
                raw = mm[start:end]
                if not raw.strip():
                    continue
                try:
                    whole = loads(raw)
                except ValueError as exc:
                    if not raw.endswith(b"\n"):  # an interrupted last write
                        out.warnings.append(
                            f"{path}: line {lineno}: torn last line (an interrupted write) skipped"
                        )
                        break
                    raise RunFileError(path, f"not valid JSON ({exc})", f"line {lineno}") from None
                rec = _checked(path, lineno, whole)
                rec = {k: v for k, v in rec.items() if k not in _BULKY}
                rec["scenario"], rec["calls"] = None, []
            else:
                _checked(path, lineno, rec)
            key = episode_key(rec)  # type: ignore[arg-type]
            seen += 1
            out.records.pop(key, None)  # the last record of an episode takes its place
            out.records[key] = rec
            out.where[key] = Where(path, lineno, start, end - start)
    out.superseded = seen - len(out.records)
    if out.superseded:
        out.warnings.append(
            f"{out.superseded} records were superseded by a later record of the same "
            "episode (scenario, agent, mode): the last one counts"
        )
    return out


def read_whole(where: Where) -> dict[str, Any]:
    """The whole record at ``where``, checked."""
    try:
        with open(where.path, "rb") as fh:
            fh.seek(where.offset)
            raw = fh.read(where.length)
    except OSError as exc:
        raise unreadable(where.path, exc) from None
    return parse_line(where.path, where.lineno, raw)
