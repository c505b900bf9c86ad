"""What runs the spans of a run over workers: local worker processes or Ray tasks.

``processes``: N :mod:`multiprocessing` processes (forked on Linux: a worker starts with
the parent's imports and its episode function; elsewhere spawned, the job pickled), each
taking the next span as it finishes one, on a pipe of its own. :class:`~concurrent.futures.
ProcessPoolExecutor` falls short in two ways the tests hold: a worker that dies breaks the
whole pool (its other workers terminated) and its exit status is not told; and before
Python 3.14 the calls in flight cannot be stopped (Ctrl-C). After a span fails, no other is
handed out; the spans in flight finish.

``ray``: each span a Ray task (retried by Ray when its worker or machine dies, up to
:data:`MAX_RETRIES` times), Ray starting the next as a CPU frees up. Ray is imported only
when chosen (the ``ray`` extra).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import socket
import sys
from collections import deque
from collections.abc import Callable
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from agentproc.errors import ConfigError
from agentproc.runs.span import SpanEnd, SpanTask, run_span

if TYPE_CHECKING:
    from agentproc.runs.job import SuiteJob, Workers

Tick = Callable[[], None]
"""Called while the spans run (the progress bar): as a span ends, and every :data:`WAKE`
seconds while none does."""
WAKE = 0.5
"""Seconds between two ticks when no worker has anything to say."""
START = "fork" if sys.platform == "linux" else "spawn"
"""How a local worker starts: forked on Linux (it has the parent's imports and episode
function at once: two workers started and one small span run in 0.1 s, against 3.3 s with
``forkserver`` and 3.8 s spawned, each importing the run stack; medians of 5 on two cores
under a load of 9); elsewhere, where forking without starting a new program is not safe,
spawned (the job is pickled, so its episode factory must be)."""
MAX_RETRIES = 3
"""Times Ray runs a span again after its worker died."""


def _serve(job: SuiteJob, conn: Connection, parents: Connection) -> None:
    """A worker: runs the spans read from ``conn`` until ``None`` (or the parent's end)."""
    parents.close()  # the parent's end: once the parent (and later workers) are gone, EOF
    episode = None
    try:
        with contextlib.suppress(Exception):  # a fault is each span's, built again there
            episode = job.factory.episodes()  # built while the parent prepares
        while (task := conn.recv()) is not None:
            conn.send(run_span(job, task, episode))
    except EOFError:  # the parent has gone
        pass
    except KeyboardInterrupt:  # Ctrl-C reached the parent too, which says so
        sys.exit(130)


class LocalPool:
    """``count`` worker processes, started when it is made."""

    def __init__(self, job: SuiteJob, count: int) -> None:
        ctx: Any = multiprocessing.get_context(START)
        self.workers: list[tuple[Any, Connection]] = []
        self.busy: dict[int, int] = {}
        """Worker -> the span it runs now (closing terminates a busy worker at once)."""
        try:
            for _ in range(count):
                here, there = ctx.Pipe()
                proc = ctx.Process(target=_serve, args=(job, there, here), name="agentproc")
                proc.start()
                there.close()
                self.workers.append((proc, here))
        except BaseException:
            self.close()
            raise

    def __call__(self, tasks: list[SpanTask], tick: Tick) -> list[SpanEnd | None]:
        ends: list[SpanEnd | None] = [None] * len(tasks)
        todo = deque(range(len(tasks)))
        busy = self.busy
        stopped = False

        def hand(i: int) -> None:
            if todo and not stopped:
                k = todo.popleft()
                if not self.give(i, tasks[k], k):  # it has died: no span for it
                    todo.appendleft(k)

        for i in range(len(self.workers)):
            hand(i)
        while busy:
            watched = {
                c: i for i in busy for c in (self.workers[i][1], self.workers[i][0].sentinel)
            }
            for ready in wait(list(watched), WAKE):
                i = watched[ready]
                if i not in busy:
                    continue  # both its pipe and its end were ready
                proc, conn = self.workers[i]
                k = busy.pop(i)
                try:
                    if not conn.poll():  # only its end was ready
                        raise EOFError
                    end: SpanEnd = conn.recv()
                except (EOFError, OSError):  # it died in the middle of the span
                    proc.join()
                    ends[k] = SpanEnd(f"failed (exit {proc.exitcode})")
                    stopped = True
                    continue
                ends[k] = end
                stopped = stopped or end.failure is not None
                hand(i)
            tick()
        return ends

    def give(self, i: int, task: SpanTask, k: int = 0) -> bool:
        """Hand worker ``i`` span ``k``; whether it took it (``False``: it has died)."""
        try:
            self.workers[i][1].send(task)
        except OSError:
            return False
        self.busy[i] = k
        return True

    def close(self) -> None:
        """Stop every worker: a busy one is terminated, an idle one is told to end."""
        for i, (proc, conn) in enumerate(self.workers):
            if i in self.busy:
                proc.terminate()
                continue
            with contextlib.suppress(OSError):
                conn.send(None)
        for proc, conn in self.workers:
            proc.join(timeout=1)
            if proc.exitcode is None:
                proc.terminate()
                proc.join()
            conn.close()


def _ray() -> Any:
    """Ray, imported in token mode when a token is at hand (see :func:`token_mode`)."""
    token_mode(os.environ)
    try:
        import ray
    except ImportError:
        raise ConfigError(
            "--backend ray needs Ray, which is not installed: pip install 'agentproc[ray]'"
        ) from None
    return ray


def token_mode(env: Any) -> None:
    """Ray 2.52+ authenticates with a token when ``RAY_AUTH_MODE=token``. A cluster started
    on a machine whose user has a token (``~/.ray/auth_token``, ``RAY_AUTH_TOKEN`` or
    ``RAY_AUTH_TOKEN_PATH``) and no ``RAY_AUTH_MODE`` turns it on (Ray 2.59+), but a driver
    joining it by address does not, and is refused. With a token at hand and no mode set,
    the mode is set to ``token`` (in ``env``, before Ray is imported: it reads its
    configuration once): a driver with a token also joins a cluster without
    authentication. A mode set by the user is kept."""
    if env.get("RAY_AUTH_MODE"):
        return
    home = Path(env.get("HOME") or Path.home())
    if (
        env.get("RAY_AUTH_TOKEN")
        or env.get("RAY_AUTH_TOKEN_PATH")
        or (home / ".ray" / "auth_token").is_file()
    ):
        env["RAY_AUTH_MODE"] = "token"


def answers(address: str, wait: float) -> None:
    """Raise unless something listens at a Ray ``address`` (``host:port``, ``ray://...``)
    within ``wait`` seconds: ``ray.init`` waits for a cluster that is not there for minutes.
    ``auto`` (a cluster found on this machine) is left to Ray."""
    if address == "auto":
        return
    where = urlsplit(address if "://" in address else f"ray://{address}")
    try:
        host, port = where.hostname, where.port
    except ValueError:
        host, port = None, None
    if not host or port is None:
        raise ConfigError(f"--address {address!r}: expected host:port (or ray://host:port)")
    try:
        socket.create_connection((host, port), timeout=wait).close()
    except OSError as exc:
        reason = "no answer" if isinstance(exc, TimeoutError) else exc.strerror or str(exc)
        raise ConfigError(
            f"--address {address}: no Ray cluster answers there within {wait:g} s ({reason})"
        ) from None


class RayTasks:
    """Each span a Ray task on a cluster (``address``; none: a cluster started on this
    machine for the run); ``count``: how many run at once. Nothing runs outside a call."""

    def __init__(self, job: SuiteJob, count: int, address: str | None, wait: float) -> None:
        self.ray = _ray()  # a missing extra is said before any file is written
        if address is not None:
            answers(address, wait)  # as is a cluster that does not answer
        self.job, self.count, self.address = job, count, address

    def __call__(self, tasks: list[SpanTask], tick: Tick) -> list[SpanEnd | None]:
        ray = self.ray
        started_here = not ray.is_initialized()
        if started_here:
            ray.init(
                address=self.address,
                include_dashboard=False,
                log_to_driver=False,
                configure_logging=False,
            )
        try:
            remote = ray.remote(max_retries=MAX_RETRIES, num_cpus=1)(run_span)
            job = ray.put(self.job)
            refs = [remote.remote(job, t) for t in tasks]
            pending = list(refs)
            while pending:
                _, pending = ray.wait(pending, num_returns=1, timeout=WAKE)  # back as one ends
                tick()
            ends: list[SpanEnd | None] = []
            for ref in refs:
                try:
                    ends.append(ray.get(ref))
                except ray.exceptions.RayError as exc:  # retries used up: the span is kept
                    ends.append(SpanEnd(f"failed: the Ray task failed: {type(exc).__name__}"))
            return ends
        finally:
            if started_here:
                ray.shutdown()

    def close(self) -> None:
        pass


BACKENDS: dict[str, Callable[[SuiteJob, Workers], Any]] = {
    "processes": lambda job, w: LocalPool(job, w.count),
    "ray": lambda job, w: RayTasks(job, w.count, w.address, w.connect_timeout),
}
"""Backend name -> what runs the spans: called with them (in plan order) and a
:data:`Tick`, it returns how each ended (``None``: not run, after another failed); then
closed (local workers start when it is made)."""
