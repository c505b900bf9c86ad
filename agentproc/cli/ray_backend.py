"""``run --backend ray``: each span of shards of a run is a Ray task.

Ray schedules the tasks over its cluster, starting the next as a CPU frees up, and
runs a task again (up to :data:`MAX_RETRIES` times) when the worker process or machine
running it dies. A task is an ordinary ``agentproc run --shard i-j/n --resume`` inside
the Ray worker, so a retried span goes on from what its file already holds: nothing is
lost and nothing is duplicated. The shard files must be on a filesystem every node sees
(the run file's folder); Ray is imported only when this backend is chosen.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentproc.errors import ConfigError

MAX_RETRIES = 3
"""Times Ray runs a span again after its worker died."""
POLL = 0.5


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ConfigError(
            "--backend ray needs Ray, which is not installed: pip install 'agentproc[ray]'"
        ) from None
    return ray


class RayRunner:
    """A backend for :mod:`agentproc.cli.workers` that runs each span as a Ray task on a
    cluster (``address``; none: a cluster started on this machine for the run), Ray
    starting the next as a CPU frees up; ``workers`` is how many may run at once. Nothing
    runs outside a call (:meth:`close` has nothing to stop)."""

    def __init__(self, address: str | None, workers: int) -> None:
        self.ray = _ray()  # a missing extra is said before any file is written
        self.address = address
        self.workers = workers

    def __call__(self, runs: list[tuple[list[str], Path]], tick: Any) -> list[int | None]:
        from agentproc.cli.shard_worker import run_shard

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
            task = ray.remote(max_retries=MAX_RETRIES, num_cpus=1)(run_shard)
            refs = [task.remote(argv, str(log)) for argv, log in runs]
            pending = list(refs)
            while pending:
                _, pending = ray.wait(pending, num_returns=1, timeout=POLL)  # back as one ends
                ended = {k for k, ref in enumerate(refs) if ref not in pending}
                tick(ended, len(pending) < self.workers)
            codes: list[int | None] = []
            for ref, (_, log) in zip(refs, runs, strict=True):
                try:
                    codes.append(int(ray.get(ref)))
                except ray.exceptions.RayError as exc:  # retries used up: the span is kept
                    with log.open("a", encoding="utf-8") as fh:
                        fh.write(f"agentproc: the Ray task failed: {type(exc).__name__}\n")
                    codes.append(1)
            return codes
        finally:
            if started_here:
                ray.shutdown()

    def close(self) -> None:
        pass


def ray_runner(address: str | None, workers: int) -> RayRunner:
    """Spans run as Ray tasks (see :class:`RayRunner`)."""
    return RayRunner(address, workers)
