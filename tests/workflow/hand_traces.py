"""One instance of a shipped workflow, for traces written by hand: its steps by tool, every
variable's value, the arguments of a step's call, and an episode played call by call."""

from __future__ import annotations

from typing import Any

from agentproc.resources import folder
from agentproc.runs.session import EpisodeSession
from agentproc.workflow.declared_suite import load_workflow, workflow_scenarios


class Instance:
    """The first instance (seed 0) of ``scenarios/workflows/NAME.toml``."""

    def __init__(self, name: str) -> None:
        self.workflow = load_workflow(folder("workflows") / f"{name}.toml")
        self.scenario = next(workflow_scenarios(self.workflow, name, count=1, seed=0))
        self.step = {s.name: s for s in self.scenario.steps}
        self.value: dict[str, Any] = {
            **self.scenario.inputs,
            **{s.output: s.value for s in self.scenario.steps},
        }
        self.listed = [s.name for s in self.scenario.steps]
        self.finish = self.scenario.finish.tool

    def args(self, tool: str, **override: Any) -> dict[str, Any]:
        """The arguments of ``tool``'s call: each operand's value, or the one given."""
        return {v: override.get(v, self.value[v]) for v in self.step[tool].operands}

    def play(self, messages: list[list[tuple[str, dict[str, Any]]]], order: str = "listed") -> Any:
        """An episode of these messages, each a list of (tool, arguments) calls."""
        session = EpisodeSession(self.scenario, "hand", order=order)  # type: ignore[arg-type]
        for message in messages:
            session.message()
            for name, arguments in message:
                session.call(name, arguments)
        return session.finish("answer")


def kinds(ep: Any) -> list[tuple[Any, ...]]:
    """An episode's labels as (kind, call index, step)."""
    return [(lab.kind.value, lab.call_index, lab.step) for lab in ep.labels]
