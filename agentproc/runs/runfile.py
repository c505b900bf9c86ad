"""Run files: JSON lines, one finished episode per line; the one place they are read
(:mod:`agentproc.runs.writer` writes them).

Each line is written and flushed as its episode ends, and files are read one
line at a time, so a run file is never held whole in memory. A torn last line
(an interrupted write) is reported and skipped; every complete line is kept.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from agentproc.errors import InputError, RunFileError
from agentproc.jsonio import loads as loads_exact
from agentproc.jsonio import unreadable
from agentproc.labelling import VERDICTS, LabelKind
from agentproc.runs.episode import MODES
from agentproc.runs.keys import EpisodeKey, episode_key
from agentproc.runs.layout import expand, head_of
from agentproc.runs.records import EpisodeRecord, is_error

REQUIRED = (
    "scenario_id",
    "agent",
    "cell",
    "params",
    "labels",
    "metrics",
    "verdict",
)
"""Fields every run-file line must have in its head (:mod:`agentproc.runs.layout`)."""
READ_BUFFER = 1 << 20
"""Bytes read from a run file at a time."""
SCENARIO_FIELDS = ("scenario_ref", "procedure", "scenario")
"""A whole line holds one of these: how it keeps its scenario."""
WHOLE = ("scenario_id", "agent", "cell", "params", "scenario", "calls", *REQUIRED[4:])
"""Fields a whole line must have, in the order a missing one is reported (``scenario``:
one of :data:`SCENARIO_FIELDS`)."""


@dataclass
class ReadReport:
    """What reading a run file skipped."""

    torn_last_line: int | None = None
    """The line number of a torn last line, if there was one."""
    warnings: list[str] = field(default_factory=list)


def read_run(
    path: Path, report: ReadReport | None = None, *, head_only: bool = False
) -> Iterator[tuple[int, EpisodeRecord]]:
    """``(line number, episode record)`` of a run file, one at a time, as
    :func:`~agentproc.runs.layout.expand` gives them (either layout version).

    With ``head_only``, a version-2 line is parsed only up to its calls: the record
    has no calls, scenario or bulk fields (what ``report`` needs, several times cheaper).
    A line that is not JSON or misses a required field raises :class:`RunFileError`,
    except an unterminated last line, which is skipped and noted in ``report``.
    """
    for lineno, raw in run_lines(path):
        if head_only and raw.endswith(b"\n"):
            head = head_of(raw)
            if head is not None:
                check_record(path, lineno, head)
                yield lineno, cast(EpisodeRecord, head)
                continue
        rec = parse_line(path, lineno, raw, report)
        if rec is None:
            return
        yield lineno, rec


def run_lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """``(line number, raw line)`` of every non-blank line of a run file."""
    path = Path(path)
    try:
        # A large buffer: a line is often longer than the default 8 KiB, and reading it
        # in pieces and joining them cost more than parsing its head.
        fh = open(path, "rb", buffering=READ_BUFFER)  # noqa: SIM115 (closed by the with block below)
    except FileNotFoundError:
        raise InputError(path, "no such file") from None
    except IsADirectoryError:
        raise InputError(path, "is a folder, not a run file") from None
    except OSError as exc:
        raise unreadable(path, exc) from None
    with fh:
        for lineno, raw in enumerate(fh, start=1):
            if raw and not raw.isspace():  # not raw.strip(), which copies the line
                yield lineno, raw


def parse_line(
    path: Path, lineno: int, raw: bytes, report: ReadReport | None = None
) -> EpisodeRecord | None:
    """One whole line, checked and expanded; ``None`` for a torn last line (an
    unterminated line that is not JSON), which is noted in ``report``."""
    try:
        rec = loads_exact(raw)
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError both are
        if not raw.endswith(b"\n"):  # only the last line can lack one
            if report is not None:
                report.torn_last_line = lineno
                report.warnings.append(
                    f"{path}: line {lineno}: torn last line (an interrupted write) skipped"
                )
            return None
        raise RunFileError(path, f"not valid JSON ({exc})", f"line {lineno}") from None
    if not isinstance(rec, dict):
        raise RunFileError(path, "an episode must be a JSON object", f"line {lineno}")
    for key in WHOLE:
        if key not in rec and not (key == "scenario" and any(k in rec for k in SCENARIO_FIELDS)):
            name = " or ".join(SCENARIO_FIELDS) if key == "scenario" else key
            raise RunFileError(path, "missing", f"line {lineno}: {name}")
    check_record(path, lineno, rec)
    try:
        return cast(EpisodeRecord, expand(rec))
    except (ValueError, TypeError) as exc:
        raise RunFileError(path, str(exc), f"line {lineno}") from None


_KINDS = frozenset(k.value for k in LabelKind)


def _is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v: object) -> bool:
    return _is_int(v) or isinstance(v, float)


_SHAPES: dict[tuple[str, ...], tuple[Any, str]] = {
    ("scenario_id",): (lambda v: isinstance(v, str), "a string"),
    ("agent",): (lambda v: isinstance(v, str), "a string"),
    ("cell",): (lambda v: isinstance(v, str), "a string"),
    ("mode",): (lambda v: v in MODES, f"one of: {', '.join(MODES)}"),
    ("guard",): (lambda v: isinstance(v, str), "a string"),
    ("variant",): (lambda v: isinstance(v, str), "a string"),
    ("trial",): (lambda v: _is_int(v) and v >= 0, "a whole number of at least 0"),
    ("params",): (lambda v: isinstance(v, dict), "an object"),
    ("params", "steps"): (_is_int, "a whole number"),
    ("params", "lookback"): (_is_int, "a whole number"),
    ("params", "range"): (
        lambda v: isinstance(v, list) and len(v) == 2 and all(map(_is_number, v)),
        "a [low, high] pair of numbers",
    ),
    ("metrics",): (lambda v: isinstance(v, dict), "an object"),
    ("metrics", "total_steps"): (_is_int, "a whole number"),
    ("metrics", "executed_steps"): (_is_int, "a whole number"),
    ("metrics", "longest_correct_prefix"): (_is_int, "a whole number"),
    ("metrics", "progress_rate"): (_is_number, "a number"),
    ("metrics", "first_answer_correct"): (lambda v: isinstance(v, bool), "true or false"),
    ("metrics", "final_answer_correct"): (lambda v: isinstance(v, bool), "true or false"),
}
"""The fields analysis reads, and the shape each must have where it is present."""
_NEEDED = frozenset(
    {("params", "steps"), ("params", "lookback"), ("metrics", "total_steps")}
    | {("metrics", k) for k in ("first_answer_correct", "final_answer_correct")}
    | {("metrics", k) for k in ("progress_rate", "longest_correct_prefix")}
)
"""Nested fields a record cannot do without."""


def _check_shapes(path: Path, lineno: int, rec: dict[str, Any]) -> None:
    for keys, (ok, shape) in _SHAPES.items():
        parent: Any = rec
        for key in keys[:-1]:
            parent = parent[key]
        if keys[-1] not in parent:
            if keys in _NEEDED:
                raise RunFileError(path, "missing", f"line {lineno}: {'.'.join(keys)}")
            continue
        if not ok(parent[keys[-1]]):
            got = type(parent[keys[-1]]).__name__
            raise RunFileError(
                path, f"expected {shape} (not {got})", f"line {lineno}: {'.'.join(keys)}"
            )


def check_record(path: Path, lineno: int, rec: dict[str, Any]) -> None:
    """The fields every line has, and the closed sets and shapes a report relies on:
    verdicts, label kinds, fields."""
    for key in REQUIRED:
        if key not in rec:
            raise RunFileError(path, "missing", f"line {lineno}: {key}")
    if rec["verdict"] not in VERDICTS:
        raise RunFileError(
            path,
            f"unknown verdict {rec['verdict']!r} (expected one of: {', '.join(VERDICTS)})",
            f"line {lineno}: verdict",
        )
    labels = rec["labels"]
    if not isinstance(labels, list) or not isinstance(rec.get("calls", []), list):
        raise RunFileError(path, "expected a list", f"line {lineno}: labels/calls")
    for i, lab in enumerate(labels):
        if not isinstance(lab, dict) or lab.get("kind") not in _KINDS:
            kind = lab.get("kind") if isinstance(lab, dict) else lab
            raise RunFileError(
                path,
                f"unknown label kind {kind!r} (expected one of: {', '.join(sorted(_KINDS))})",
                f"line {lineno}: labels[{i}].kind",
            )
    _check_shapes(path, lineno, rec)
    _check_bounds(path, lineno, rec["metrics"])


def _check_bounds(path: Path, lineno: int, metrics: dict[str, Any]) -> None:
    """Counts within the procedure's steps and rates within 0 to 1, as every report
    figure assumes (a prefix of 10^6 calls in a procedure of 3 steps is no record of a run)."""
    total = metrics["total_steps"]
    bounds = {
        "total_steps": (0, None),
        "executed_steps": (0, total),
        "longest_correct_prefix": (0, total + 1),  # the steps, then the finish call
        "progress_rate": (0, 1),
    }
    for key, (low, high) in bounds.items():
        v = metrics.get(key)
        if v is not None and not (low <= v and (high is None or v <= high)):
            within = f"from {low}" + ("" if high is None else f" to {high}")
            raise RunFileError(path, f"{v!r} is not {within}", f"line {lineno}: metrics.{key}")


def completed_ids(path: Path) -> set[EpisodeKey]:
    """Episodes a run file already holds, keyed by :func:`episode_key`, for resuming.

    An episode whose last record is an error (an infrastructure failure) is not
    complete: resuming runs it again.
    """
    if not Path(path).exists():
        return set()
    last: dict[EpisodeKey, bool] = {}
    for _, rec in read_run(path, ReadReport(), head_only=True):
        last[episode_key(rec)] = not is_error(rec)
    return {key for key, ok in last.items() if ok}


def latest_records(
    paths: list[Path], reports: list[ReadReport] | None = None, *, head_only: bool = False
) -> Iterator[tuple[Path, int, EpisodeRecord]]:
    """``(file, line, record)`` of the last record of each episode across run files.

    An episode (scenario, agent, mode) recorded more than once, because it was
    resumed after an error or because a file was given twice, counts once: its
    last record, in the order the files are given. Two passes over the files, so
    memory grows with the number of episodes, never with their size. The first
    report of ``reports`` gets a warning saying how many records were superseded.
    ``head_only`` is :func:`read_run`'s.
    """
    reports = reports or [ReadReport() for _ in paths]
    last: dict[EpisodeKey, tuple[int, int]] = {}
    seen = 0
    for i, path in enumerate(paths):
        for lineno, rec in read_run(path, ReadReport(), head_only=True):
            last[episode_key(rec)] = (i, lineno)
            seen += 1
    wanted = set(last.values())
    for i, (path, rr) in enumerate(zip(paths, reports, strict=True)):
        for lineno, rec in read_run(path, rr, head_only=head_only):
            if (i, lineno) in wanted:
                yield path, lineno, rec
    if seen > len(last) and reports:
        reports[0].warnings.append(
            f"{seen - len(last)} records were superseded by a later record of the same "
            "episode (scenario, agent, mode): the last one counts"
        )
