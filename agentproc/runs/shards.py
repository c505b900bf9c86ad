"""One run in several shard files, and back: the files of a run split over workers.

A run given to N workers keeps one file per shard in a folder beside the run file
(``RUN.jsonl.shards-N/``). Each worker resumes its own file, so a worker that is
killed and started again loses nothing and duplicates nothing; when every shard
is done the files are merged into the run file, in suite order, and the folder
is removed. Until then, ``--resume`` picks the folder up again.

Merging imports only the writer and the layout: the parent of ``run --workers`` does it
without loading the labelling stack.
"""

from __future__ import annotations

import heapq
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentproc.errors import InputError
from agentproc.jsonio import loads
from agentproc.runs.keys import EpisodeKey, episode_key
from agentproc.runs.layout import head_of
from agentproc.runs.writer import RunWriter

if TYPE_CHECKING:
    from agentproc.runs.records import EpisodeRecord


def shard_folder(out: Path, workers: int) -> Path:
    """Where the shard files of a run over ``workers`` workers live."""
    return out.parent / f"{out.name}.shards-{workers}"


def shard_file(folder: Path, k: int, workers: int) -> Path:
    """The file of shard ``k`` (1-based) of ``workers``."""
    return folder / f"shard-{k}-of-{workers}.jsonl"


def other_shard_folders(out: Path, workers: int) -> list[Path]:
    """Unmerged shard folders of the same run file for another number of workers."""
    return sorted(
        p
        for p in out.parent.glob(f"{out.name}.shards-*")
        if p.is_dir() and p != shard_folder(out, workers)
    )


def split_run(out: Path, folder: Path, workers: int) -> int:
    """Seed the shard files from an existing run file (to resume it over ``workers``);
    returns the number of records copied."""
    from agentproc.runs.runfile import read_run  # reading checks records: the whole stack
    from agentproc.runs.runner import in_shard

    folder.mkdir(parents=True, exist_ok=True)
    writers = [RunWriter(shard_file(folder, k, workers)) for k in range(1, workers + 1)]
    n = 0
    try:
        for _, rec in read_run(out):
            k = next(k for k in range(1, workers + 1) if in_shard(rec["scenario_id"], (k, workers)))
            writers[k - 1].write(rec)
            n += 1
    finally:
        for w in writers:
            w.close()
    return n


def _keyed_lines(
    path: Path, order: dict[str, int]
) -> Iterator[tuple[int, int, int, bytes, dict[str, Any]]]:
    """``(suite position, trial, line number, raw line, head)`` of each complete line of
    a shard."""
    if not path.exists():
        return
    with open(path, "rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            if not raw.endswith(b"\n") or raw.isspace():
                continue  # a torn tail: its worker did not finish it
            rec = head_of(raw)  # the head is enough to order the lines
            if rec is None:
                try:
                    rec = loads(raw)
                except ValueError:
                    raise InputError(path, "not valid JSON", f"line {lineno}") from None
            trial = rec.get("trial", 0) if isinstance(rec.get("trial", 0), int) else 0
            yield order.get(str(rec.get("scenario_id")), len(order)), trial, lineno, raw, rec


def merge_shards(
    folder: Path,
    workers: int,
    writer: RunWriter,
    order: dict[str, int],
    latest: dict[EpisodeKey, EpisodeRecord] | None = None,
) -> int:
    """Write every shard's records into ``writer`` (emptied first) in suite order
    (``order``: scenario id -> position), then remove the shard folder; returns the
    number of records written. ``latest`` gets the head of each episode's last record
    (as :func:`~agentproc.runs.runfile.latest_records` would read it from the result),
    without reading the result again."""
    parts = [shard_file(folder, k, workers) for k in range(1, workers + 1)]
    writer.truncate()
    n = 0
    # One shard's lines come in file order, and an episode lives in one shard only,
    # so the last record of an episode is also the last one merged.
    lines = heapq.merge(*(_keyed_lines(p, order) for p in parts), key=lambda t: t[:3])
    for _, _, _, raw, head in lines:
        writer.write_raw(raw)
        if latest is not None:
            latest[episode_key(head)] = head  # type: ignore[arg-type,assignment]
        n += 1
    writer.sync()
    shutil.rmtree(folder)
    return n
