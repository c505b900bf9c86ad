"""The runtime view of a scenario that the mock tools and the monitor share.

Built once per episode, from a :class:`~agentproc.workflow.scenario.Scenario`
(:func:`build_workflow`) or straight from a procedure (:func:`procedure_workflow`);
everything is indexed so that executing and labelling a call costs a few
dictionary lookups. Labelling reads only the index (values, step graph, names); the
scenario's models are made when first asked for, so relabelling a run that stores
procedures never compiles them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache
from typing import Any

from agentproc.arith import (
    SCALE,
    SYMBOL_BASE,
    close,
    from_number,
    matcher,
    symbol_units,
    to_number,
    to_units,
    value_units,
)
from agentproc.procedures import Procedure
from agentproc.procedures.procedure import depends_of
from agentproc.workflow.branching import Branching, branching, path_fields
from agentproc.workflow.compile import compile_procedure
from agentproc.workflow.scenario import (
    FinishSpec,
    Scenario,
    ScenarioStep,
    var_index,
)
from agentproc.workflow.scenario_types import VariableType, variable_type
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

    @cached_property
    def index_of(self) -> dict[str, int]:
        """A declared workflow's variable name -> index (empty for a procedure's)."""
        return {name: i for i, name in enumerate(self.var_names) if i}

    def var_of(self, name: str) -> int:
        """The index of a variable by name (``S7`` -> 7, or a declared name's)."""
        return self.index_of[name] if self.var_names else var_index(name)

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
        """Step tool name -> step."""
        return {s.expected_call.name: s for s in self.steps}

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
        out.append((self.finish_tool, {self.finish_argument: self.to_number(self.answer)}))
        return out


def build_workflow(scenario: Scenario, variant: Variant | None = None) -> Workflow:
    """Index a scenario for the mock tools and the monitor (under ``variant``, the
    scenario is the one :func:`~agentproc.workflow.present.present` made)."""
    scale = SCALE[scenario.mode]
    if scenario.declared:
        return _declared(scenario, scale, variant)
    correct = [
        0,
        from_number(scenario.inputs["S1"], scale),
        from_number(scenario.inputs["S2"], scale),
    ]
    correct += [from_number(s.value, scale) for s in scenario.steps]
    return _indexed(
        lambda: scenario,
        scale,
        scenario.tolerance * scale,
        correct,
        [tuple(map(var_index, s.operands)) for s in scenario.steps],
        lambda: tuple(s.live for s in scenario.steps),
        scenario.finish,
        variant,
    )


def _declared(scenario: Scenario, scale: int, variant: Variant | None) -> Workflow:
    """:func:`build_workflow` of a declared workflow's scenario: named variables, any
    number of inputs, steps that read any number of variables."""
    paths, path = None, scenario.path
    if path is not None:
        data = {
            "path": {"name": path.name, "exit": path.exit},
            "exits": [vars(e) for e in scenario.exits or ()],
        }
        steps = [{"required": s.required, "when": s.when} for s in scenario.steps]
        paths = branching(data, steps, scale)
    return _named(
        lambda: scenario,
        scale,
        scenario.tolerance,
        scenario.inputs,
        [(s.output, s.operands, s.value, s.depends_on) for s in scenario.steps],
        lambda: tuple(s.live for s in scenario.steps),
        scenario.finish,
        variant,
        paths,
        scenario.types,
    )


def declared_workflow(data: dict[str, Any], make_scenario: Callable[[], Scenario]) -> Workflow:
    """:func:`build_workflow` of a declared workflow's scenario, indexed from its JSON
    (a line of its suite's ``scenarios.jsonl``, checked when it was run: the same bytes
    by their digest); the scenario (``make_scenario``) is made only when asked for, as
    :func:`procedure_workflow` does for a procedure. Raises ``KeyError``, ``TypeError``
    or ``ValueError`` for JSON of another shape (then validate it as a scenario)."""
    steps = data["steps"]
    finish = data.get("finish")
    scale = SCALE[data["mode"]]
    typed = data.get("types")
    types = None
    if typed is not None:
        types = {
            k: variable_type(v["type"], tuple(v.get("choices") or ())) for k, v in typed.items()
        }
    return _named(
        make_scenario,
        scale,
        data["tolerance"],
        data["inputs"],
        [(s["output"], s["operands"], s["value"], s["depends_on"]) for s in steps],
        lambda: tuple(bool(s["live"]) for s in steps),
        _FINISH if not finish else _finish_spec(finish.get("tool"), finish.get("argument")),
        None,
        branching(data, steps, scale),
        types,
    )


@lru_cache(maxsize=64)
def _finish_spec(tool: str | None, argument: str | None) -> FinishSpec:
    """A finish tool as a scenario's JSON gives it (kept: a suite's share one; only read)."""
    given = {"tool": tool, "argument": argument}
    return FinishSpec(**{k: v for k, v in given.items() if v is not None})


NamedStep = tuple[str, Sequence[str], Any, Sequence[int]]
"""A declared step as indexing reads it: its output, operands, value and dependencies."""


def _named(
    make_scenario: Callable[[], Scenario],
    scale: int,
    tolerance: float | int,
    inputs: Mapping[str, Any],
    steps: list[NamedStep],
    make_live: Callable[[], tuple[bool, ...]],
    finish: FinishSpec,
    variant: Variant | None,
    paths: Branching | None = None,
    types: Mapping[str, VariableType] | None = None,
) -> Workflow:
    """The workflow of a declared scenario's named variables (inputs first, then each
    step's output, indexed from 1); a branched workflow's with its path and types."""
    names = ("", *inputs, *(output for output, _, _, _ in steps))
    index = {name: i for i, name in enumerate(names) if i}
    correct = [0, *(from_number(v, scale) for v in inputs.values())]
    correct += [from_number(value, scale) for _, _, value, _ in steps]
    operands = [tuple(index[v] for v in ops) for _, ops, _, _ in steps]
    wf = _indexed(
        make_scenario, scale, tolerance * scale, correct, operands, make_live, finish, variant
    )
    param_vars = tuple(tuple((names[v], v) for v in dict.fromkeys(ops)) for ops in operands)
    fields: dict[str, Any] = {"param_vars": param_vars, "types": types}
    if types is not None or paths is not None:
        fields.update(path_fields(wf.correct, wf.expected, wf.numbers, wf.scale, paths, param_vars))
    return replace(
        wf,
        n_inputs=len(inputs),
        var_names=names,
        declared_depends=tuple(tuple(depends) for _, _, _, depends in steps),
        **fields,
    )


def procedure_workflow(
    procedure: Procedure, make_scenario: Callable[[], Scenario] | None = None
) -> Workflow:
    """:func:`build_workflow` of the procedure's scenario, indexed from the procedure
    itself: the scenario (``make_scenario``, else
    :func:`~agentproc.workflow.compile.compile_procedure` without tools) is made only
    when asked for."""
    scale = procedure.scale
    return _indexed(
        make_scenario or (lambda: compile_procedure(procedure, with_tools=False)),
        scale,
        (0.5 / scale if scale > 1 else 0) * scale,  # as the compiled scenario's tolerance
        [0, *procedure.values],
        [s.operands for s in procedure.steps],
        lambda: procedure.live,
        _FINISH,
        None,
    )


_FINISH = FinishSpec()
"""A procedure's finish tool (it has no other; only read)."""


def _indexed(
    make_scenario: Callable[[], Scenario],
    scale: int,
    tolerance: float,
    correct: list[int],
    operands: Sequence[tuple[int, ...]],
    make_live: Callable[[], tuple[bool, ...]],
    finish: FinishSpec,
    variant: Variant | None,
) -> Workflow:
    expected: tuple[float | int, ...] = (
        tuple(correct) if scale == 1 else tuple(u / scale for u in correct)  # to_number
    )
    numbers: tuple[Any, ...]
    low = min(correct)
    if low <= -SYMBOL_BASE:  # a branched workflow's categories and booleans (set apart)
        low = min((u for u in correct if u > -SYMBOL_BASE), default=0)
    if scale == 1 or (tolerance == 0.5 and -READS_BACK < low <= max(correct) < READS_BACK):
        numbers = expected  # each is close to its own value: the check would keep them all
    else:
        numbers = tuple(
            x if close(x, u, scale, tolerance) else NO_NUMBER
            for x, u in zip(expected, correct, strict=True)
        )
    return Workflow(
        make_scenario=make_scenario,
        scale=scale,
        tolerance=tolerance,
        correct=tuple(correct),
        finish_tool=finish.tool,
        finish_argument=finish.argument,
        param_vars=tuple(map(_param_vars, operands)),
        operands=tuple(operands),
        make_live=make_live,
        variant=variant,
        numbers=numbers,
        expected=expected,
    )


@lru_cache(maxsize=8192)
def _param_vars(operands: tuple[int, ...]) -> tuple[tuple[str, int], ...]:
    """A step's :attr:`Workflow.param_vars` from its operand variables: one argument per
    distinct variable. Kept per operand pair: every procedure reuses the same few."""
    return tuple((f"S{v}", v) for v in dict.fromkeys(operands))


READS_BACK = 10**15 - 1
"""Below this many units in size, a value divided by its scale reads back as itself
(:func:`~agentproc.arith.to_units`, so :func:`~agentproc.arith.close` to it at half a
unit): the division and the product back are each within 2**-53 of exact, together well
under half a unit."""
NO_NUMBER = object()
"""In :attr:`Workflow.numbers`, a value no JSON number spells exactly: equal to nothing an
agent supplies, so the fast check then always defers to the full one."""
