"""A run over several workers, described: how many and where (:class:`Workers`), and what
each worker runs (:class:`SuiteJob`: spans of a suite, each into its own file)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from agentproc.runs.runner import EpisodeFn
from agentproc.runs.shards import plan
from agentproc.runs.split import Shard
from agentproc.workflow import Scenario

Backend = Literal["processes", "ray"]
"""Where the spans run: local worker processes, or Ray tasks on a cluster."""


@dataclass(frozen=True)
class Workers:
    """How many processes run a suite, and where.

    Examples:
        >>> Workers(2).parallel, Workers(1).parallel, Workers(1, "ray").parallel
        (True, False, True)
    """

    count: int = 1
    backend: Backend = "processes"
    address: str | None = None
    """With ``ray``: the cluster to join (``None``: one started on this machine for the run)."""
    connect_timeout: float = 120.0
    """With ``ray`` and an ``address``: seconds the cluster has to answer."""

    def fit(self, scenarios: int) -> tuple[Workers, str | None]:
        """At most one worker per scenario and, for local processes, one per CPU (a
        process more only shares a core); with why, when capped.

        Examples:
            >>> Workers(8, "ray").fit(3)[1]
            '--workers 8 capped at 3 (the scenarios of the suite)'
            >>> Workers(1000).fit(5000)[0].count == min(5000, os.cpu_count() or 1)
            True
        """
        cap, why = max(1, scenarios), "the scenarios of the suite"
        cpus = os.cpu_count() or 1
        if self.backend == "processes" and cpus < cap:
            cap, why = cpus, "the CPUs of this machine"
        if self.count <= cap:
            return self, None
        return replace(self, count=cap), f"--workers {self.count} capped at {cap} ({why})"

    @property
    def parallel(self) -> bool:
        """Whether the run is cut into spans (more than one worker, or a Ray cluster)."""
        return self.count > 1 or self.backend == "ray"


@runtime_checkable
class EpisodeFactory(Protocol):
    """Builds the episode function where the episodes run: in each worker (a model's
    connections are its own); for Ray or a process that is not forked, picklable."""

    def episodes(self) -> EpisodeFn:
        """The episode function."""
        ...


@dataclass(frozen=True)
class Given:
    """An episode function built already: a forked worker inherits it (Ray pickles it
    with cloudpickle, which takes closures over what pickles)."""

    fn: EpisodeFn

    def episodes(self) -> EpisodeFn:
        return self.fn


@dataclass(frozen=True)
class SuiteJob:
    """What every worker runs: spans of a suite, each into its own file."""

    suite: Path | tuple[Scenario, ...]
    """A suite folder or scenario file (a span compiles only its own scenarios), or the
    scenarios themselves."""
    agent: str
    factory: EpisodeFactory
    options: dict[str, Any]
    """:func:`~agentproc.runs.arun_suite`'s options: ``concurrency``, ``mode``, ``trials``,
    ``variant``, ``self_contained``, ``name``."""

    def order(self) -> dict[str, int]:
        """Scenario id -> its position in the suite, read without compiling anything."""
        from agentproc.procedures.files import SCENARIOS

        suite = self.suite
        if isinstance(suite, tuple):
            ids: Iterator[str] = (s.id for s in suite)
        elif suite.is_dir() and not (suite / SCENARIOS).is_file():
            from agentproc.procedures.files import procedure_ids
            from agentproc.procedures.suites import procedure_id

            ids = procedure_ids(suite, procedure_id)
        else:  # a scenario file, or a declared workflow's suite
            from agentproc.workflow import load_scenarios

            ids = (s.id for s in load_scenarios(suite))
        return {sid: i for i, sid in enumerate(ids)}

    def spans(self, workers: int) -> list[Shard]:
        """Many spans when each worker keeps a core busy (one episode at a time); one per
        worker when a model server sets the pace with several episodes in flight (a small
        span would end with fewer in flight)."""
        return plan(workers, fine=self.options.get("concurrency", 1) == 1)
