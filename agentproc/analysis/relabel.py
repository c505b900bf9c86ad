"""Relabel a stored run with the current monitor, without executing any tool or model.

The recorded calls (and, in text mode, the model's reply) are labelled again, as
:func:`~agentproc.analysis.replay.label_record` does; each record keeps everything
else and gets the new labels, verdict and metrics. Use it after a monitor fix.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from agentproc.analysis.replay import label_record
from agentproc.runs import EpisodeRecord, ReadReport, RunWriter, read_run


@dataclass
class Relabelled:
    """What relabelling a run changed."""

    episodes: int = 0
    changed_episodes: int = 0
    """Episodes whose labels, verdict or metrics differ from the recorded ones."""
    labels_before: int = 0
    labels_after: int = 0
    added: int = 0
    """Labels found now that were not recorded."""
    removed: int = 0
    """Recorded labels not found now."""
    verdicts_changed: int = 0
    warnings: list[str] = field(default_factory=list)


def _key(label: object) -> str:
    return json.dumps(label, sort_keys=True)


def relabelled(path: Path, result: Relabelled) -> Iterator[EpisodeRecord]:
    """The records of a run file, labelled again, one at a time; counts go to ``result``."""
    report = ReadReport()
    for lineno, rec in read_run(path, report):
        labels, metrics = label_record(rec, f"{path}: line {lineno}")
        new = [lab.to_json() for lab in labels]
        old = [_key(lab) for lab in rec["labels"]]
        fresh = [_key(lab) for lab in new]
        result.episodes += 1
        result.labels_before += len(old)
        result.labels_after += len(fresh)
        result.added += len(set(fresh) - set(old))
        result.removed += len(set(old) - set(fresh))
        verdict_changed = metrics["verdict"] != rec["verdict"]
        result.verdicts_changed += verdict_changed
        if old != fresh or verdict_changed or metrics != rec["metrics"]:
            result.changed_episodes += 1
        out = dict(rec)
        out.update(labels=new, verdict=metrics["verdict"], metrics=metrics)
        yield out  # type: ignore[misc]
    result.warnings.extend(report.warnings)


def relabel_run(path: Path, out: Path | None = None) -> Relabelled:
    """Relabel every episode of ``path``; write the relabelled run to ``out`` if given."""
    result = Relabelled()
    records = relabelled(path, result)
    if out is None:
        for _ in records:
            pass
        return result
    with RunWriter(out) as writer:
        for rec in records:
            writer.write(rec)
    return result
