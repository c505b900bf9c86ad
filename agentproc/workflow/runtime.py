"""The runtime view of a scenario that the mock tools and the monitor share.

Built once per episode from a :class:`~agentproc.workflow.scenario.Scenario`;
everything is indexed so that executing and labelling a call costs a few
dictionary lookups.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from agentproc.arith import SCALE, close, from_number, matcher, to_number
from agentproc.jsonio import plain_number
from agentproc.workflow.scenario import Scenario, ScenarioStep, param_vars_of, var_index
from agentproc.workflow.variant import Variant


@dataclass(frozen=True)
class Workflow:
    """A scenario compiled for execution and monitoring."""

    scenario: Scenario
    scale: int
    """Units per whole number (1000 in decimal mode, 1 in integer mode)."""
    tolerance: float
    """A supplied number is correct when within this many units of the value
    (the scenario's ``tolerance``, in units: half a unit, or 0 in integer mode)."""
    steps: tuple[ScenarioStep, ...]
    by_name: dict[str, ScenarioStep]
    correct: tuple[int, ...]
    """Correct value of every variable in units; index 0 is unused, 1 is S1."""
    finish_tool: str
    finish_argument: str
    number_type: str
    variant: Variant | None = None
    """The variant it is presented under (``None``: the default)."""
    holding: dict[int, tuple[int, ...]] = field(default_factory=dict)
    """Unit value -> the variables whose correct value it is, in order (S1 on)."""
    numbers: tuple[Any, ...] = ()
    """The correct value of every variable as the JSON number an agent would write
    (:meth:`to_number`), for a first check by plain equality: a supplied number equal
    to it is correct. Where that would not hold (no variable, here), a value that
    equals no number."""
    expected: tuple[float | int, ...] = ()
    """The correct value of every variable as a number (:meth:`to_number`), as a label's
    ``expected`` gives it."""
    param_vars: tuple[tuple[tuple[str, int], ...], ...] = ()
    """Each step's :attr:`~ScenarioStep.param_vars`, by step number less one."""
    targets: tuple[int, ...] = ()
    """Each step's :attr:`~ScenarioStep.target` variable, by step number less one."""
    ordered: tuple[tuple[int, ...], tuple[int, ...]] = ((), ())
    """The correct values of the variables in ascending order, and beside each its
    variable (S1 on; on equal values, the earlier variable first): a window of values
    is a bisection."""

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

    def close(self, x: float | int, units: int) -> bool:
        """Whether a supplied number equals a unit value, within :attr:`tolerance`."""
        return close(x, units, self.scale, self.tolerance)

    def matcher(self, x: float | int) -> Callable[[int], bool]:
        """:meth:`close` of ``x`` against any unit value, with ``x`` read once."""
        return matcher(x, self.scale, self.tolerance)

    def to_number(self, units: int) -> float | int:
        """Units as the JSON number an agent sees."""
        return to_number(units, self.scale)

    @cached_property
    def right_arguments(self) -> tuple[str | None, ...]:
        """Each step's right arguments as the text a call records when its arguments came
        as an object (compact JSON, the operands in order, each the correct number as
        :attr:`numbers` writes it), by step number less one; ``None`` where a number has
        no spelling sure to read back as itself (:func:`~agentproc.jsonio.plain_number`).
        A call whose text equals it supplied every argument right. Made when first asked
        for: relabelling a run does, running an episode does not."""
        spelled = list(map(plain_number, self.numbers))  # NO_NUMBER has none
        out: list[str | None] = []
        for params in self.param_vars:  # one operand or two, named S1, S2, ...
            (a, u), *rest = params
            x = spelled[u]
            if rest:
                b, y = rest[0][0], spelled[rest[0][1]]
                out.append(None if x is None or y is None else f'{{"{a}":{x},"{b}":{y}}}')
            else:
                out.append(None if x is None else f'{{"{a}":{x}}}')
        return tuple(out)

    def expected_calls(self) -> list[tuple[str, dict[str, Any]]]:
        """The reference trace: every step in order, then the finish call."""
        out: list[tuple[str, dict[str, Any]]] = [
            (s.name, {p: self.to_number(self.correct[int(p[1:])]) for p in s.params})
            for s in self.steps
        ]
        out.append((self.finish_tool, {self.finish_argument: self.to_number(self.answer)}))
        return out


def build_workflow(scenario: Scenario, variant: Variant | None = None) -> Workflow:
    """Index a scenario for the mock tools and the monitor (under ``variant``, the
    scenario is the one :func:`~agentproc.workflow.present.present` made)."""
    scale = SCALE[scenario.mode]
    steps = tuple(scenario.steps)
    inputs = scenario.inputs
    correct = [0, from_number(inputs["S1"], scale), from_number(inputs["S2"], scale)]
    correct += [from_number(s.value, scale) for s in scenario.steps]
    expected = tuple(to_number(u, scale) for u in correct)
    tolerance = scenario.tolerance * scale
    numbers = tuple(
        x if close(x, u, scale, tolerance) else NO_NUMBER
        for x, u in zip(expected, correct, strict=True)
    )
    holding: dict[int, list[int]] = {}
    for var in range(1, len(correct)):
        holding.setdefault(correct[var], []).append(var)
    return Workflow(
        scenario=scenario,
        scale=scale,
        tolerance=tolerance,
        steps=steps,
        by_name={s.expected_call.name: s for s in steps},
        correct=tuple(correct),
        finish_tool=scenario.finish.tool,
        finish_argument=scenario.finish.argument,
        number_type="integer" if scenario.mode == "integer" else "number",
        variant=variant,
        holding={value: tuple(vars_) for value, vars_ in holding.items()},
        numbers=numbers,
        expected=expected,
        # From the fields, not the steps' cached views: reading those the first time
        # was half the time of building a workflow.
        param_vars=tuple(param_vars_of(s.operands) for s in steps),
        targets=tuple(var_index(s.output) for s in steps),
        ordered=_ordered(correct),
    )


def _ordered(correct: list[int]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    pairs = sorted((correct[var], var) for var in range(1, len(correct)))
    return tuple(v for v, _ in pairs), tuple(var for _, var in pairs)


NO_NUMBER = object()
"""In :attr:`Workflow.numbers`, a value no JSON number spells exactly: equal to nothing an
agent supplies, so the fast check then always defers to the full one."""
