"""Run files: JSON lines, one finished episode per line; the one place they are read
(:mod:`agentproc.runs.writer` writes them, laid out by :mod:`agentproc.runs.layout`).

Files are read one line at a time, so a run file is never held whole in memory. A torn
last line (an interrupted write) is reported and skipped; every complete line is
checked (:mod:`agentproc.runs.check`). A reader asks for one :data:`View` of each record:

- ``"head"``: ids, params, verdict, metrics, labels, stop reason, error, usage and variant
  spec; no calls, scenario or bulk (report, the HTML tables, resuming, merging shards);
- ``"labelling"``: the head, the calls (a version-2 line's compact arrays), the text-mode
  output and the scenario, not the bulk (relabel; see :class:`Line`);
- ``"whole"``: everything, calls as dicts, bulk fields at the top level, either layout
  version (replay, compare, the HTML drill-down).

A version-2 line keeps its keys in the layout's order, no key before them is named so,
and a JSON string cannot hold an unescaped quote: the first ``,"calls":[`` and
``,"bulk":{`` of a line are those keys, and the head and labelling views cut the line
there and parse only what they need. A line that does not cut so (version 1, keys in
another order) is parsed whole, then narrowed to the view.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast, get_args

import orjson

from agentproc.errors import RunFileError
from agentproc.jsonio import loads
from agentproc.labelling import Metrics
from agentproc.runs.check import check_record
from agentproc.runs.keys import EpisodeKey, episode_key
from agentproc.runs.layout import BULK_KEYS, MIDDLE_KEYS, dumps_read, line_of
from agentproc.runs.lines import READ_BUFFER as READ_BUFFER
from agentproc.runs.lines import ReadReport as ReadReport
from agentproc.runs.lines import Where as Where
from agentproc.runs.lines import expand as expand
from agentproc.runs.lines import is_compact as is_compact
from agentproc.runs.lines import parse_line as parse_line
from agentproc.runs.lines import raw_lines
from agentproc.runs.lines import read_at as read_at
from agentproc.runs.records import EpisodeRecord, is_error

View = Literal["head", "labelling", "whole"]
"""How much of each record a reader gets (see the module docstring)."""
VIEWS: tuple[View, ...] = get_args(View)
CALLS_AT = b',"calls":['
"""Where the head of a version-2 line ends."""
BULK_AT = b',"bulk":{'
"""Where the part the labelling view reads ends."""
PROCEDURE_AT = b',"procedure":{'
"""Where a self-contained line's compact procedure starts (it ends at the bulk)."""
LABELS_AT = b',"labels":['
"""Where a line's labels start (in its head)."""
NOT_HEAD = frozenset({"calls", "bulk", *MIDDLE_KEYS, *BULK_KEYS})
"""Record fields the head view leaves out."""


