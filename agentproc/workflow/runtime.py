"""The runtime view of a scenario that the mock tools and the monitor share.

Built once per episode, from a :class:`~agentproc.workflow.scenario.Scenario`
(:func:`build_workflow`) or straight from a procedure (:func:`procedure_workflow`);
everything is indexed so that executing and labelling a call costs a few
dictionary lookups. Labelling reads only the index (values, step graph, names); the
scenario's models are made when first asked for, so relabelling a run that stores
procedures never compiles them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from agentproc.arith import (
    SCALE,
    SYMBOL_BASE,
    close,
    from_number,
)
from agentproc.procedures import Procedure
from agentproc.workflow.compile import compile_procedure
from agentproc.workflow.declared.branching import Branching, branching, path_fields
from agentproc.workflow.indexed import Workflow as Workflow
from agentproc.workflow.scenario import (
    FinishSpec,
    Scenario,
    var_index,
)
from agentproc.workflow.scenario_types import VariableType, variable_type
from agentproc.workflow.variant import Variant


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
        tuple(scenario.answer_fields or ()),
        loops=[None if s.loop is None else s.loop.parameters for s in scenario.steps],
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
        tuple(data.get("answer_fields") or ()),
        loops=[(s.get("loop") or {}).get("parameters") for s in steps],
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
    answer_fields: tuple[str, ...] = (),
    loops: Sequence[Mapping[str, str] | None] = (),
) -> Workflow:
    """The workflow of a declared scenario's named variables (inputs first, then each
    step's output, indexed from 1); a branched workflow's with its path and types (and a
    multi-field answer's fields); ``loops``: a step of a loop's parameter of each operand
    it renames."""
    shape = _shape(
        tuple(inputs), tuple((output, tuple(ops), tuple(deps)) for output, ops, _, deps in steps)
    )
    correct = [0, *_units(inputs.values(), scale), *_units([v for _, _, v, _ in steps], scale)]
    expected, numbers = _readings(scale, tolerance * scale, correct)
    param_vars = shape.param_vars
    if any(loops):  # a loop's tool takes its arguments by their names in the loop
        param_vars = tuple(
            pv if not given else tuple((given.get(p, p), v) for p, v in pv)
            for pv, given in zip(param_vars, loops, strict=True)
        )
    fields: dict[str, Any] = {
        "param_vars": param_vars,
        "types": types,
        "expected": expected,
        "numbers": numbers,
    }
    if answer_fields:
        index = shape.index
        fields["answer_fields"] = tuple((f, index[f]) for f in answer_fields)
    if types is not None or paths is not None:
        fields.update(path_fields(correct, expected, numbers, scale, paths, param_vars))
    return Workflow(
        make_scenario=make_scenario,
        scale=scale,
        tolerance=tolerance * scale,
        correct=tuple(correct),
        finish_tool=finish.tool,
        finish_argument=finish.argument,
        operands=shape.operands,
        make_live=make_live,
        variant=variant,
        n_inputs=len(inputs),
        var_names=shape.names,
        declared_depends=shape.depends,
        **fields,
    )


def _units(values: Iterable[Any], scale: int) -> list[int]:
    """:func:`~agentproc.arith.from_number` of each value (a plain number's inline: a
    scenario has many)."""
    return [
        round(v * scale) if type(v) is float or type(v) is int else from_number(v, scale)
        for v in values
    ]


@dataclass(frozen=True)
class _Shape:
    """What indexing a declared scenario reads of its variables' names and its step graph
    alone: the same for every instance of a workflow (kept by :func:`_shape`)."""

    names: tuple[str, ...]
    """Each variable's name by index (index 0 unused)."""
    operands: tuple[tuple[int, ...], ...]
    """Each step's operand variables, by index."""
    param_vars: tuple[tuple[tuple[str, int], ...], ...]
    """Each step's arguments: one ``(name, index)`` per distinct variable it reads."""
    depends: tuple[tuple[int, ...], ...]
    """Each step's ``depends_on``."""
    index: Mapping[str, int]
    """Each variable's index by name (only read)."""


@lru_cache(maxsize=256)
def _shape(
    inputs: tuple[str, ...], steps: tuple[tuple[str, tuple[str, ...], tuple[int, ...]], ...]
) -> _Shape:
    """The :class:`_Shape` of a declared scenario with these input names and these steps
    (each its output, operands and dependencies), found once per process for all the
    instances of a workflow: the key is all it is made of, so two workflows that share
    step names but not their operands get their own."""
    names = ("", *inputs, *(output for output, _, _ in steps))
    index = {name: i for i, name in enumerate(names) if i}
    operands = tuple(tuple(index[v] for v in ops) for _, ops, _ in steps)
    param_vars = tuple(tuple((names[v], v) for v in dict.fromkeys(ops)) for ops in operands)
    return _Shape(names, operands, param_vars, tuple(deps for _, _, deps in steps), index)


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
    expected, numbers = _readings(scale, tolerance, correct)
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


def _readings(
    scale: int, tolerance: float, correct: list[int]
) -> tuple[tuple[float | int, ...], tuple[Any, ...]]:
    """:attr:`Workflow.expected` and :attr:`Workflow.numbers` of the correct values in
    units (``tolerance`` in units)."""
    expected: tuple[float | int, ...] = (
        tuple(correct) if scale == 1 else tuple([u / scale for u in correct])  # to_number
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
    return expected, numbers


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
