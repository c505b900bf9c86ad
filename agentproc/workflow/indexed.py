"""The indexed workflow: a scenario's values, step graph and names in the form the mock
tools and the monitor read (:class:`Workflow`), made by
:mod:`agentproc.workflow.runtime`'s builders once per episode. Executing and labelling a
call costs a few dictionary look-ups; the scenario's models are made only when asked for.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from agentproc.arith import (
    close,
    matcher,
    symbol_units,
    to_number,
    to_units,
    value_units,
)
from agentproc.procedures.procedure import depends_of
from agentproc.workflow.declared.branching import BranchExit, Branching
from agentproc.workflow.scenario import Scenario, ScenarioStep, var_index
from agentproc.workflow.scenario_types import VariableType
from agentproc.workflow.variant import Variant


@dataclass(frozen=True)
class Workflow:
    """A scenario indexed for execution and monitoring."""

    make_scenario: Callable[[], Scenario] = field(repr=False, compare=False)
    """Makes :attr:`scenario` when first asked for."""
    scale: int
    """Units per whole number (1000 in decimal mode, 1 in integer mode)."""
    tolerance: float
    """A supplied number is correct when within this many units of the value
    (the scenario's ``tolerance``, in units: half a unit, or 0 in integer mode)."""
    correct: tuple[int, ...]
    """Correct value of every variable in units; index 0 is unused, 1 is S1."""
    finish_tool: str
    finish_argument: str
    param_vars: tuple[tuple[tuple[str, int], ...], ...]
    """Each step's arguments as ``(parameter, variable index)`` pairs, one per distinct
    variable it reads (``("S3", 3)``), by step number less one."""
    operands: tuple[tuple[int, ...], ...]
    """Each step's variable operands (the left alone beside a constant), by step number
    less one."""
    make_live: Callable[[], tuple[bool, ...]] = field(repr=False, compare=False)
    """Makes :attr:`live` when first asked for (only a skipped step's label needs it)."""
    variant: Variant | None = None
    """The variant it is presented under (``None``: the default)."""
    numbers: tuple[Any, ...] = ()
    """The correct value of every variable as the JSON number an agent would write
    (:meth:`to_number`), for a first check by plain equality: a supplied number equal
    to it is correct. Where that would not hold (no variable, here), a value that
    equals no number."""
    expected: tuple[float | int, ...] = ()
    """The correct value of every variable as a number (:meth:`to_number`), as a label's
    ``expected`` gives it."""
    n_inputs: int = 2
    """How many variables are inputs (S1 and S2 of a procedure; a declared workflow's own)."""
    var_names: tuple[str, ...] = ()
    """A declared workflow's variable names by index (index 0 unused); empty: ``S1``, ..."""
    declared_depends: tuple[tuple[int, ...], ...] | None = None
    """A declared workflow's steps' :attr:`~ScenarioStep.depends_on` (``None``: a
    procedure's, found from its operands)."""
    given: int = 0
    """Steps ``1 .. given`` were pre-filled (:mod:`agentproc.workflow.prefill`): executed
    before the agent's first call, their values the correct ones from then on."""
    given_wrong: tuple[int, ...] = ()
    """The pre-filled steps whose call holds a slip of its own."""
    branching: Branching | None = None
    """A branched workflow's instance: its required path and conditions (``None``: every
    step is required)."""
    types: Mapping[str, VariableType] | None = None
    """A branched workflow's variables that are not numbers (``None``: every one is)."""
    answer_fields: tuple[tuple[str, int], ...] = ()
    """A multi-field answer's fields: each as ``(name, variable index)``, in order (empty:
    a single answer, given as :attr:`finish_argument`)."""

    @cached_property
    def index_of(self) -> dict[str, int]:
        """A declared workflow's variable name -> index (empty for a procedure's)."""
        return {name: i for i, name in enumerate(self.var_names) if i}

    def var_of(self, name: str) -> int:
        """The index of a variable by name (``S7`` -> 7, or a declared name's)."""
        return self.index_of[name] if self.var_names else var_index(name)

    def param_var(self, step: int, param: str) -> int:
        """The variable a step's tool takes as argument ``param`` (a loop's by their
        names in the loop: ``owner`` of ``owners__1``)."""
        for p, v in self.param_vars[step - 1]:
            if p == param:
                return v
        return self.var_of(param)

    def var_name(self, var: int) -> str:
        """The name of the variable of index ``var`` (``S7``, or a declared name)."""
        return self.var_names[var] if self.var_names else f"S{var}"

    @cached_property
    def scenario(self) -> Scenario:
        """The scenario (under a variant, the presented one)."""
        return self.make_scenario()

    @cached_property
    def depends_on(self) -> tuple[tuple[int, ...], ...]:
        """Each step's :attr:`~ScenarioStep.depends_on`, by step number less one (made when
        first asked for: labelling in listed order needs it only for a reordered step)."""
        if self.declared_depends is not None:
            return self.declared_depends
        return tuple(map(depends_of, self.operands))

    @cached_property
    def live(self) -> tuple[bool, ...]:
        """Each step's :attr:`~ScenarioStep.live`, by step number less one."""
        return self.make_live()

    @cached_property
    def holding(self) -> dict[int, list[int]]:
        """Unit value -> the variables whose correct value it is, in order (S1 on; only
        read)."""
        holding: dict[int, list[int]] = {}
        for var, value in enumerate(self.correct[1:], 1):
            holding.setdefault(value, []).append(var)
        return holding

    @cached_property
    def ordered(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """The correct values of the variables in ascending order, and beside each its
        variable (S1 on; on equal values, the earlier variable first): a window of values
        is a bisection."""
        correct = self.correct
        pairs = sorted((correct[var], var) for var in range(1, len(correct)))
        return tuple(v for v, _ in pairs), tuple(var for _, var in pairs)

    @cached_property
    def steps(self) -> tuple[ScenarioStep, ...]:
        """The scenario's steps."""
        return tuple(self.scenario.steps)

    @cached_property
    def by_name(self) -> dict[str, ScenarioStep]:
        """Step tool name -> step (a loop's tool: its first item's step, the others
        found by :meth:`item_steps`)."""
        out: dict[str, ScenarioStep] = {}
        for s in self.steps:
            out.setdefault(s.expected_call.name, s)
        return out

    @cached_property
    def item_steps(self) -> dict[str, tuple[ScenarioStep, ...]]:
        """A loop's tool name -> its steps, one per item, in item order."""
        out: dict[str, list[ScenarioStep]] = {}
        for s in self.steps:
            if s.loop is not None:
                out.setdefault(s.expected_call.name, []).append(s)
        return {k: tuple(v) for k, v in out.items()}

    @property
    def number_type(self) -> str:
        """The JSON Schema type of a number: ``integer`` or ``number``."""
        return "integer" if self.scale == 1 else "number"

    @property
    def targets(self) -> range:
        """Each step's :attr:`~ScenarioStep.target` variable, by step number less one."""
        return range(self.n_inputs + 1, len(self.correct))

    @property
    def n_steps(self) -> int:
        """Number of steps N."""
        return len(self.operands)

    @property
    def answer(self) -> int:
        """The correct answer in units (where an exit fires, its answer)."""
        b = self.branching
        if b is not None and b.fired is not None:
            return b.exits[b.fired].answer
        return self.correct[-1]

    @property
    def field_answers(self) -> tuple[int, ...]:
        """A multi-field answer's correct value of each field in units (where an exit
        fires, the exit's)."""
        b = self.branching
        if b is not None and b.fired is not None and b.exits[b.fired].fields is not None:
            return b.exits[b.fired].fields  # type: ignore[return-value]
        return tuple(self.correct[v] for _, v in self.answer_fields)

    @property
    def expected_answer(self) -> int | tuple[int, ...]:
        """What :meth:`answer_is` compares a right answer with: :attr:`answer`, or a
        multi-field answer's :attr:`field_answers`."""
        return self.field_answers if self.answer_fields else self.answer

    @staticmethod
    def exit_answer(e: BranchExit) -> int | tuple[int, ...]:
        """What :meth:`answer_is` compares an answer given at exit ``e`` with."""
        return e.answer if e.fields is None else e.fields

    def answer_is(self, answer: Any, expected: int | tuple[int, ...]) -> bool:
        """Whether a submitted answer is ``expected`` (a multi-field answer, field ->
        value: every field given, each within tolerance of its value)."""
        if isinstance(expected, tuple):
            return isinstance(answer, dict) and all(
                f in answer and self.close(answer[f], u)
                for (f, _), u in zip(self.answer_fields, expected, strict=True)
            )
        return answer is not None and not isinstance(answer, dict) and self.close(answer, expected)

    @property
    def last_step(self) -> int | None:
        """The last step the instance requires (``None``: an exit fires before any)."""
        return self.n_steps if self.branching is None else self.branching.last

    @property
    def skip(self) -> frozenset[int]:
        """The steps the instance does not require (none but on a branched workflow)."""
        return frozenset() if self.branching is None else self.branching.skip

    @property
    def answer_index(self) -> int:
        """Variable index of the answer."""
        return len(self.correct) - 1

    def close(self, x: Any, units: int) -> bool:
        """Whether a supplied value equals a unit value, within :attr:`tolerance` (a
        branched workflow's boolean or category: exactly its code)."""
        if self.types is not None and isinstance(x, bool | str):
            return symbol_units(x) == units
        return close(x, units, self.scale, self.tolerance)

    def matcher(self, x: Any) -> Callable[[int], bool]:
        """:meth:`close` of ``x`` against any unit value, with ``x`` read once."""
        if self.types is not None and isinstance(x, bool | str):
            return symbol_units(x).__eq__
        return matcher(x, self.scale, self.tolerance)

    def units(self, x: Any) -> int:
        """A supplied value in units (a branched workflow's boolean: its code)."""
        if self.types is not None:
            return value_units(x, self.scale)
        return to_units(x, self.scale)

    def to_number(self, units: int) -> float | int:
        """Units as the JSON number an agent sees."""
        return to_number(units, self.scale)

    def expected_calls(self) -> list[tuple[str, dict[str, Any]]]:
        """The reference trace: every step the instance requires in order, then the
        finish call."""
        skip = self.skip
        out: list[tuple[str, dict[str, Any]]] = [
            (s.name, {p: self.to_number(self.correct[v]) for p, v in params})
            for s, params in zip(self.steps, self.param_vars, strict=True)
            if s.step not in skip
        ]
        out.append((self.finish_tool, self.answer_arguments()))
        return out

    def answer_arguments(self) -> dict[str, Any]:
        """The right finish call's arguments: the answer, or each field's value."""
        if self.answer_fields:
            pairs = zip(self.answer_fields, self.field_answers, strict=True)
            return {f: self.to_number(u) for (f, _), u in pairs}
        return {self.finish_argument: self.to_number(self.answer)}