@dataclass(frozen=True, slots=True)
class Line:
    """One line of a run file, read in a view."""

    where: Where
    raw: bytes
    rec: dict[str, Any]
    """The record in the view asked for. In the labelling view of a line that cuts, its
    ``labels`` are their JSON text (``bytes``, read by :meth:`recorded_labels`) and a
    compact procedure, the last field before the bulk, is its text too (compiled once
    per distinct text by :class:`~agentproc.runs.stored.ScenarioStore`)."""
    cut: bool
    """Whether ``rec`` is the part of the line before its calls or bulk (the rest unread)."""

    def recorded_labels(self, new: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The recorded labels: ``new`` itself when the line's text is theirs (the usual case
        of a relabel: nothing parsed), else the text parsed and checked."""
        text = self.rec["labels"]
        if type(text) is not bytes:
            return text  # type: ignore[no-any-return]
        try:
            if orjson.dumps(new) == text:
                return new
        except TypeError:  # an integer beyond 64 bits: compare them parsed
            pass
        path, lineno = self.where.path, self.where.lineno
        try:
            recorded = loads(text)
        except ValueError:
            raise RunFileError(path, "not valid JSON", f"line {lineno}: labels") from None
        check_record(path, lineno, {**self.rec, "labels": recorded})
        return recorded  # type: ignore[no-any-return]

    def relabelled(self, labels: list[dict[str, Any]], metrics: Metrics, **fields: Any) -> str:
        """This line with new labels, verdict and metrics, and any other head ``fields``
        (version 2, newline included): a new head followed by the old line's bytes from its
        calls on, or, for a line read whole, the record written anew."""
        new = {"labels": labels, "verdict": metrics["verdict"], "metrics": metrics, **fields}
        if not self.cut:
            return line_of({**self.rec, **new})
        head: dict[str, Any] = {}
        for key, value in self.rec.items():
            if key == "calls":
                break
            head[key] = value
        head.update(new)
        text = dumps_read(head)[:-1]  # the old calls and bulk follow
        return text + self.raw[self.raw.find(CALLS_AT) :].decode()


def read_lines(
    path: Path, report: ReadReport | None = None, view: View = "whole"
) -> Iterator[Line]:
    """Every non-blank line of a run file, read in ``view`` and checked, one at a time.

    A line that is not JSON or misses a required field raises :class:`RunFileError`
    naming the line and the field, except an unterminated last line, which ends the
    reading and is noted in ``report``.
    """
    if view not in VIEWS:
        raise ValueError(f"unknown view {view!r} (expected one of: {', '.join(VIEWS)})")
    path = Path(path)
    cut = _CUTS.get(view)
    for where, raw in raw_lines(path):
        part = cut(raw) if cut is not None and raw.endswith(b"\n") else None
        if part is not None:
            _check_part(where, part, view)
            yield Line(where, raw, part, True)
            continue
        rec = parse_line(path, where.lineno, raw, report)
        if rec is None:
            return
        if view == "head":
            rec = {k: v for k, v in rec.items() if k not in NOT_HEAD}  # type: ignore[assignment]
        yield Line(where, raw, rec, False)  # type: ignore[arg-type]


def read_run(
    path: Path, report: ReadReport | None = None, *, view: View = "whole"
) -> Iterator[tuple[int, EpisodeRecord]]:
    """``(line number, episode record)`` of a run file, one at a time (:func:`read_lines`)."""
    for line in read_lines(path, report, view):
        yield line.where.lineno, cast(EpisodeRecord, line.rec)


def _check_part(where: Where, part: dict[str, Any], view: View) -> None:
    if type(part.get("labels")) is bytes:  # checked once known to differ (recorded_labels)
        check_record(where.path, where.lineno, {**part, "labels": []})
    else:
        check_record(where.path, where.lineno, part)
    if view == "labelling" and not isinstance(part.get("calls"), list):
        raise RunFileError(where.path, "missing", f"line {where.lineno}: calls")


def head_of(raw: bytes) -> dict[str, Any] | None:
    """The head of a version-2 line, parsed alone; ``None`` when the line is not one, or
    does not parse so: read it whole then (its error names what is wrong)."""
    return _parse_until(raw, CALLS_AT)


def relabel_part_of(raw: bytes, labels_text: bool = False) -> dict[str, Any] | None:
    """A version-2 line without its bulk (head, calls, output, scenario), or ``None``.

    A compact procedure, the last field before the bulk when the line holds one, is left
    as its JSON text (``bytes``): a run holds the same procedure line after line, and
    reading its numbers again for each was a third of the parsing. With ``labels_text``,
    the labels are left as their text too (``bytes``, in their place among the keys): a
    relabel compares them with the new ones as text first (:meth:`Line.recorded_labels`).
    """
    end = raw.find(BULK_AT)
    if end < 0:
        return None
    calls = raw.find(CALLS_AT, 0, end)
    # After the calls, only strings (which cannot hold an unescaped quote) and the other
    # ways of keeping the scenario come before the procedure's key.
    cut = raw.find(PROCEDURE_AT, calls, end) if calls >= 0 else -1
    whole = cut < 0 or raw.find(b',"scenario":', cut, end) >= 0
    text, stop, labels = raw, end if whole else cut, None
    if labels_text and calls >= 0:
        at = raw.find(LABELS_AT, 0, calls)
        # A label's values are scalars, and no string holds an unescaped quote: the
        # first ``],"`` after the key closes the array.
        close = raw.find(b'],"', at, calls + 2) if at >= 0 else -1
        if close >= 0:
            start = at + len(LABELS_AT) - 1
            labels = raw[start : close + 1]
            text = raw[:start] + b"0" + raw[close + 1 : stop]  # the key kept in its place
            stop = len(text)
    rec = _parse_until(text, BULK_AT, stop)
    if rec is not None:
        if not whole:
            rec["procedure"] = raw[cut + len(PROCEDURE_AT) - 1 : end]
        if labels is not None:
            rec["labels"] = labels
    return rec


def _parse_until(raw: bytes, marker: bytes, end: int | None = None) -> dict[str, Any] | None:
    if not raw.startswith(b'{"schema_version":'):
        return None
    if end is None:
        end = raw.find(marker)
    if end < 0:
        return None
    try:
        rec = loads(raw[:end] + b"}")
    except ValueError:
        return None
    return rec if isinstance(rec, dict) and is_compact(rec) else None


_CUTS: dict[View, Callable[[bytes], dict[str, Any] | None]] = {
    "head": head_of,
    "labelling": lambda raw: relabel_part_of(raw, labels_text=True),
}
"""How each view but the whole one cuts a line."""


def completed_ids(path: Path) -> set[EpisodeKey]:
    """Episodes a run file already holds, keyed by :func:`episode_key`, for resuming.

    An episode whose last record is an error (an infrastructure failure) is not
    complete: resuming runs it again.
    """
    if not Path(path).exists():
        return set()
    last: dict[EpisodeKey, bool] = {}
    for _, rec in read_run(path, ReadReport(), view="head"):
        last[episode_key(rec)] = not is_error(rec)
    return {key for key, ok in last.items() if ok}


def superseded(n: int) -> str:
    """The warning of a read that found ``n`` records superseded by later ones."""
    return (
        f"{n} record{' was' if n == 1 else 's were'} superseded by a later record of the same "
        "episode (scenario, agent, mode): the last one counts"
    )


def latest_records(
    paths: list[Path], reports: list[ReadReport] | None = None, *, view: View = "whole"
) -> Iterator[tuple[Path, int, EpisodeRecord]]:
    """``(file, line, record)`` of the last record of each episode across run files.

    An episode (scenario, agent, mode) recorded more than once, because it was
    resumed after an error or because a file was given twice, counts once: its
    last record, in the order the files are given. Two passes over the files (the
    first reads heads), so memory grows with the number of episodes, never with their
    size. The first report of ``reports`` gets a warning saying how many records were
    superseded.
    """
    for line in latest_lines(paths, reports, view=view):
        yield line.where.path, line.where.lineno, cast(EpisodeRecord, line.rec)


def latest_lines(
    paths: list[Path], reports: list[ReadReport] | None = None, *, view: View = "whole"
) -> Iterator[Line]:
    """The lines of :func:`latest_records`, each with where it lies (to read more of it
    later, :func:`read_at`)."""
    reports = reports or [ReadReport() for _ in paths]
    last: dict[EpisodeKey, tuple[int, int]] = {}
    seen = 0
    for i, path in enumerate(paths):
        for lineno, rec in read_run(path, ReadReport(), view="head"):
            last[episode_key(rec)] = (i, lineno)
            seen += 1
    wanted = set(last.values())
    for i, (path, rr) in enumerate(zip(paths, reports, strict=True)):
        for line in read_lines(Path(path), rr, view):
            if (i, line.where.lineno) in wanted:
                yield line
    if seen > len(last) and reports:
        reports[0].warnings.append(superseded(seen - len(last)))


Heads = dict[EpisodeKey, tuple[Where, dict[str, Any]]]
"""Each episode's last record: where it lies, and its head."""


def last_heads(paths: list[Path], warnings: list[str]) -> Heads:
    """Where the last record of each episode across run files lies, and its head, in one
    pass: later files win, and the last record of an episode takes its place in the order.
    What reading skipped, and how many records were superseded, goes to ``warnings``."""
    last: Heads = {}
    seen = 0
    for path in paths:
        report = ReadReport()
        for line in read_lines(Path(path), report, "head"):
            key = episode_key(line.rec)  # type: ignore[arg-type]
            last.pop(key, None)
            last[key] = (line.where, line.rec)
            seen += 1
        warnings.extend(report.warnings)
    if seen > len(last):
        warnings.append(superseded(seen - len(last)))
    return last
