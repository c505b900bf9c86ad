"""One run in several shard files, and back: the files of a run split over workers.

A run given to N workers is cut into spans of shards (:func:`plan`), each with a file in
a folder beside the run file (``RUN.jsonl.shards-N/shard-1-16-of-64.jsonl``). A span is
run with ``--resume`` into its file, so a worker that is killed and started again loses
nothing and duplicates nothing. The files are merged in suite order into
``merged.partial`` in the folder, as far as they go, once a worker has nothing left to
do (on the core it left); when every span is done the merge is completed, renamed over
the run file, and the folder is removed. The run file is not touched before that, and
until then ``--resume`` picks the folder up again.
"""

from __future__ import annotations

import os
import shutil
from collections import deque
from collections.abc import Collection
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
    merge = ShardMerge(folder, strays, order, into="strays.partial")
    try:
        gathered = merge.finish()
    finally:
        merge.close()
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
"""The merge as written so far, in the shard folder until it is complete."""
_BATCH = 256
"""Lines a shard's reader takes in one look at its file."""

_Line = tuple[tuple[int, int, int], bytes, dict[str, Any]]
"""``((suite position, trial, line number), raw line, head)`` of one shard line."""


class _ShardLines:
    """The complete lines of one shard file, taken as the file grows: a line is taken
    only once its newline is written, so a line being written, or a torn tail its
    worker cuts off when it starts again, is never read."""

    def __init__(self, path: Path, order: dict[str, int]) -> None:
        self.path = path
        self.order = order
        self.offset = 0
        self.lineno = 0
        self.ready: deque[_Line] = deque()

    def take(self) -> _Line | None:
        """The next complete line, or ``None`` when none is written yet."""
        if not self.ready:
            self._read()
        return self.ready.popleft() if self.ready else None

    def _read(self) -> None:
        try:
            fh = open(self.path, "rb")  # noqa: SIM115 (closed below)
        except FileNotFoundError:
            return  # its worker has not started
        with fh:
            fh.seek(self.offset)
            for _ in range(_BATCH):
                raw = fh.readline()
                if not raw.endswith(b"\n"):
                    return  # the end of what is written so far
                self.offset += len(raw)
                self.lineno += 1
                if not raw.isspace():
                    self.ready.append(self._keyed(raw))

    def _keyed(self, raw: bytes) -> _Line:
        rec = head_of(raw)  # the head is enough to order the lines
        if rec is None:
            try:
                rec = loads(raw)
            except ValueError:
                raise InputError(self.path, "not valid JSON", f"line {self.lineno}") from None
        if not isinstance(rec, dict) or "scenario_id" not in rec or "agent" not in rec:
            raise InputError(
                self.path, "not an episode record (no scenario_id or agent)", f"line {self.lineno}"
            )
        trial = rec.get("trial", 0) if isinstance(rec.get("trial", 0), int) else 0
        position = self.order.get(str(rec["scenario_id"]), len(self.order))
        return (position, trial, self.lineno), raw, rec


class ShardMerge:
    """The shard files of a run merged in suite order, as far as they are written.

    A line goes out once every shard whose worker still runs has a line waiting to be
    compared with it: the result is the same, line for line, as merging the complete
    files at the end, but most of it can be written while the last worker runs (on the
    core the first to finish has left). The merge goes to :data:`MERGING` in the shard
    folder; :meth:`install` puts it in the run file once every shard is done, so the
    run file is not touched until then.
    """

    def __init__(
        self, folder: Path, parts: list[Path], order: dict[str, int], into: str = MERGING
    ) -> None:
        self.folder = folder
        self.path = folder / into
        self.parts = [_ShardLines(p, order) for p in parts]
        self.heads: list[_Line | None] = [None] * len(parts)
        self.ended = [False] * len(parts)
        self.out: IO[bytes] = open(  # noqa: SIM115 (closed by finish() or close())
            os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644),
            "wb",
            buffering=BUFFER,
        )
        self.written = 0
        self.latest: dict[EpisodeKey, EpisodeRecord] = {}
        """The head of each episode's last record, as
        :func:`~agentproc.runs.runfile.latest_records` would read it from the result.
        One shard's lines come in file order and an episode lives in one shard only, so
        an episode's last record is also the last one merged."""

    def advance(self, finished: Collection[int]) -> bool:
        """Write out every line whose place is known, where the shards numbered
        ``finished`` (from 0) will not grow any more; whether the merge is complete."""
        heads, parts = self.heads, self.parts
        while True:
            best = -1
            for i, part in enumerate(parts):
                if heads[i] is None and not self.ended[i]:
                    heads[i] = part.take()
                    if heads[i] is None:
                        if i not in finished:
                            return False  # its next line is not written yet
                        self.ended[i] = True
                        continue
                head = heads[i]
                if head is not None and (best < 0 or head[0] < heads[best][0]):  # type: ignore[index]
                    best = i
            if best < 0:
                return True
            _, raw, rec = heads[best]  # type: ignore[misc]
            heads[best] = None
            self.out.write(raw)
            self.latest[episode_key(rec)] = rec  # type: ignore[arg-type,assignment]
            self.written += 1

    def push(self) -> None:
        """Push what is merged so far to the disk, so that :meth:`install` has only the rest
        to push (the parent does it on a core a worker has left)."""
        try:
            self.out.flush()
            os.fdatasync(self.out.fileno())
        except OSError as exc:
            raise OutputError(self.path, f"cannot write: {exc.strerror or exc}") from None

    def finish(self) -> Path:
        """Complete the merge, every shard done, and push it to the disk; its file."""
        if not self.advance(range(len(self.parts))):
            raise AssertionError("finish() before every shard is done")
        try:
            self.push()
        finally:
            self.out.close()
        return self.path

    def install(self, writer: RunWriter) -> int:
        """Complete the merge and put it in place of the run file (closing ``writer``),
        then remove the shard folder; returns the number of records written."""
        writer.replace_with(self.finish())
        shutil.rmtree(self.folder)
        return self.written

    def close(self) -> None:
        """Stop without installing (the merge so far stays behind in the folder, unused)."""
        self.out.close()


def merge_shards(
    folder: Path,
    spans: list[Shard],
    writer: RunWriter,
    order: dict[str, int],
    latest: dict[EpisodeKey, EpisodeRecord] | None = None,
) -> int:
    """Write the records of the files of ``spans`` into ``writer``'s run file in suite
    order (``order``: scenario id -> position), then remove the shard folder; returns the
    number of records written. ``latest`` gets the head of each episode's last record
    (:attr:`ShardMerge.latest`), without reading the result again."""
    merge = ShardMerge(folder, shard_files(folder, spans), order)
    try:
        n = merge.install(writer)
    finally:
        merge.close()
    if latest is not None:
        latest.update(merge.latest)
    return n
