"""Which episodes the HTML report shows: the last record of each across its run files,
read in one pass as heads (:mod:`agentproc.runs.runfile`), and where each lies, so
that the drill-down reads whole only the lines it shows."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentproc.runs import EpisodeKey, ReadReport, Where, episode_key, read_lines
from agentproc.runs.runfile import superseded


@dataclass
class Collected:
    """The last record of each episode (its head), and where it lies."""

    records: dict[EpisodeKey, dict[str, Any]] = field(default_factory=dict)
    where: dict[EpisodeKey, Where] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    superseded: int = 0


def collect(paths: list[Path]) -> Collected:
    """The last record of each episode across ``paths`` (later files win), in one pass."""
    out = Collected()
    seen = 0
    for path in paths:
        report = ReadReport()
        for line in read_lines(Path(path), report, "head"):
            key = episode_key(line.rec)  # type: ignore[arg-type]
            seen += 1
            out.records.pop(key, None)  # the last record of an episode takes its place
            out.records[key] = line.rec
            out.where[key] = line.where
        out.warnings.extend(report.warnings)
    out.superseded = seen - len(out.records)
    if out.superseded:
        out.warnings.append(superseded(out.superseded))
    return out
