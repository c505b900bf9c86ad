"""The runtime view of a scenario that the mock tools and the monitor share.

Built once per episode from a :class:`~agentproc.types.Scenario`; everything is
indexed so that executing and labelling a call costs a few dictionary lookups.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

from agentproc.arith import SCALE, Op
from agentproc.types import Scenario


def var_index(name: str) -> int:
    """``"S7"`` -> ``7``."""
    return int(name[1:])


class StepSpec(NamedTuple):
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

    scenario: Scenario | None
    """The scenario, or ``None`` for a workflow read straight from a run file."""
    scale: int
    steps: tuple[StepSpec, ...]
    by_name: dict[str, StepSpec]
    correct: tuple[int, ...]
    """Correct value of every variable in units; index 0 is unused, 1 is S1."""
    finish_tool: str
    finish_argument: str
    number_type: str
    holders: dict[int, tuple[int, ...]]
    """Correct value in units -> the variables that have it (for look-back confusions)."""

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
    steps = [
        (s.step, s.expected_call.name, s.op, s.operands, s.output, s.depends_on, s.live, s.value)
        for s in scenario.steps
    ]
    return _assemble(
        scenario,
        scenario.mode,
        scenario.inputs,
        steps,
        scenario.finish.tool,
        scenario.finish.argument,
    )


def workflow_from_dict(d: dict[str, Any]) -> Workflow:
    """Index a scenario straight from its JSON form, without building the pydantic model.

    This is the fast path for labelling run files; it checks what the monitor
    needs and raises ``KeyError``, ``TypeError`` or ``ValueError`` naming the field.
    """
    try:
        mode = d["mode"]
        if mode not in SCALE:
            raise ValueError(f"mode: expected one of {', '.join(SCALE)}")
        steps = [
            (
                s["step"],
                s["expected_call"]["name"],
                Op(s["op"]),
                s["operands"],
                s["output"],
                s["depends_on"],
                bool(s["live"]),
                s["value"],
            )
            for s in d["steps"]
        ]
        finish = d.get("finish") or {}
        return _assemble(
            None,
            mode,
            d["inputs"],
            steps,
            finish.get("tool", "submit_answer"),
            finish.get("argument", "answer"),
        )
    except KeyError as exc:
        raise KeyError(f"missing field {exc.args[0]!r}") from None


def _assemble(
    scenario: Scenario | None,
    mode: str,
    inputs: dict[str, Any],
    steps: list[tuple[Any, ...]],
    finish_tool: str,
    finish_argument: str,
) -> Workflow:
    scale = SCALE[mode]
    correct = [0, _units(inputs["S1"], scale), _units(inputs["S2"], scale)]
    specs = []
    for number, name, op, operands, output, depends_on, live, value in steps:
        specs.append(
            StepSpec(
                number,
                name,
                Op(op),
                (var_index(operands[0]), var_index(operands[1])),
                tuple(dict.fromkeys(operands)),
                var_index(output),
                frozenset(depends_on),
                live,
            )
        )
        correct.append(_units(value, scale))
    return Workflow(
        scenario=scenario,
        scale=scale,
        steps=tuple(specs),
        by_name={s.name: s for s in specs},
        correct=tuple(correct),
        finish_tool=finish_tool,
        finish_argument=finish_argument,
        number_type="integer" if mode == "integer" else "number",
        holders=_holders(correct),
    )


def _holders(correct: list[int]) -> dict[int, tuple[int, ...]]:
    out: dict[int, list[int]] = {}
    for var, units in enumerate(correct[1:], start=1):
        out.setdefault(units, []).append(var)
    return {k: tuple(v) for k, v in out.items()}


def _units(x: float | int, scale: int) -> int:
    # Scenario values are exact multiples of a unit, so rounding recovers them.
    return round(x * scale)
