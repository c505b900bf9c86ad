"""The run-file writer: one process appends, under a lock, and every line survives a kill.

Kept apart from reading (:mod:`agentproc.runs.runfile`) and light to import: the parent
of ``run --workers`` holds a run file's lock and merges the shards with it alone.
"""

from __future__ import annotations

import contextlib
import fcntl
import mmap
import os
import shutil
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, cast

from agentproc.errors import InputError, OutputError
from agentproc.jsonio import cannot_write
from agentproc.runs.layout import line_of
from agentproc.runs.redact import needs_redaction, redact_values
from agentproc.runs.specs import SharedSpecs

if TYPE_CHECKING:
    from agentproc.runs.records import EpisodeRecord

SYNC_EVERY = 1.0
"""Seconds between two disk syncs of a run file (every line is flushed at once)."""
BUFFER = 1 << 20
"""Bytes of lines :meth:`RunWriter.write_raw` gathers before writing them out."""


def _lock(path: Path, fd: int) -> None:
    """Take the exclusive advisory lock of a run file on ``fd`` (closed if it is held)."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise InputError(
            path, "another agentproc process is writing this run file; wait for it"
        ) from None


@contextlib.contextmanager
def held(path: Path) -> Iterator[None]:
    """Hold the lock of the run file ``path`` (which exists) without changing a byte of
    it: a run that replaces it writes elsewhere meanwhile (see
    :func:`~agentproc.runs.parallel.run_suite`)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError as exc:
        raise InputError(path, f"cannot read it: {exc.strerror or exc}") from None
    _lock(Path(path), fd)
    try:
        yield
    finally:
        os.close(fd)


class RunWriter:
    """Appends episodes to a run file, one flushed line each, as its only writer.

    The writer holds an exclusive advisory lock (``fcntl.flock``) on the file
    from opening to closing; a second writer (another ``run``, ``--resume`` or
    ``--overwrite`` on the same file) is refused with :class:`~agentproc.errors.InputError`
    before it changes a byte. Without ``append`` the file is emptied only once the
    lock is held.
    """

    def __init__(self, path: Path, append: bool = False, sync_every: float = SYNC_EVERY) -> None:
        self.path = Path(path)
        self.sync_every = sync_every
        self._specs = SharedSpecs()
        self._synced = time.monotonic()
        try:
            if self.path.parent != Path():
                self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        except IsADirectoryError:
            raise InputError(self.path, "is a folder, not a run file") from None
        except OSError as exc:
            raise cannot_write(self.path, exc) from None
        _lock(self.path, fd)
        if not append and stat.S_ISREG(os.fstat(fd).st_mode):
            os.ftruncate(fd, 0)
        # Bytes, with a buffer a merge's lines fill before each write to the kernel.
        self._fh: IO[bytes] = open(fd, "ab", buffering=BUFFER)  # noqa: SIM115 (closed by close())
        self.torn_bytes = drop_torn_tail(self.path) if append else 0
        """Bytes of a torn last line cut off when the file was opened to append."""

    def write(self, record: EpisodeRecord) -> None:
        """Write one episode record and push it to the disk.

        The line is flushed to the operating system at once (a process killed
        after this call loses nothing), and pushed to the disk (``fsync``) at most
        every ``sync_every`` seconds and on :meth:`close`, which bounds what a power
        cut can take without paying a disk sync per episode.

        Every line passes through :func:`~agentproc.runs.redact.redact`: an
        API key a model echoes, or an error message that quotes a header, never
        reaches the file. A failed write (a full disk) raises
        :class:`~agentproc.errors.OutputError`; the lines written before it stay.
        """
        rec = self._specs.share(cast(dict[str, Any], record))  # a long spec: once per file
        line = line_of(rec)
        if needs_redaction(line):
            line = line_of(redact_values(rec))
        try:
            self._fh.write(line.encode("utf-8"))
            self._fh.flush()  # in the kernel now: a killed process loses nothing
            if time.monotonic() - self._synced >= self.sync_every:
                os.fsync(self._fh.fileno())
                self._synced = time.monotonic()
        except OSError as exc:
            raise OutputError(self.path, f"cannot write: {exc.strerror or exc}") from None

    def truncate(self) -> None:
        """Empty the file (the lock is kept)."""
        self._fh.flush()
        os.ftruncate(self._fh.fileno(), 0)

    def write_raw(self, line: bytes | str) -> None:
        """Append one line already in run-file form (a merge); :meth:`sync` pushes it."""
        try:
            self._fh.write(line if isinstance(line, bytes) else line.encode("utf-8"))
        except OSError as exc:
            raise OutputError(self.path, f"cannot write: {exc.strerror or exc}") from None

    def sync(self) -> None:
        """Push everything written to the disk."""
        try:
            self._fh.flush()
            os.fsync(self._fh.fileno())
        except OSError as exc:
            raise OutputError(self.path, f"cannot write: {exc.strerror or exc}") from None

    def replace_with(self, source: Path) -> None:
        """Put the complete file ``source``, already pushed to the disk and on the same
        filesystem, in the run file's place, and close the writer.

        ``source`` is renamed over the run file (what the run file's name points to),
        with the run file's permissions: no byte is copied, and the run file holds its
        old lines or the new ones, never a part of either. Where it cannot be renamed
        (another filesystem), its lines are copied in instead.
        """
        target = self.path.resolve()
        try:
            shutil.copymode(target, source)
            os.replace(source, target)
            folder = os.open(target.parent, os.O_RDONLY)
            try:
                os.fsync(folder)  # the new name is on the disk too
            finally:
                os.close(folder)
        except OSError:
            self.truncate()
            with open(source, "rb") as fh:
                for block in iter(lambda: fh.read(BUFFER), b""):
                    self.write_raw(block)
            self.sync()
        self.close()

    def close(self) -> None:
        """Release the lock and close the file."""
        if self._fh.closed:
            return
        # A write that already failed said so; the lock goes with the descriptor.
        with contextlib.suppress(OSError):
            self._fh.flush()
            os.fsync(self._fh.fileno())
        with contextlib.suppress(OSError):
            self._fh.close()

    def __enter__(self) -> RunWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def drop_torn_tail(path: Path) -> int:
    """Cut an unterminated last line off a run file before appending; returns bytes cut."""
    path = Path(path)
    if not path.exists():
        return 0
    with open(path, "rb+") as fh:
        size = fh.seek(0, os.SEEK_END)
        if size == 0:  # (an empty file cannot be mapped)
            return 0
        # Everything after the last newline (found from the end) is the torn line.
        with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            keep = mapped.rfind(b"\n") + 1
        if keep < size:
            fh.truncate(keep)
        return size - keep
