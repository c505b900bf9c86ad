"""One run in several shard files, and back: the files of a run split over workers.

A run given to N workers is cut into spans of shards (:func:`plan`), each with a file in
a folder beside the run file (``RUN.jsonl.shards-N/shard-1-16-of-64.jsonl``). A span is
run with ``--resume`` into its file, so a worker that is killed and started again loses
nothing and duplicates nothing. When every span is done, the files are merged in suite
order into ``merged.partial`` in the folder (:func:`merge_shards`: a k-way merge that
streams the files), which is renamed over the run file, and the folder is removed. The run
file is not touched before that, and until then ``--resume`` picks the folder up again.
"""

from __future__ import annotations

import heapq
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from agentproc.errors import InputError, OutputError
from agentproc.jsonio import loads
from agentproc.runs.keys import EpisodeKey, episode_key
from agentproc.runs.records import EpisodeRecord
from agentproc.runs.runfile import head_of, read_run
from agentproc.runs.split import Shard, in_shard, shard_spec
from agentproc.runs.writer import BUFFER, RunWriter


def shard_folder(out: Path, workers: int) -> Path:
    """Where the shard files of a run over ``workers`` workers live."""
    return out.parent / f"{out.name}.shards-{workers}"


SHARDS_PER_WORKER = 32
"""How finely a run over N workers is cut: into spans of N x this many shards."""


def plan(workers: int, fine: bool = True) -> list[Shard]:
    """The spans of shards a run over ``workers`` workers is cut into, in the order they
    are handed out, largest first: each is a quarter (for two workers) of what is left, down
    to one shard of ``32 x workers``. A worker takes the next span as it finishes one, so the
    workers end within about one small span of each other, however their speeds differ;
    each span is a deterministic slice of the suite by scenario id, with a file of its own,
    so ``--resume`` goes on from what each holds.

    Not ``fine``: one span per worker (shard k of N), for a run whose pace a model server
    sets with several episodes in flight, where each small span would end with fewer."""
    if not fine:
        return [(k, k, workers) for k in range(1, workers + 1)]
    count = SHARDS_PER_WORKER * workers
    spans, first = [], 1
    while first <= count:
        size = max(1, (count - first + 1) // (2 * workers))
        spans.append((first, first + size - 1, count))
        first += size
    return spans


def shard_file(folder: Path, shard: Shard) -> Path:
    """The file of one span of shards: ``shard-3-of-64.jsonl``, ``shard-1-16-of-64.jsonl``."""
    return folder / f"shard-{shard_spec(shard).replace('/', '-of-')}.jsonl"


def shard_files(folder: Path, spans: list[Shard]) -> list[Path]:
    """The files of the spans of a :func:`plan`, in its order."""
    return [shard_file(folder, s) for s in spans]


def other_shard_folders(out: Path, workers: int) -> list[Path]:
    """Unmerged shard folders of the same run file for another number of workers."""
    return sorted(
        p
        for p in out.parent.glob(f"{out.name}.shards-*")
        if p.is_dir() and p != shard_folder(out, workers)
    )


def take_up(folder: Path, strays: list[Path], spans: list[Shard], order: dict[str, int]) -> int:
    """Share the records of shard files cut otherwise (an older layout) out to the files
    of ``spans``, in suite order, and remove them; returns the number of records."""
    gathered = folder / "strays.partial"
    with open(gathered, "wb") as out:
        _merge(strays, order, out)
    n = split_run([gathered], folder, spans)
    for path in [*strays, gathered]:
        path.unlink()
    return n


def split_run(sources: list[Path], folder: Path, spans: list[Shard]) -> int:
    """Share the records of ``sources`` (an existing run file, to resume it over workers;
    or shard files of another layout) out to the files of ``spans`` (a :func:`plan`);
    returns the number of records copied."""
    folder.mkdir(parents=True, exist_ok=True)
    writers = [RunWriter(shard_file(folder, s), append=True) for s in spans]
    n = 0
    try:
        for source in sources:
            for _, rec in read_run(source):
                k = next(k for k, s in enumerate(spans) if in_shard(rec["scenario_id"], s))
                writers[k].write(rec)
                n += 1
    finally:
        for w in writers:
            w.close()
    return n


MERGING = "merged.partial"
"""The merge as it is written, in the shard folder until it is complete."""

_Line = tuple[tuple[int, int, int], bytes, dict[str, Any]]
"""``((suite position, trial, line number), raw line, head)`` of one shard line."""


def _lines(path: Path, order: dict[str, int]) -> Iterator[_Line]:
    """The complete lines of one shard file, keyed for the merge: a torn tail (a line
    without its newline, cut off when its worker starts again) is never read."""
    try:
        fh = open(path, "rb", buffering=BUFFER)  # noqa: SIM115 (closed below)
    except FileNotFoundError:
        return  # its worker never started
    with fh:
        for lineno, raw in enumerate(fh, start=1):
            if raw.endswith(b"\n") and not raw.isspace():
                yield _keyed(path, lineno, raw, order)


def _keyed(path: Path, lineno: int, raw: bytes, order: dict[str, int]) -> _Line:
    rec = head_of(raw)  # the head is enough to order the lines
    if rec is None:
        try:
            rec = loads(raw)
        except ValueError:
            raise InputError(path, "not valid JSON", f"line {lineno}") from None
    if not isinstance(rec, dict) or "scenario_id" not in rec or "agent" not in rec:
        raise InputError(path, "not an episode record (no scenario_id or agent)", f"line {lineno}")
    trial = rec.get("trial", 0) if isinstance(rec.get("trial", 0), int) else 0
    position = order.get(str(rec["scenario_id"]), len(order))
    return (position, trial, lineno), raw, rec


def _merge(
    parts: list[Path], order: dict[str, int], out: IO[bytes]
) -> tuple[int, dict[EpisodeKey, Any]]:
    """Write the lines of ``parts`` to ``out`` in suite order (each file's lines in file
    order; a tie to the earlier file); returns how many, and the head of each episode's
    last record as :func:`~agentproc.runs.runfile.latest_records` would read it from the
    result (an episode lives in one shard: its last record is also the last merged)."""
    latest: dict[EpisodeKey, Any] = {}
    written = 0
    for _, raw, rec in heapq.merge(*(_lines(p, order) for p in parts), key=lambda t: t[0]):
        out.write(raw)
        latest[episode_key(rec)] = rec
        written += 1
    return written, latest


def merge_shards(
    folder: Path,
    spans: list[Shard],
    writer: RunWriter,
    order: dict[str, int],
) -> tuple[int, dict[EpisodeKey, EpisodeRecord]]:
    """Write the records of the files of ``spans`` into ``writer``'s run file in suite
    order (``order``: scenario id -> position), closing ``writer``, then remove the shard
    folder; returns the number of records written and the head of each episode's last
    record, without reading the result again. The run file is replaced only once the
    merge is complete and on the disk."""
    path = folder / MERGING
    with open(path, "wb", buffering=BUFFER) as out:
        written, heads = _merge(shard_files(folder, spans), order, out)
        try:
            out.flush()
            os.fdatasync(out.fileno())
        except OSError as exc:
            raise OutputError(path, f"cannot write: {exc.strerror or exc}") from None
    writer.replace_with(path)
    shutil.rmtree(folder)
    return written, heads
