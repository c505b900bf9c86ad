"""An episode's state as one chat-completion request gives it, and what follows from it.

:class:`Turn` is what :func:`~agentproc.agents.demo.reading.read_turn` reads from a
request: the steps, what each computes (:class:`Expression`) and how it is called
(:class:`Call`), the values known so far, a branched workflow's conditions and exits
(:class:`Exit`). What the known values settle is worked out here: a step's value without
its tool (:meth:`Turn.head_value`), whether a condition holds (:func:`holds`), the exit
that fires (:meth:`Turn.exit_at`), each formula evaluated exactly
(:mod:`agentproc.declared.formula_values`) on the values known so far.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from agentproc.arith import Op, apply_units, round_units, to_number, to_units
from agentproc.declared import formula, formula_values

Number = float | int
Value = float | int | str | bool
"""A variable's value: a number, or (a branched workflow's) a category or a boolean."""


@dataclass(frozen=True)
class Expression:
    """A step's computation as its tool describes it: ``output = a op b``."""

    output: str
    op: Op | None
    a: str
    b: str
    tree: formula.Node | None = None
    """A declared workflow's step: its formula (``op`` is then ``None``)."""
    decimals: int | None = 3
    """A declared workflow's step: the decimals its output is rounded to (``None``: a
    category or a boolean, not rounded)."""
    when: formula.Node | None = None
    """A branched workflow's step: its condition (``None``: it always runs)."""


@dataclass(frozen=True)
class Exit:
    """A branched workflow's exit, as the prompt lists it."""

    after: int
    """Steps listed before it: it is checked before step ``after + 1`` (by position)."""
    condition: formula.Node
    answer: Any
    """What the finish tool is given where it holds (a multi-field answer's: field ->
    value)."""


@dataclass(frozen=True)
class Call:
    """How a step is called: its tool, and what each argument is."""

    tool: str
    arguments: tuple[tuple[str, str], ...]
    """``(parameter, source)``: the variable whose value it takes, or a literal number."""
    output: str | None = None
    """The variable the step computes, where the request says (a calculator's result
    names none: the step the call was for is what it computes)."""


@dataclass(frozen=True)
class Turn:
    """The state of an episode, read from one chat-completion request."""

    params: dict[str, list[str]]
    """Offered tool -> its parameter names, in order."""
    steps: list[str]
    """The steps, in step order: each its tool's name (``step_K`` with the calculator)."""
    finish: str | None
    """The tool that takes the answer."""
    known: dict[str, Value]
    """Variable -> the value the conversation gave it (inputs and tool results)."""
    done: frozenset[str]
    """The tools called so far (a call that failed transiently is not counted)."""
    last_output: Value | None
    """What the last step's tool returned, once it has been called."""
    expressions: dict[str, Expression]
    """Step -> its expression, where the request states one."""
    prompt: str
    """The system and first user message: the wording the agent was given."""
    decimal: bool
    """Values are rounded to 3 decimals (else they are integers)."""
    calls: dict[str, Call]
    """Step -> how it is called."""
    answered: tuple[Number | None, ...] | None = None
    """With the calculator: what each call returned, in order (``None``: an error), the
    failed-transiently ones left out; ``None`` without the calculator."""
    conditions: dict[str, formula.Node] = field(default_factory=dict)
    """A branched workflow: step -> its condition (a step not listed always runs)."""
    exits: tuple[Exit, ...] = ()
    """A branched workflow's exits, in listed order."""
    optional: dict[str, frozenset[str]] = field(default_factory=dict)
    """Tool -> the parameters its schema does not require (a branched workflow's step
    goes without the value of a step not run)."""
    needed: frozenset[str] = frozenset()
    """Variables a tool said it needs (a call refused for want of an optional argument)."""
    answer_kind: str | None = None
    """The answer's type by the finish tool's schema: ``category``, ``boolean`` or
    (``None``) a number."""

    def fits_answer(self, value: Value) -> bool:
        """Whether ``value`` is of the answer's type."""
        if self.answer_kind == "category":
            return isinstance(value, str)
        if self.answer_kind == "boolean":
            return isinstance(value, bool)
        return not isinstance(value, bool | str)

    def head_value(self, step: str, known: dict[str, Value] | None = None) -> Value | None:
        """The value of ``step``'s output worked out without its tool (None: cannot),
        from ``known`` (default: the values the conversation gave)."""
        known = self.known if known is None else known
        e = self.expressions.get(step)
        if e is not None and e.tree is not None:
            return _formula_value(e.tree, e.decimals, known)
        if e is None or e.op is None or e.a not in known or e.b not in known:
            return None
        a, b = known[e.a], known[e.b]
        if isinstance(a, str) or isinstance(b, str):
            return None
        scale = 1000 if self.decimal else 1
        units = apply_units(e.op, to_units(a, scale), to_units(b, scale), scale)
        return None if units is None else to_number(units, scale)

    def output(self, step: str) -> str | None:
        """The variable ``step`` computes, where the request says."""
        e = self.expressions.get(step)
        return e.output if e is not None else self.calls[step].output

    def exit_at(self, after: int, known: dict[str, Value]) -> Exit | None:
        """The first exit listed after ``after`` steps whose condition holds on ``known``
        (one it cannot decide does not)."""
        return next((e for e in self.exits if e.after == after and holds(e.condition, known)), None)


def holds(condition: formula.Node, known: dict[str, Value]) -> bool | None:
    """A condition on the values ``known`` (``None``: it reads one not known)."""
    value = _evaluate(condition, known)
    return None if value is None else bool(value)


def _evaluate(tree: formula.Node, known: dict[str, Value]) -> Any:
    """A formula's exact value on ``known`` (``None``: it reads a value not known, or
    divides by zero)."""
    env = {n: _exact(known[n]) for n in set(formula.variables(tree)) if n in known}
    try:
        return formula_values.evaluate(tree, env)
    except (KeyError, TypeError):
        return None


def _exact(value: Value) -> formula.Value:
    return value if isinstance(value, bool | str) else Fraction(repr(value))


def _formula_value(
    tree: formula.Node, decimals: int | None, known: dict[str, Value]
) -> Value | None:
    exact = _evaluate(tree, known)
    if exact is None or isinstance(exact, bool | str):
        typed: Value | None = exact  # a category or a boolean is not rounded
        return typed
    shift = 10 ** (3 if decimals is None else decimals)
    value: Value = to_number(round_units(exact * shift) * (1000 // shift), 1000)
    return value
