"""``run --workers N`` on this machine: N worker processes take the spans of shards of
a run one at a time, each the next in line as it finishes the last.

The workers start before the parent takes the run file's lock (so none holds it) and
import the run stack while the parent prepares the shard folder. On Linux each is
forked from the parent, which has the command line imported already: a worker starts
about 0.1 s sooner than a new interpreter would (see :data:`FORK`). Elsewhere each is a
new ``python -m agentproc.cli.shard_worker``. The parent writes a worker its log's path,
then a span's ``run`` at a time on its standard input, and reads back each exit status.
A worker that dies (killed, out of memory) in the middle of a span leaves that span with
the worker's exit status; after a span fails no other is handed out, the spans in flight
finish, and the run stops.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import selectors
import signal
import subprocess
import sys
import traceback
from collections import deque
from collections.abc import Callable, Collection
from pathlib import Path
from typing import IO, Any

from agentproc.cli.output import EXIT_ERRORED, EXIT_FAILED, EXIT_OK

WAKE = 0.05
"""Seconds between two looks at the workers when none has anything to say."""
FORK = sys.platform == "linux" and hasattr(os, "fork")
"""Start the workers by forking the parent (Linux); otherwise as new interpreters (macOS
and Windows, where a process that forks without starting a new program is not safe)."""

ShardRun = tuple[list[str], Path]
"""One span's ``run`` words and the log its output goes to."""
Tick = Callable[[Collection[int], bool], None]


class _Forked:
    """A worker forked from this process, with as much of :class:`subprocess.Popen` as
    the pool uses: ``stdin``, ``stdout``, ``pid``, ``poll``, ``wait``, ``terminate``.

    ``others``: the parent's ends of the workers started before it, closed in the child
    (a worker holding another's standard input open would keep it from ending)."""

    def __init__(self, others: list[int]) -> None:
        to_child, from_parent = os.pipe()
        from_child, to_parent = os.pipe()
        for stream in (sys.stdout, sys.stderr):  # nothing buffered is written twice
            with contextlib.suppress(Exception):
                stream.flush()
        _reap()
        pid = os.fork()
        if pid == 0:  # pragma: no cover (the child; its exit status is what the tests see)
            code = EXIT_FAILED
            try:
                code = _child(to_child, to_parent, [from_parent, from_child, *others])
            finally:  # never back into the parent's code
                os._exit(code)
        os.close(to_child)
        os.close(to_parent)
        self.pid = pid
        self.stdin: IO[bytes] = open(from_parent, "wb")  # noqa: SIM115 (closed by the pool)
        self.stdout: IO[bytes] = open(from_child, "rb")  # noqa: SIM115 (closed by the pool)
        self.returncode: int | None = None

    def poll(self) -> int | None:
        return self._wait(os.WNOHANG)

    def wait(self) -> int:
        return self._wait(0) or 0  # without WNOHANG it has a status

    def _wait(self, flags: int) -> int | None:
        if self.returncode is None:
            try:
                pid, status = os.waitpid(self.pid, flags)
            except ChildProcessError:  # reaped elsewhere (SIGCHLD ignored): as Popen does
                self.returncode = 0
                return 0
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def terminate(self) -> None:
        if self.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGTERM)


_LINGERING: list[_Forked] = []
"""Forked workers released while still ending: reaped when the next is forked."""


def _reap() -> None:
    _LINGERING[:] = [p for p in _LINGERING if p.poll() is None]


def _child(stdin: int, statuses: int, parents: list[int]) -> int:  # pragma: no cover
    """The forked worker: its own standard input, the status channel, then serve."""
    # The parent's objects are never finalised here: a file of the parent's collected in
    # the child would close a descriptor the child may by then use for its own.
    gc.freeze()
    code = EXIT_FAILED
    try:
        import fcntl

        from agentproc.cli.shard_worker import serve

        # Copied above 0-2 first: where the parent had one of those closed, a pipe's end
        # may be there.
        high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 3) for fd in (stdin, statuses)]
        for fd in {stdin, statuses, *parents}:
            os.close(fd)
        for fd, std in zip(high, (0, 1), strict=True):
            os.dup2(fd, std)
            os.close(fd)
        sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115
        sys.stdout = sys.stderr = open(2, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
        code = serve()
    except KeyboardInterrupt:  # the parent was interrupted too, and says so
        code = 130
    except BaseException:  # the log says what went wrong; the parent sees the exit status
        with contextlib.suppress(Exception):
            traceback.print_exc()
    finally:
        with contextlib.suppress(Exception):
            sys.stderr.flush()
    return code


def _exec() -> Any:
    """A worker as a new interpreter."""
    return subprocess.Popen(
        [sys.executable, "-m", "agentproc.cli.shard_worker"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )


class _Worker:
    """One worker process and the span it runs (``None``: none)."""

    def __init__(self, others: list[int]) -> None:
        self.proc: Any = _Forked(others) if FORK else _exec()
        self.busy: int | None = None
        self.open = True

    def fds(self) -> list[int]:
        """The parent's ends of its pipes."""
        return [self.proc.stdin.fileno(), self.proc.stdout.fileno()]

    def send(self, message: Any) -> bool:
        """Write it one line; whether it could (a worker that has died cannot)."""
        try:
            self.proc.stdin.write(json.dumps(message).encode() + b"\n")
            self.proc.stdin.flush()
        except OSError:
            return False
        return True

    def give(self, k: int, run: ShardRun) -> bool:
        """Hand it span ``k``; whether it took it."""
        argv, log = run
        if not self.send([argv, str(log)]):
            return False
        self.busy = k
        return True

    def release(self) -> None:
        """No more spans: the worker ends once its last is done."""
        if self.open:
            self.open = False
            with contextlib.suppress(OSError):
                self.proc.stdin.close()

    def close(self) -> None:
        """Stop it if it still runs a span (or could be given one); one that has been
        released ends by itself."""
        if self.open or self.busy is not None:
            self.release()
            if self.proc.poll() is None:
                self.proc.terminate()
                self.proc.wait()
        elif isinstance(self.proc, _Forked) and self.proc.poll() is None:
            _LINGERING.append(self.proc)  # ending by itself: reaped later
        for stream in (self.proc.stdin, self.proc.stdout):
            with contextlib.suppress(OSError):
                stream.close()


class LocalPool:
    """A backend for :mod:`agentproc.cli.workers` that runs spans in ``workers`` local
    worker processes, started when it is made; :meth:`close` stops those still running."""

    def __init__(self, workers: int) -> None:
        self.pool: list[_Worker] = []
        try:
            for _ in range(workers):
                self.pool.append(_Worker([fd for w in self.pool for fd in w.fds()]))
        except BaseException:
            self.close()
            raise

    def __call__(self, runs: list[ShardRun], tick: Tick) -> list[int | None]:
        codes: list[int | None] = [None] * len(runs)
        todo = deque(range(len(runs)))
        stopped = False
        pool = self.pool
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
            for i, w in enumerate(pool):
                ready.register(w.proc.stdout, selectors.EVENT_READ, w)
                w.send({"log": str(folder / f"worker-{i + 1}.log")})
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
                    line = w.proc.stdout.readline()
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
            ready.close()

    def close(self) -> None:
        for w in self.pool:
            w.close()


def local_runner(workers: int) -> LocalPool:
    """``workers`` local worker processes, started now, ready to run spans."""
    return LocalPool(workers)
