"""What every run-file record is checked for, however it was read: the fields it must
have and the closed sets and shapes analysis relies on. Each problem is one
:class:`~agentproc.errors.RunFileError` naming the file, the line and the field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentproc.errors import RunFileError
from agentproc.labelling import VERDICTS, LabelKind
from agentproc.runs.episode import MODES

REQUIRED = (
    "scenario_id",
    "agent",
    "cell",
    "params",
    "labels",
    "metrics",
    "verdict",
)
"""Fields every run-file line must have in its head."""
SCENARIO_FIELDS = ("scenario_ref", "procedure", "scenario")
"""A whole line holds one of these: how it keeps its scenario."""
WHOLE = ("scenario_id", "agent", "cell", "params", "scenario", "calls", *REQUIRED[4:])
"""Fields a whole line must have, in the order a missing one is reported (``scenario``:
one of :data:`SCENARIO_FIELDS`)."""


def check_whole(path: Path, lineno: int, rec: Any) -> None:
    """A whole line: a JSON object with every field of :data:`WHOLE`, checked as
    :func:`check_record` checks."""
    if not isinstance(rec, dict):
        raise RunFileError(path, "an episode must be a JSON object", f"line {lineno}")
    _check_not_a_suite(path, lineno, rec)
    for key in WHOLE:
        if key not in rec and not (key == "scenario" and any(k in rec for k in SCENARIO_FIELDS)):
            name = " or ".join(SCENARIO_FIELDS) if key == "scenario" else key
            raise RunFileError(path, "missing", f"line {lineno}: {name}")
    check_record(path, lineno, rec)


def _check_not_a_suite(path: Path, lineno: int, rec: dict[str, Any]) -> None:
    """A line of a suite (a procedure or a declared workflow's scenario: an ``id``, no
    ``scenario_id``) given where a run file goes: said so, not as a missing field."""
    if "scenario_id" in rec or not isinstance(rec.get("id"), str):
        return
    what = "scenario" if "params" in rec else "procedure"
    raise RunFileError(
        path,
        f"not a run file: it looks like a suite (line {lineno} is a {what}: an id, no "
        "scenario_id); give a run file, which 'agentproc run SUITE --out RUN.jsonl' writes",
    )


_KINDS = frozenset(k.value for k in LabelKind)


def _is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v: object) -> bool:
    return _is_int(v) or isinstance(v, float)


_SHAPES: dict[tuple[str, ...], tuple[Any, str]] = {
    ("scenario_id",): (lambda v: isinstance(v, str), "a string"),
    ("agent",): (lambda v: isinstance(v, str), "a string"),
    ("name",): (lambda v: isinstance(v, str), "a string"),
    ("scenario_sha256",): (lambda v: isinstance(v, str), "a string"),
    ("settings",): (lambda v: isinstance(v, dict), "an object"),
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
    _check_not_a_suite(path, lineno, rec)
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
    _check_bounds(path, lineno, rec["metrics"], rec["params"])


def _check_bounds(path: Path, lineno: int, metrics: dict[str, Any], params: dict[str, Any]) -> None:
    """Counts within the procedure's steps and rates within 0 to 1, as every report
    figure assumes (a prefix of 10^6 calls in a procedure of 3 steps is no record of a run).
    A branched workflow's ``total_steps`` counts its path's; any step may run."""
    total = metrics["total_steps"]
    offered = params["steps"] if "path" in metrics else total
    bounds = {
        "total_steps": (0, None),
        "executed_steps": (0, offered),
        "longest_correct_prefix": (0, total + 1),  # the steps, then the finish call
        "progress_rate": (0, 1),
    }
    for key, (low, high) in bounds.items():
        v = metrics.get(key)
        if v is not None and not (low <= v and (high is None or v <= high)):
            within = f"from {low}" + ("" if high is None else f" to {high}")
            raise RunFileError(path, f"{v!r} is not {within}", f"line {lineno}: metrics.{key}")
