"""One span of shards of a suite, run where a worker runs it (a local worker process or a
Ray task): the span's scenarios into its own file, with ``resume``, so a span run again
after its worker died goes on from what its file holds. Its output goes to its log, and
its process id beside it (``<span>.pid``)."""

from __future__ import annotations

import contextlib
import os
import traceback
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console

from agentproc.errors import AgentprocError, OutputError
from agentproc.runs.split import Shard

if TYPE_CHECKING:
    from agentproc.runs.job import SuiteJob
    from agentproc.runs.runner import EpisodeFn


@dataclass(frozen=True)
class SpanTask:
    """A span of shards, the file its episodes go to and its log."""

    span: Shard
    out: Path
    log: Path


@dataclass(frozen=True)
class SpanEnd:
    """How a span's run ended."""

    failure: str | None = None
    """What went wrong (``None``: it ran to its end)."""
    input_error: bool = False
    """The failure was the input's (a bad suite line, an unknown agent)."""
    errored: bool = False
    """The span's first episodes all failed, so it stopped (no other span is handed out)."""


def run_span(job: SuiteJob, task: SpanTask, episode: EpisodeFn | None = None) -> SpanEnd:
    """Run one span of ``job`` in this process, with ``episode`` (``None``: built from the
    job's factory now). Faults become the span's :class:`SpanEnd` (and a line in its log);
    an interruption is raised."""
    from agentproc.runs.loop import run_on_loop
    from agentproc.runs.runner import arun_suite, select
    from agentproc.runs.split import in_shard

    task.log.with_suffix(".pid").write_text(str(os.getpid()))
    with (
        open(task.log, "a", encoding="utf-8") as log,
        contextlib.redirect_stdout(log),
        contextlib.redirect_stderr(log),
    ):
        try:
            episode = episode or job.factory.episodes()
            if isinstance(job.suite, Path):
                from agentproc.workflow import load_scenarios

                scenarios = load_scenarios(job.suite, partial(in_shard, shard=task.span))
            else:
                scenarios = iter(job.suite)
            run = arun_suite(
                select(scenarios, task.span),
                job.agent,
                episode,
                task.out,
                resume=True,
                console=Console(file=log, soft_wrap=True),
                **job.options,
            )
            summary = run_on_loop(run)
        except AgentprocError as exc:
            print(f"agentproc: error: {exc}", file=log)
            return SpanEnd(f"failed: {exc}", input_error=not isinstance(exc, OutputError))
        except Exception as exc:  # a bug: its traceback is in the log
            traceback.print_exc(file=log)
            return SpanEnd(f"failed: {type(exc).__name__}: {exc} (see {task.log})")
    if summary.aborted is not None:
        return SpanEnd(f"stopped: {summary.aborted}", errored=True)
    return SpanEnd()
