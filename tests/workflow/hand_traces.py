"""One instance of a shipped workflow, for traces written by hand: its steps by tool, every
variable's value, the arguments of a step's call, and an episode played call by call."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agentproc.resources import folder
from agentproc.runs.session import EpisodeSession
from agentproc.workflow.declared.suite import load_workflow, workflow_scenarios
from agentproc.workflow.scenario import Scenario


class Instance:
    """The first instance (seed 0) of ``scenarios/workflows/NAME.toml`` (of a branched
    workflow, the first whose path ``where`` accepts)."""

    def __init__(self, name: str, where: Callable[[Scenario], bool] | None = None) -> None:
        self.workflow = load_workflow(folder("workflows") / f"{name}.toml")
        count = 1 if where is None else 300
        drawn = workflow_scenarios(self.workflow, name, count=count, seed=0)
        self.scenario = next(s for s in drawn if where is None or where(s))
        self.step = {s.name: s for s in self.scenario.steps}
        self.value: dict[str, Any] = {
            **self.scenario.inputs,
            **{s.output: s.value for s in self.scenario.steps},
        }
        self.listed = [s.name for s in self.scenario.steps]
        self.finish = self.scenario.finish.tool

    def args(self, tool: str, **override: Any) -> dict[str, Any]:
        """The arguments of ``tool``'s call: each operand's value, or the one given."""
        step = self.step[tool]
        given = step.expected_call.arguments  # a branch not taken passes nothing on
        return {
            v: override.get(v, self.value[v]) for v in step.operands if v in given or v in override
        }

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
