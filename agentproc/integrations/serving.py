"""Runs driven from outside: each agent (each MCP session) has its own scenario stream,
one scenario open at a time, its calls labelled as they come, each finished episode
written to the one run file the agents share.

The MCP server (:mod:`agentproc.integrations.mcp_server`) is a thin protocol layer over
:class:`ServedRun`; nothing here knows MCP. Every call goes through an
:class:`~agentproc.runs.EpisodeSession` (the mock tools and the monitor ``run`` uses) and
every episode through :func:`~agentproc.runs.episode_record` and a
:class:`~agentproc.runs.RunWriter`, so a served run file replays like any other.

The agent moves on explicitly (:data:`NEXT_SCENARIO`): the open episode is then finished
and written. An episode ends ``answer`` (an answer was accepted, whatever came after
it), ``budget`` (a call came past the budget), ``no_tool_call`` (the agent moved on, or
left, without an accepted answer) or ``interrupted`` (the server was stopped by a signal
while it was open, without an accepted answer). A scenario the agent never called a tool
on is written only when it moved past it; the one open when the server stops is dropped
if it holds no call.

:class:`ServedRuns` holds the sessions of one server: each gets its own
:class:`ServedRun` (its own cursor through the suite) under its own name; the k-th
session under one name records its episodes as ``trial`` k - 1, so two sessions of one
name stay apart in the run file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentproc.labelling.order import OrderPolicy
from agentproc.runs import (
    BUDGET_EXHAUSTED,
    BudgetExhausted,
    EpisodeRecord,
    EpisodeSession,
    RunWriter,
    StopReason,
    episode_record,
    text_of,
)
from agentproc.workflow import Guard, Scenario
from agentproc.workflow.variant import Variant

NEXT_SCENARIO = "next_scenario"
"""The tool that finishes the open episode and opens the next scenario."""
DEFAULT_AGENT = "mcp-client"
"""The agent's name when neither ``--name`` nor the client's ``clientInfo`` gives one."""
RUN_COMPLETE = "Error: the run is complete: every scenario has been served."
"""What a call is told once the last scenario has been moved past."""


@dataclass(frozen=True)
class Reply:
    """What a tool call returns to the agent."""

    text: str
    error: bool
    """Whether the call executed nothing (a refusal, the budget, the run being over)."""


Sink = Callable[[EpisodeRecord], None]
"""Where a finished episode goes (a :class:`~agentproc.runs.RunWriter`'s ``write``)."""


class ServedRun:
    """Scenarios served one at a time to one agent, each finished episode given to ``out``.

    Args:
        scenarios: The scenarios, in the order they are served.
        out: The run file (created, or emptied, and locked until :meth:`close`), or a
            sink shared with other sessions (:class:`ServedRuns`).
        name: The agent's name; ``None``: the client's name (:meth:`name_client`).
        guard, variant, order, budget: As for ``run``.
        self_contained: Store each scenario in the run file, not a reference to its suite.
        trial: The ``trial`` its episodes are recorded as.
    """

    def __init__(
        self,
        scenarios: Iterator[Scenario],
        out: Path | Sink,
        *,
        name: str | None = None,
        guard: Guard = "observe",
        variant: Variant | None = None,
        order: OrderPolicy = "listed",
        budget: int | None = None,
        self_contained: bool = False,
        trial: int = 0,
    ) -> None:
        self._scenarios = scenarios
        self._options: dict[str, Any] = {
            "guard": guard,
            "variant": variant,
            "order": order,
            "budget": budget,
        }
        self.self_contained = self_contained
        self.name = name
        self.trial = trial
        self._client: str | None = None
        self.written = 0
        self._writer: RunWriter | None = None
        if isinstance(out, Path):
            self._writer = RunWriter(out)
            out = self._writer.write
        self._sink: Sink = out
        self.session: EpisodeSession | None = None
        self.opening: list[dict[str, Any]] = []
        self._open()

    @property
    def agent(self) -> str:
        """The agent's name as recorded."""
        return self.name or self._client or DEFAULT_AGENT

    def name_client(self, client: str | None) -> None:
        """The MCP client's name (its ``clientInfo``), used unless a name was given."""
        if client and self._client is None:
            self._client = client

    @property
    def tools(self) -> list[dict[str, Any]]:
        """The open scenario's tools as the agent is shown them (OpenAI function tools)."""
        return [] if self.session is None else self.session.tools

    @property
    def prompt(self) -> str:
        """The open scenario's procedure: its opening messages, as text."""
        if self.session is None:
            return "The run is complete: every scenario has been served."
        return "\n\n".join(text_of(m.get("content")) for m in self.opening)

    @property
    def scenario_id(self) -> str | None:
        """The open scenario's id (``None`` once the run is complete)."""
        return None if self.session is None else self.session.scenario.id

    def call(self, name: str, arguments: dict[str, Any] | None) -> Reply:
        """Execute and label one call on the open scenario's mock tools."""
        if self.session is None:
            return Reply(RUN_COMPLETE, True)
        try:
            rec = self.session.call(name, arguments)
        except BudgetExhausted:
            return Reply(BUDGET_EXHAUSTED, True)
        return Reply(rec.result, rec.refused is not None)

    def next_scenario(self) -> str:
        """Finish and write the open episode, open the next scenario, and say what it is."""
        if self.session is not None:
            self._write(self.session)
        self._open()
        if self.session is None:
            plural = "" if self.written == 1 else "s"
            return f"The run is complete: {self.written} episode{plural} written."
        return (
            f"Scenario {self.scenario_id} is open; the tools have changed. "
            f"Its procedure follows.\n\n{self.prompt}"
        )

    def close(self, stop: StopReason = "no_tool_call") -> None:
        """Write the open episode if it holds a call (ended ``stop`` unless answered), and
        release the run file if this run holds it."""
        try:
            if self.session is not None and self.session.calls:
                self._write(self.session, stop)
            self.session = None
        finally:
            if self._writer is not None:
                self._writer.close()

    def _open(self) -> None:
        scenario = next(self._scenarios, None)
        if scenario is None:
            self.session = None
            self.opening = []
            return
        self.session = EpisodeSession(scenario, self.agent, **self._options)
        self.opening = list(self.session.messages)

    def _write(self, session: EpisodeSession, stop: StopReason | None = None) -> None:
        session.agent = self.agent
        # An accepted answer ends it ``answer`` even past the budget: the agent, not the
        # harness, decides when it moves on (``run`` ends an episode at the budget itself).
        if session.answered:
            stop = "answer"
        elif stop is None or session.stop_reason == "budget":
            stop = session.stop_reason
        ep = session.finish(stop)
        ep.trial = self.trial
        self._sink(episode_record(ep, self.self_contained))
        self.written += 1


class ServedRuns:
    """The sessions of one server, each its own :class:`ServedRun` over a fresh stream of
    the scenarios, all written to one run file.

    The run file is opened by :meth:`open`, once the transport is up (a port that cannot
    be bound leaves no file behind, and an ``--overwrite``'s old file whole).

    Args:
        scenarios: Makes a fresh stream of the scenarios, one per session.
        out: The run file.
        name: The agents' name; ``None``: each client's own name.
        options: As for :class:`ServedRun` (``guard``, ``variant``, ``order``, ``budget``,
            ``self_contained``).
    """

    def __init__(
        self,
        scenarios: Callable[[], Iterator[Scenario]],
        out: Path,
        *,
        name: str | None = None,
        **options: Any,
    ) -> None:
        self._scenarios = scenarios
        self.out = out
        self.name = name
        self._options = options
        self._writer: RunWriter | None = None
        self._runs: dict[int, tuple[object, ServedRun]] = {}
        self._trials: dict[str, int] = {}
        self._finished = 0
        self.stop: StopReason = "no_tool_call"
        """How a session's open episode ends when the session does (``interrupted`` once
        the server is being stopped by a signal)."""

    def open(self) -> RunWriter:
        """Create (or empty) the run file and hold it until :meth:`close`."""
        if self._writer is None:
            self._writer = RunWriter(self.out)
        return self._writer

    @property
    def written(self) -> int:
        """Episodes written so far, over every session."""
        return self._finished + sum(run.written for _, run in self._runs.values())

    def session(self, key: object, client: str | None) -> ServedRun:
        """The run of the session ``key`` (any object that lives as long as the session),
        started on its first request under ``--name``, its client's name or the default."""
        found = self._runs.get(id(key))
        if found is not None and found[0] is key:
            return found[1]
        writer = self.open()
        name = self.name or client or DEFAULT_AGENT
        trial = self._trials.get(name, 0)
        self._trials[name] = trial + 1
        run = ServedRun(self._scenarios(), writer.write, name=name, trial=trial, **self._options)
        self._runs[id(key)] = (key, run)
        return run

    def end(self, key: object, stop: StopReason | None = None) -> None:
        """The session ``key`` has ended: write its open episode if it holds a call."""
        found = self._runs.get(id(key))
        if found is not None and found[0] is key:
            del self._runs[id(key)]
            found[1].close(stop or self.stop)
            self._finished += found[1].written

    def close(self, stop: StopReason | None = None) -> None:
        """Write every session's open episode that holds a call, and release the file."""
        try:
            for key, _ in list(self._runs.values()):
                self.end(key, stop)
        finally:
            if self._writer is not None:
                self._writer.close()
