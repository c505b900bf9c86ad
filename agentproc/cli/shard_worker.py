"""One worker of ``run --workers``: runs the shards its parent hands it, one after another,
in one process (so the stack is imported once, however many shards it runs).

``python -m agentproc.cli.shard_worker`` reads one shard per line on its standard input,
``[argv, log]`` in JSON: an ordinary ``agentproc run --shard ... --out ... --resume``,
whose output goes to ``log``. When the shard is done it writes the run's exit status
on a line of its standard output, and reads the next; it ends when its input does. The
same :func:`run_shard` runs a shard as a Ray task.
"""

from __future__ import annotations

import contextlib
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


def serve() -> int:
    """Run the shards read from standard input until it ends; their exit statuses go to
    standard output, which nothing else writes to (anything written to the process's
    standard output otherwise goes to its standard error)."""
    statuses = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    parser = None
    try:
        for line in sys.stdin:
            argv, log = json.loads(line)
            if parser is None:
                from agentproc.cli import build_parser

                parser = build_parser()
            statuses.write(f"{run_shard(argv, log, parser)}\n")
            statuses.flush()
    except KeyboardInterrupt:  # the parent was interrupted too, and says so
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(serve())
