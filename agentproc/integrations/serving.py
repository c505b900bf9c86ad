"""A run driven from outside: one scenario open at a time, its calls labelled as they come,
each finished episode written to the run file.

The MCP server (:mod:`agentproc.integrations.mcp_server`) is a thin protocol layer over
:class:`ServedRun`; nothing here knows MCP. Every call goes through an
:class:`~agentproc.runs.EpisodeSession` (the mock tools and the monitor ``run`` uses) and
every episode through :func:`~agentproc.runs.episode_record` and a
:class:`~agentproc.runs.RunWriter`, so a served run file replays like any other.

The agent moves on explicitly (:data:`NEXT_SCENARIO`): the open episode is then finished
and written. An episode ends ``answer`` (an answer was accepted, whatever came after
it), ``budget`` (a call came past the budget) or ``no_tool_call`` (the agent moved on, or
left, without an accepted answer). A scenario the agent never called a tool on is written
only when it moved past it; the one open when the server stops is dropped if it holds no
call.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentproc.labelling.order import OrderPolicy
from agentproc.runs import (
    BUDGET_EXHAUSTED,
    BudgetExhausted,
    EpisodeSession,
    RunWriter,
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


class ServedRun:
    """Scenarios served one at a time to one agent, written to ``out`` as they finish.

    Args:
        scenarios: The scenarios, in the order they are served.
        out: The run file (created, or emptied, and locked for the server's life).
        name: The agent's name; ``None``: the client's name (:meth:`name_client`).
        guard, variant, order, budget: As for ``run``.
        self_contained: Store each scenario in the run file, not a reference to its suite.
    """

    def __init__(
        self,
        scenarios: Iterator[Scenario],
        out: Path,
        *,
        name: str | None = None,
        guard: Guard = "observe",
        variant: Variant | None = None,
        order: OrderPolicy = "listed",
        budget: int | None = None,
        self_contained: bool = False,
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
        self._client: str | None = None
        self.written = 0
        self._writer = RunWriter(out)
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

    def close(self) -> None:
        """Write the open episode if it holds a call, and release the run file."""
        try:
            if self.session is not None and self.session.calls:
                self._write(self.session)
            self.session = None
        finally:
            self._writer.close()

    def _open(self) -> None:
        scenario = next(self._scenarios, None)
        if scenario is None:
            self.session = None
            self.opening = []
            return
        self.session = EpisodeSession(scenario, self.agent, **self._options)
        self.opening = list(self.session.messages)

    def _write(self, session: EpisodeSession) -> None:
        session.agent = self.agent
        # An accepted answer ends it ``answer`` even past the budget: the agent, not the
        # harness, decides when it moves on (``run`` ends an episode at the budget itself).
        ep = session.finish("answer" if session.answered else session.stop_reason)
        self._writer.write(episode_record(ep, self.self_contained))
        self.written += 1
