"""One worker of ``run --workers``: runs the shards its parent hands it, one after another,
in one process (so the stack is imported once, however many shards it runs).

``python -m agentproc.cli.shard_worker`` (or a worker forked from its parent, see
:mod:`agentproc.cli.local_backend`) reads one shard per line on its standard input,
``[argv, log]`` in JSON: an ordinary ``agentproc run --shard ... --out ... --resume``,
whose output goes to ``log``. When the shard is done it writes the run's exit status
on a line of its standard output, and reads the next; it ends when its input does. The
same :func:`run_shard` runs a shard as a Ray task.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse


def run_shard(argv: list[str], log: str, parser: argparse.ArgumentParser | None = None) -> int:
    """One shard's ``agentproc run``, in this process, its output in ``log`` (and this
    process's id beside it, in ``<log stem>.pid``); ``parser``: the command line's parser,
    built once for the shards a worker runs."""
    from agentproc.cli import main

    Path(log).with_suffix(".pid").write_text(str(os.getpid()))
    with (
        open(log, "a", encoding="utf-8") as fh,
        contextlib.redirect_stdout(fh),
        contextlib.redirect_stderr(fh),
    ):
        return main(argv, parser)


WARM = (
    "agentproc.cli.commands",
    "agentproc.runs.runner",
    "agentproc.runs.session",
    "agentproc.workflow",
    "agentproc.workflow.load",
    "agentproc.agents.suite",
    "agentproc.agents.factory",
    "agentproc.agents.sim",
)
"""What a shard's ``run`` imports whatever its agent: imported as soon as the worker
starts, while its parent prepares the shard folder."""


def serve() -> int:
    """Run the shards read from standard input until it ends; their exit statuses go to
    standard output (file descriptor 1), which nothing else writes to: anything written to
    it otherwise goes to standard error.

    A line is ``[argv, log]``, a shard to run, or ``{"log": path}``: from then on this
    worker's standard error goes to ``path`` (appended)."""
    statuses = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    parser = None
    try:
        for name in WARM:
            importlib.import_module(name)
        for line in sys.stdin:
            message = json.loads(line)
            if isinstance(message, dict):
                _log_to(message["log"])
                continue
            argv, log = message
            if parser is None:
                from agentproc.cli import build_parser

                parser = build_parser()
            statuses.write(f"{run_shard(argv, log, parser)}\n")
            statuses.flush()
    except KeyboardInterrupt:  # the parent was interrupted too, and says so
        return 130
    return 0


def _log_to(path: str) -> None:
    """Standard error (and output) to ``path`` from now on."""
    sys.stderr.flush()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(fd, 2)
    os.dup2(fd, 1)
    os.close(fd)


if __name__ == "__main__":
    sys.exit(serve())
