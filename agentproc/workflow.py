"""The runtime view of a scenario that the mock tools and the monitor share.

Built once per episode from a :class:`~agentproc.types.Scenario`; everything is
indexed so that executing and labelling a call costs a few dictionary lookups.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agentproc.arith import SCALE, Op
from agentproc.types import Scenario


def var_index(name: str) -> int:
    """``"S7"`` -> ``7``."""
    return int(name[1:])


@dataclass(frozen=True)
class StepSpec:
    """One step tool, indexed."""

    step: int
    name: str
    op: Op
    operands: tuple[int, int]
    """Left and right variable indices."""
    params: tuple[str, ...]
    """Argument names, in schema order (one per distinct operand)."""
    target: int
    depends_on: frozenset[int]
    live: bool


@dataclass(frozen=True)
class Workflow:
    """A scenario compiled for execution and monitoring."""

    scenario: Scenario
    scale: int
    steps: tuple[StepSpec, ...]
    by_name: dict[str, StepSpec]
    correct: tuple[int, ...]
    """Correct value of every variable in units; index 0 is unused, 1 is S1."""
    finish_tool: str
    finish_argument: str
    number_type: str
    tool_names: tuple[str, ...]

    @property
    def n_steps(self) -> int:
        """Number of steps N."""
        return len(self.steps)

    @property
    def answer(self) -> int:
        """The correct answer in units."""
        return self.correct[-1]

    @property
    def answer_index(self) -> int:
        """Variable index of the answer."""
        return len(self.correct) - 1

    def to_number(self, units: int) -> float | int:
        """Units as the JSON number an agent sees."""
        return units // self.scale if self.scale == 1 else units / self.scale

    def expected_calls(self) -> list[tuple[str, dict[str, Any]]]:
        """The reference trace: every step in order, then the finish call."""
        out: list[tuple[str, dict[str, Any]]] = [
            (s.name, {p: self.to_number(self.correct[var_index(p)]) for p in s.params})
            for s in self.steps
        ]
        out.append((self.finish_tool, {self.finish_argument: self.to_number(self.answer)}))
        return out


def build_workflow(scenario: Scenario) -> Workflow:
    """Index a scenario for the mock tools and the monitor."""
    scale = SCALE[scenario.mode]
    correct = [0, _units(scenario.inputs["S1"], scale), _units(scenario.inputs["S2"], scale)]
    specs = []
    for s in scenario.steps:
        operands = (var_index(s.operands[0]), var_index(s.operands[1]))
        spec = StepSpec(
            step=s.step,
            name=s.expected_call.name,
            op=Op(s.op),
            operands=operands,
            params=tuple(dict.fromkeys(s.operands)),
            target=var_index(s.output),
            depends_on=frozenset(s.depends_on),
            live=s.live,
        )
        specs.append(spec)
        correct.append(_units(s.value, scale))
    return Workflow(
        scenario=scenario,
        scale=scale,
        steps=tuple(specs),
        by_name={s.name: s for s in specs},
        correct=tuple(correct),
        finish_tool=scenario.finish.tool,
        finish_argument=scenario.finish.argument,
        number_type="integer" if scenario.mode == "integer" else "number",
        tool_names=tuple(s.name for s in specs) + (scenario.finish.tool,),
    )


def _units(x: float | int, scale: int) -> int:
    # Scenario values are exact multiples of a unit, so rounding recovers them.
    return round(x * scale)
