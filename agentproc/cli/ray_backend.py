"""``run --backend ray``: each shard of a run is a Ray task.

Ray schedules the tasks over its cluster and runs a task again (up to
:data:`MAX_RETRIES` times) when the worker process or machine running it dies. A
task is an ordinary ``agentproc run --shard k/n --resume`` inside the Ray worker,
so a retried shard goes on from what its file already holds: nothing is lost and
nothing is duplicated. The shard files must be on a filesystem every node sees
(the run file's folder); Ray is imported only when this backend is chosen.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

from agentproc.errors import ConfigError

MAX_RETRIES = 3
"""Times Ray runs a shard again after its worker died."""
POLL = 0.5


def run_shard(argv: list[str], log: str) -> int:
    """One shard's ``agentproc run``, in this process, its output in ``log``."""
    from agentproc.cli import main

    folder = Path(log).parent
    shard = Path(log).stem
    (folder / f"{shard}.pid").write_text(str(os.getpid()))
    with (
        open(log, "a", encoding="utf-8") as fh,
        contextlib.redirect_stdout(fh),
        contextlib.redirect_stderr(fh),
    ):
        return main(argv)


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ConfigError(
            "--backend ray needs Ray, which is not installed: pip install 'agentproc[ray]'"
        ) from None
    return ray


def ray_runner(address: str | None) -> Any:
    """A backend for :mod:`agentproc.cli.workers` that runs shards on a Ray cluster
    (``address``; none: a cluster started on this machine for the run)."""
    ray = _ray()

    def run_all(argvs: list[list[str]], folder: Path, tick: Any) -> list[int]:
        started_here = not ray.is_initialized()
        if started_here:
            ray.init(
                address=address,
                include_dashboard=False,
                log_to_driver=False,
                configure_logging=False,
            )
        try:
            task = ray.remote(max_retries=MAX_RETRIES, num_cpus=1)(run_shard)
            refs = [
                task.remote(argv, str(folder / f"shard-{k}.log"))
                for k, argv in enumerate(argvs, start=1)
            ]
            pending = list(refs)
            while pending:
                _, pending = ray.wait(pending, num_returns=1, timeout=POLL)  # back as one ends
                tick({k for k, ref in enumerate(refs) if ref not in pending})
            codes: list[int] = []
            for ref in refs:
                try:
                    codes.append(int(ray.get(ref)))
                except ray.exceptions.RayError as exc:  # retries used up: the shard is kept
                    log = folder / f"shard-{len(codes) + 1}.log"
                    with log.open("a", encoding="utf-8") as fh:
                        fh.write(f"agentproc: the Ray task failed: {type(exc).__name__}\n")
                    codes.append(1)
            return codes
        finally:
            if started_here:
                ray.shutdown()

    return run_all
