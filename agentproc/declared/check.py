"""A workflow file's checks, both formats: names, tools, formulas, types, conditions, exits.

:func:`check_spec` turns a valid :class:`~agentproc.declared.file.WorkflowSpec`
into a :class:`~agentproc.declared.file.DeclaredWorkflow` or raises one
:class:`~agentproc.errors.InputError` naming the file, the step and the field. A file of
format 1 reads the number grammar and refuses what only format 2 has; a file of format 2
reads the typed grammar (:mod:`agentproc.declared.formula_types`): every formula, ``when``
and exit is type-checked here, nothing is evaluated.

A step's dependencies are the steps whose outputs its formula or its ``when`` reads, and
(format 2) those read by the conditions of the exits listed before it: an exit is a
barrier, so a step after it waits for what decides whether the procedure ends there.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction

from agentproc.declared import formula
from agentproc.declared.answer import (
    check_exit_types,
    check_fields,
    exit_fields,
    live_fields,
)
from agentproc.declared.formula import (
    CHOOSERS,
    DATE_FUNCTIONS,
    FUNCTIONS,
    LITERALS,
    FormulaError,
    Node,
)
from agentproc.declared.formula_types import (
    BOOLEAN,
    DATE,
    NUMBER,
    STRING,
    TableType,
    Type,
    check,
)
from agentproc.declared.formula_values import bind
from agentproc.declared.inputs import (
    _NAME,
    MAX_DECIMALS,
    NAME,
    RESERVED_TOOLS,
    InputSpec,
)
from agentproc.declared.spec import (
    DeclaredWorkflow,
    Exit,
    ExitSpec,
    StepSpec,
    WorkflowSpec,
)
from agentproc.declared.tables import check_tables
from agentproc.errors import InputError

_NEEDS_2 = "typed values, conditions and exits need format = 2"


def check_spec(spec: WorkflowSpec, where: str = "workflow") -> DeclaredWorkflow:
    """The checked workflow: an input or output name that is not one or is taken twice, a
    tool name used twice or clashing with the finish tool, a formula that does not parse
    or reads an unknown, own or later variable (a cycle, when that later step reads this
    one), an answer that is not the last step's output; in format 2, a formula, condition
    or exit answer of the wrong type."""
    typed = spec.format == 2
    check_fields(spec, where)
    if not typed:
        _format_one(spec, where)
    for name in spec.inputs:
        _variable_name(name, where, f"inputs.{name}", typed)
    types: dict[str, Type] | None = (
        {n: _input_type(i) for n, i in spec.inputs.items()} if typed else None
    )
    table_types, tables, hidden = check_tables(spec, where)
    defined: dict[str, int] = {name: 0 for name in spec.inputs}
    outputs = {s.output: i for i, s in enumerate(spec.steps) if isinstance(s, StepSpec)}
    tools: dict[str, int] = {}
    trees: list[Node] = []
    reads: list[tuple[str, ...]] = []
    depends: list[tuple[int, ...]] = []
    conditions: list[Node | None] = []
    exits: list[Exit] = []
    barrier: set[int] = set()
    for i, s in enumerate(spec.steps):
        if isinstance(s, ExitSpec):
            label = f"steps[{i}] ({s.name})"
            if s.name in tools or any(e.name == s.name for e in exits):
                raise InputError(where, f"{s.name!r} is taken twice", f"{label}.name")
            tree, names = _condition(s.when, defined, types, where, f"{label}.when", spec, i)
            if spec.fields:
                given = exit_fields(s, label, spec.fields, where, _literal)
                last = spec.steps[-1]
                key = last.output if isinstance(last, StepSpec) else spec.fields[-1]
                exits.append(Exit(s.name, i, len(trees), tree, names, given[key], given))
            else:
                answer = _literal(s.answer, where, f"{label}.answer")  # type: ignore[arg-type]
                exits.append(Exit(s.name, i, len(trees), tree, names, answer))
            barrier |= {defined[n] for n in names} - {0}
            continue
        label = f"steps[{i}] ({s.tool})"
        _variable_name(s.output, where, f"{label}.output", typed)
        if s.output in defined:
            first = "an input" if defined[s.output] == 0 else f"step {defined[s.output]}'s output"
            raise InputError(where, f"{s.output!r} is already {first}", f"{label}.output")
        if s.tool in tools:
            raise InputError(
                where, f"tool {s.tool!r} is also step {tools[s.tool]}'s", f"{label}.tool"
            )
        if s.tool == spec.finish_tool or s.tool in RESERVED_TOOLS:
            what = "the finish tool" if s.tool == spec.finish_tool else "a calculator tool"
            raise InputError(where, f"tool {s.tool!r} is {what}'s name", f"{label}.tool")
        tools[s.tool] = len(trees) + 1
        try:
            tree = formula.parse(s.formula, typed)
        except FormulaError as exc:
            raise InputError(where, f"{s.formula!r}: {exc}", f"{label}.formula") from None
        names = tuple(dict.fromkeys(formula.variables(tree)))
        for name in names:
            if name not in defined:
                raise InputError(
                    where, _not_readable(spec, name, i, outputs, typed), f"{label}.formula"
                )
        if not names:
            raise InputError(where, "reads no input or earlier output", f"{label}.formula")
        needs = {defined[n] for n in names}
        condition = None
        if types is not None:
            env: Mapping[str, Type | TableType] = {**table_types, **types} if tables else types
            types[s.output] = _typed(tree, env, where, f"{label}.formula", s.formula)
            if tables:
                tree = bind(tree, tables)
            if s.when is not None:
                condition, when = _condition(
                    s.when, defined, types, where, f"{label}.when", spec, i
                )
                needs.update(defined[n] for n in when)
        trees.append(tree)
        reads.append(names)
        conditions.append(condition)
        depends.append(tuple(sorted((needs - {0}) | barrier)))
        defined[s.output] = len(trees)
    if spec.finish_tool in RESERVED_TOOLS:
        raise InputError(where, f"{spec.finish_tool!r} is a calculator tool's name", "finish_tool")
    last = spec.steps[-1]
    if isinstance(last, ExitSpec):
        raise InputError(
            where,
            "an exit listed after the answer's step would never be needed",
            f"steps[{len(spec.steps) - 1}] ({last.name}).kind",
        )
    if spec.answer_variable != last.output:
        raise InputError(
            where,
            f"{spec.answer!r} is not the last step's output ({last.output!r}; "
            "a step after the answer would never be needed)",
            "answer",
        )
    if types is not None:
        for name in spec.fields or (spec.answer_variable,):
            kind = types[name]
            if kind.kind in ("string", "date"):
                why = f"the answer is a number, a category or a boolean, not {kind.text()}"
                raise InputError(where, why, "answer")
    if types is not None and spec.fields:
        for e in exits:
            check_exit_types(e.fields or {}, types, f"steps[{e.position}] ({e.name})", where)
    elif types is not None:
        _exit_answers(spec, exits, types[spec.answer_variable], where)
    return DeclaredWorkflow(
        spec,
        tuple(trees),
        tuple(reads),
        tuple(depends),
        _live(depends, live_fields(spec)),
        where,
        types,
        tuple(conditions) if typed else (),
        tuple(exits),
        tables,
        tuple(hidden),
    )


def _format_one(spec: WorkflowSpec, where: str) -> None:
    """Refuse, in a file of format 1, what only format 2 has."""
    for name, i in spec.inputs.items():
        used = [k for k in ("type", "weights", "p_true") if getattr(i, k) is not None]
        if i.choices and any(isinstance(c, str) for c in i.choices):
            used.append("choices")
        if used:
            raise InputError(where, _NEEDS_2, f"inputs.{name}.{used[0]}")
    for k, s in enumerate(spec.steps):
        if isinstance(s, ExitSpec):
            raise InputError(where, _NEEDS_2, f"steps[{k}] ({s.name}).kind")
        if s.when is not None:
            raise InputError(where, _NEEDS_2, f"steps[{k}] ({s.tool}).when")


def _input_type(spec: InputSpec) -> Type:
    if spec.kind == "category":
        return Type.category(str(c) for c in spec.choices or ())
    return {"boolean": BOOLEAN, "string": STRING, "date": DATE}.get(spec.kind, NUMBER)


def _typed(
    tree: Node, types: Mapping[str, Type | TableType], where: str, field: str, text: str
) -> Type:
    try:
        return check(tree, types)
    except FormulaError as exc:
        raise InputError(where, f"{text!r}: {exc}", field) from None


def _condition(
    text: str,
    defined: Mapping[str, int],
    types: Mapping[str, Type] | None,
    where: str,
    field: str,
    spec: WorkflowSpec,
    at: int,
) -> tuple[Node, tuple[str, ...]]:
    """A ``when``: parsed, reading only what is defined before it, and a boolean."""
    try:
        tree = formula.parse(text, True)
    except FormulaError as exc:
        raise InputError(where, f"{text!r}: {exc}", field) from None
    if any(formula.lookups(tree)):
        raise InputError(
            where,
            f"{text!r}: a condition does not look a record up (look it up in a step, "
            "whose tool the agent calls, and read that step's output)",
            field,
        )
    names = tuple(dict.fromkeys(formula.variables(tree)))
    outputs = {s.output: i for i, s in enumerate(spec.steps) if isinstance(s, StepSpec)}
    for name in names:
        if name not in defined:
            raise InputError(where, _not_readable(spec, name, at, outputs, True), field)
    got = _typed(tree, types or {}, where, field, text)
    if got.kind != "boolean":
        raise InputError(where, f"{text!r}: a condition is a boolean, not {got.text()}", field)
    return tree, names


def _literal(value: bool | float | str, where: str, field: str) -> formula.Value:
    if isinstance(value, bool | str):
        return value
    exact = Fraction(repr(value))
    if exact * 10**MAX_DECIMALS % 1:
        raise InputError(where, f"{value} has more than {MAX_DECIMALS} decimals", field)
    return exact


def _exit_answers(spec: WorkflowSpec, exits: list[Exit], answer: Type, where: str) -> None:
    for e in exits:
        got = e.answer
        kind = "number"
        if isinstance(got, bool | str):
            kind = "boolean" if isinstance(got, bool) else "category"
        if kind != answer.kind:
            raise InputError(
                where,
                f"{got!r} is not of the answer's type ({answer.text(spec.answer_variable)})",
                f"steps[{e.position}] ({e.name}).answer",
            )


def _variable_name(name: str, where: str, field: str, typed: bool = False) -> None:
    if not _NAME.match(name):
        raise InputError(where, f"{name!r} is not a variable name ({NAME})", field)
    if name in FUNCTIONS or (typed and (name in CHOOSERS or name in DATE_FUNCTIONS)):
        raise InputError(where, f"{name!r} is a function's name", field)
    if typed and name in LITERALS:
        raise InputError(where, f"{name!r} is a boolean literal", field)


def _not_readable(
    spec: WorkflowSpec, name: str, index: int, outputs: Mapping[str, int], typed: bool
) -> str:
    """Why listed step ``index`` cannot read ``name``: unknown, its own, later, or a cycle."""
    if name not in outputs:
        return f"unknown variable {name!r} (not an input or an earlier step's output)"
    at = outputs[name]
    if at == index:
        return f"reads its own output {name!r} (a cycle)"
    own = spec.steps[index]
    if isinstance(own, StepSpec):
        path = _path_back(spec, at, own.output, outputs, typed)
        if path is not None:
            chain = " -> ".join([own.output, *path])
            return f"a cycle: {chain}"
    number = sum(isinstance(s, StepSpec) for s in spec.steps[: at + 1])
    return f"{name!r} is step {number}'s output, defined later (steps read earlier outputs only)"


def _path_back(
    spec: WorkflowSpec, at: int, target: str, outputs: Mapping[str, int], typed: bool
) -> list[str] | None:
    """The variables from step ``at``'s output back to ``target`` through what each reads,
    or ``None`` when step ``at`` does not (even indirectly) read ``target``."""
    seen: set[int] = set()
    first = spec.steps[at]
    if not isinstance(first, StepSpec):  # ``outputs`` holds tool steps only
        return None
    stack: list[tuple[int, list[str]]] = [(at, [first.output])]
    while stack:
        i, path = stack.pop()
        if i in seen:
            continue
        seen.add(i)
        step = spec.steps[i]
        if not isinstance(step, StepSpec):
            continue
        try:
            names = set(formula.variables(formula.parse(step.formula, typed)))
        except FormulaError:
            continue
        if target in names:
            return [*path, target]
        stack.extend((outputs[n], [*path, n]) for n in names if n in outputs)
    return None


def _live(depends: list[tuple[int, ...]], fields: frozenset[int] = frozenset()) -> tuple[bool, ...]:
    """Per step: whether the answer (the last step, and a multi-field answer's every
    field's step) reads it, directly or not."""
    live = [False] * len(depends)
    live[-1] = True
    for k in fields:
        live[k - 1] = True
    for k in range(len(depends), 0, -1):
        if live[k - 1]:
            for d in depends[k - 1]:
                live[d - 1] = True
    return tuple(live)
