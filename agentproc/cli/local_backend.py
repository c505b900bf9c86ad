"""``run --workers N`` on this machine: N worker processes take the spans of shards of
a run one at a time, each the next in line as it finishes the last.

Each worker is one ``python -m agentproc.cli.shard_worker`` process, so the stack is
imported once per worker; the parent writes it a span's ``run`` on its standard input
and reads back the exit status. A worker that dies (killed, out of memory) in the middle
of a span leaves that span with the worker's exit status; after a span fails no other
is handed out, the spans in flight finish, and the run stops.
"""

from __future__ import annotations

import contextlib
import json
import selectors
import subprocess
import sys
from collections import deque
from collections.abc import Callable, Collection
from pathlib import Path
from typing import IO

from agentproc.cli.output import EXIT_ERRORED, EXIT_FAILED, EXIT_OK

WAKE = 0.05
"""Seconds between two looks at the workers when none has anything to say."""

ShardRun = tuple[list[str], Path]
"""One span's ``run`` words and the log its output goes to."""
Tick = Callable[[Collection[int], bool], None]


class _Worker:
    """One worker process and the span it runs (``None``: none)."""

    def __init__(self, log: Path) -> None:
        self.log: IO[bytes] = open(log, "ab")  # noqa: SIM115 (closed by close())
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "agentproc.cli.shard_worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
        )
        self.busy: int | None = None
        self.open = True

    def give(self, k: int, run: ShardRun) -> bool:
        """Hand it span ``k``; whether it took it (a worker that has died cannot)."""
        argv, log = run
        try:
            self.proc.stdin.write(json.dumps([argv, str(log)]).encode() + b"\n")  # type: ignore[union-attr]
            self.proc.stdin.flush()  # type: ignore[union-attr]
        except OSError:
            return False
        self.busy = k
        return True

    def release(self) -> None:
        """No more spans: the worker ends once its last is done."""
        if self.open:
            self.open = False
            with contextlib.suppress(OSError):
                self.proc.stdin.close()  # type: ignore[union-attr]

    def close(self) -> None:
        """Stop it if it still runs a span (or could be given one); one that has been
        released ends by itself."""
        if self.open or self.busy is not None:
            self.release()
            if self.proc.poll() is None:
                self.proc.terminate()
                self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            with contextlib.suppress(OSError):
                stream.close()  # type: ignore[union-attr]
        self.log.close()


def local_runner(workers: int) -> Callable[[list[ShardRun], Tick], list[int | None]]:
    """A backend for :mod:`agentproc.cli.workers` that runs spans in ``workers`` local
    worker processes."""

    def run_all(runs: list[ShardRun], tick: Tick) -> list[int | None]:
        codes: list[int | None] = [None] * len(runs)
        todo = deque(range(len(runs)))
        stopped = False
        pool: list[_Worker] = []
        ready = selectors.DefaultSelector()

        def hand(w: _Worker) -> None:
            while todo and not stopped:
                k = todo.popleft()
                if w.give(k, runs[k]):
                    return
                todo.appendleft(k)  # it died between two spans: its end is read below
                break
            w.release()

        try:
            folder = runs[0][1].parent if runs else Path()
            for i in range(min(workers, len(runs))):
                w = _Worker(folder / f"worker-{i + 1}.log")
                pool.append(w)
                ready.register(w.proc.stdout, selectors.EVENT_READ, w)  # type: ignore[arg-type]
                hand(w)
            # Until every span has its status (a worker's own exit is not waited for), or
            # none can get one: a span failed and those in flight are done, or every
            # worker has ended.
            while (
                None in codes
                and (not stopped or any(w.busy is not None for w in pool))
                and ready.get_map()
            ):
                for key, _ in ready.select(WAKE):
                    w = key.data
                    line = w.proc.stdout.readline()  # type: ignore[union-attr]
                    k, w.busy = w.busy, None
                    if line.strip():
                        assert k is not None
                        codes[k] = int(line)
                        stopped = stopped or codes[k] not in (EXIT_OK, EXIT_ERRORED)
                        hand(w)
                        continue
                    ready.unregister(key.fileobj)  # it has ended
                    w.proc.wait()
                    if k is not None:  # in the middle of a span
                        codes[k] = w.proc.returncode or EXIT_FAILED
                        stopped = True
                    w.release()
                finished = {k for k, c in enumerate(codes) if c is not None}
                tick(finished, not todo and any(w.busy is None for w in pool))
            return codes
        finally:
            for w in pool:
                w.close()
            ready.close()

    return run_all
