"""Compile a procedure into a tool-call workflow. Pure.

Each step becomes a mock tool (``step_K``) whose arguments are the values of its
operand variables and whose result is the value it defines; ``submit_answer``
ends the workflow. The tool specs are filled from the JSON templates in
``tools/`` and are OpenAI function tools whose ``parameters`` are Draft 2020-12
JSON Schemas.

>>> from agentproc.procedures import Cell, generate_procedure
>>> s = compile_procedure(generate_procedure(Cell(steps=3, lookback=2), seed=0, index=0))
>>> [t["function"]["name"] for t in s.tools]
['step_1', 'step_2', 'step_3', 'submit_answer']
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import orjson

from agentproc.arith import SYMBOL, VERB, to_number
from agentproc.procedures import Procedure, procedure_record
from agentproc.resources import load_json
from agentproc.workflow.declared.answer_fields import finish_tool
from agentproc.workflow.declared.loops import loop_tool_description
from agentproc.workflow.declared.view import step_text
from agentproc.workflow.prompts import render_prompt
from agentproc.workflow.scenario import (
    SCHEMA_VERSION,
    FinishSpec,
    Scenario,
    ScenarioStep,
    step_tool_name,
)
from agentproc.workflow.scenario_types import StepLoop, VariableType

NUMBER_TYPE = {"decimal": "number", "integer": "integer"}


def _fill(obj: Any, values: dict[str, Any]) -> Any:
    """Substitute ``{name}`` placeholders in every string of a JSON template."""
    if isinstance(obj, str):
        return obj.format_map(values)
    if isinstance(obj, list):
        return [_fill(v, values) for v in obj]
    if isinstance(obj, dict):
        return {_fill(k, values): _fill(v, values) for k, v in obj.items()}
    return obj


def make_tools(
    steps: Sequence[ScenarioStep],
    mode: str,
    answer_variable: str,
    finish: FinishSpec,
    *,
    name: Callable[[str], str] = str,
    tool_name: Callable[[str], str] | None = None,
    others: Sequence[dict[str, Any]] = (),
    types: Mapping[str, VariableType] | None = None,
    fields: Sequence[str] = (),
) -> list[dict[str, Any]]:
    """The offered tools of a scenario's steps, then ``others``, then the finish tool
    (a multi-field answer's takes one argument per field of ``fields``).

    A variant presents them under other names: each variable as ``name`` gives it, each
    step tool as ``tool_name`` names it (by default ``step_N``). ``types``: a branched
    workflow's variables that are not numbers (a category's parameter lists its names;
    a boolean's is a JSON boolean); a parameter whose variable a conditional step defines
    is optional (given when that step ran)."""
    declared = bool(steps) and all(s.formula is not None for s in steps)
    if name is str and tool_name is None and not others and declared:
        return _declared_tools(steps, mode, answer_variable, finish, types, tuple(fields))
    tools = _fresh_tools(steps, mode, answer_variable, finish, name=name, tool_name=tool_name,
                         others=others, types=types, fields=fields)  # fmt: skip
    return tools


_WHOLE: dict[tuple[Any, ...], bytes] = {}
"""A declared workflow's tools in its own names as JSON, by what they are made of (see
:func:`_declared_tools`)."""


def _declared_tools(
    steps: Sequence[ScenarioStep],
    mode: str,
    answer_variable: str,
    finish: FinishSpec,
    types: Mapping[str, VariableType] | None,
    fields: tuple[str, ...],
) -> list[dict[str, Any]]:
    """:func:`make_tools` of a declared workflow's steps in the names it declares, made
    once per process for all the instances of a workflow (its tools read each step's
    text and the variables' names and types, never a value) and returned as new objects
    each time. The key holds everything they are made of."""
    typed = None
    if types is not None:
        typed = tuple((k, t.type, tuple(t.choices or ())) for k, t in types.items())
    key = (
        mode,
        answer_variable,
        finish.tool,
        finish.argument,
        fields,
        typed,
        tuple(
            (
                *(s.step, s.name, s.output, s.text, s.params, tuple(s.operands), s.formula),
                *(s.decimals, s.when, None if s.loop is None else _loop_key(s.loop)),
            )
            for s in steps
        ),
    )
    made = _WHOLE.get(key)
    if made is None:
        if len(_WHOLE) >= 1024:  # bounded: a process may read many workflows
            _WHOLE.clear()
        tools = _fresh_tools(steps, mode, answer_variable, finish, types=types, fields=fields)
        made = _WHOLE[key] = orjson.dumps(tools)
    return orjson.loads(made)  # type: ignore[no-any-return]


def _loop_key(loop: StepLoop) -> tuple[Any, ...]:
    """What a loop's step's tool reads of its loop (its item's name on the instance is
    never shown in it)."""
    return loop.item, loop.variable, tuple(loop.parameters.items())


def _fresh_tools(
    steps: Sequence[ScenarioStep],
    mode: str,
    answer_variable: str,
    finish: FinishSpec,
    *,
    name: Callable[[str], str] = str,
    tool_name: Callable[[str], str] | None = None,
    others: Sequence[dict[str, Any]] = (),
    types: Mapping[str, VariableType] | None = None,
    fields: Sequence[str] = (),
) -> list[dict[str, Any]]:
    """:func:`make_tools`, made anew."""
    # Each read once per process (load_json keeps them), filled into new objects here.
    step_t, operand_t, finish_t = (
        load_json("tools", f"{name}.json") for name in ("step", "operand", "submit_answer")
    )
    number_type = NUMBER_TYPE[mode]
    total = len(steps)
    tools = []
    optional = {s.output for s in steps if s.when is not None}
    for s in steps:
        if s.loop is not None and s.loop.item:  # a loop's tool: offered once, as its first item's
            continue
        if s.formula is not None:  # a declared workflow's step: its own tool
            if name is str and tool_name is None:  # as every instance of the workflow has it
                tools.append(_shared_tool(s, total, number_type, operand_t, types, optional))
                continue
            tools.append(
                _declared_tool(s, total, number_type, operand_t, name, tool_name, types, optional)
            )
            continue
        a, b = s.terms(name)
        spec = _fill(
            step_t,
            {
                "step": s.step,
                "total": total,
                "output": name(s.output),
                "expression": f"{a} {SYMBOL[s.operation]} {b}",
                "verb": VERB[s.operation].format(a=a, b=b),
            },
        )
        if tool_name is not None:
            spec["function"]["name"] = tool_name(s.name)
        params = spec["function"]["parameters"]
        for var in map(name, s.params):
            params["properties"][var] = _fill(
                operand_t, {"variable": var, "number_type": number_type}
            )
            params["required"].append(var)
        tools.append(spec)
    tools.extend(others)
    if fields:
        tools.append(finish_tool(finish.tool, fields, number_type, types))
        return tools
    finish_spec = _fill(
        finish_t,
        {
            "finish_tool": finish.tool,
            "finish_argument": finish.argument,
            "answer_variable": answer_variable,
            "number_type": number_type,
        },
    )
    typed = types.get(steps[-1].output) if types and steps else None
    if typed is not None:
        prop = finish_spec["function"]["parameters"]["properties"][finish.argument]
        prop.update(_typed_schema(typed))
    tools.append(finish_spec)
    return tools


def _typed_schema(t: VariableType) -> dict[str, Any]:
    """The JSON Schema type of a category (a string among its names) or a boolean."""
    if t.type == "boolean":
        return {"type": "boolean"}
    if t.type == "string":
        return {"type": "string"}
    if t.type == "date":
        return {"type": "string", "format": "date", "pattern": DATE_PATTERN}
    return {"type": "string", "enum": list(t.choices or ())}


DATE_PATTERN = "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"
"""A date parameter's JSON Schema pattern: ISO text, ``YYYY-MM-DD``."""


_SHARED: dict[tuple[Any, ...], bytes] = {}
"""Declared steps' tools as JSON, by what they are made of (see :func:`_shared_tool`)."""


def _shared_tool(
    s: ScenarioStep,
    total: int,
    number_type: str,
    operand_t: dict[str, Any],
    types: Mapping[str, VariableType] | None,
    optional: Collection[str],
) -> dict[str, Any]:
    """:func:`_declared_tool` in the names a workflow declares, made once per process for
    all the instances of a workflow (a tool reads the step's text, never a value) and
    returned as a new object each time."""
    reads = tuple(dict.fromkeys(s.operands))  # by variable: a loop's are renamed
    typed = tuple(
        None if (t := (types or {}).get(p)) is None else (t.type, *(t.choices or ())) for p in reads
    )
    given = tuple(p in optional for p in reads)
    key = (s.step, total, s.name, s.output, s.text, s.params, number_type, typed, given)
    made = _SHARED.get(key)
    if made is None:
        if len(_SHARED) >= 4096:  # bounded: a process may read many workflows
            _SHARED.clear()
        tool = _declared_tool(s, total, number_type, operand_t, str, None, types, optional)
        made = _SHARED[key] = orjson.dumps(tool)
    return orjson.loads(made)  # type: ignore[no-any-return]


def _declared_tool(
    s: ScenarioStep,
    total: int,
    number_type: str,
    operand_t: dict[str, Any],
    name: Callable[[str], str] = str,
    tool_name: Callable[[str], str] | None = None,
    types: Mapping[str, VariableType] | None = None,
    optional: Collection[str] = (),
) -> dict[str, Any]:
    """The tool of a declared workflow's step: its own name and description, one
    parameter per variable its formula reads (as a variant shows them: each variable as
    ``name`` gives it, the tool as ``tool_name`` does)."""
    shown = [name(var) for var in s.params]
    properties = {}
    # A loop's parameter is its variable of the first item (``owner`` of ``owners__0``).
    variable = {p: v for v, p in (s.loop.parameters if s.loop else {}).items()}
    for var, param in zip(shown, s.params, strict=True):
        canonical = variable.get(param, param)
        prop = _fill(operand_t, {"variable": var, "number_type": number_type})
        typed = types.get(canonical) if types else None
        if typed is not None:
            prop.update(_typed_schema(typed))
        if canonical in optional:
            prop["description"] += " Give it only if the step that computes it was run."
        properties[var] = prop
    params: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "required": [
            v for v, p in zip(shown, s.params, strict=True) if variable.get(p, p) not in optional
        ],
        "additionalProperties": False,
    }
    description = (
        f"Step {s.step} of {total}: {step_text(s, name)}. Pass the current value of "
        f"each variable; the tool returns the value of {name(s.output)}."
    )
    if s.loop is not None:
        description = loop_tool_description(s)
    return {
        "type": "function",
        "function": {
            "name": s.name if tool_name is None else tool_name(s.name),
            "description": description,
            "parameters": params,
        },
    }


def compile_procedure(p: Procedure, *, with_tools: bool = True) -> Scenario:
    """The scenario of a procedure: steps, expected calls and (unless told not to)
    the offered tools and the prompt."""
    scale = p.scale
    live = p.live
    values = p.values
    steps = []
    for s in p.steps:
        args = {f"S{i}": to_number(values[i - 1], scale) for i in s.operands}
        constant = {} if s.constant is None else {"constant": to_number(s.constant, scale)}
        steps.append(
            {
                "step": s.step,
                "output": f"S{s.target}",
                "op": s.op,
                "operands": [f"S{i}" for i in s.operands],
                **constant,
                "distances": list(s.distances),
                "value": to_number(s.value, scale),
                "depends_on": list(p.depends_on(s)),
                "live": live[s.step - 1],
                "text": p.text(s),
                "expected_call": {"name": step_tool_name(s.step), "arguments": args},
            }
        )
    cell = p.cell
    # One validation of the whole tree: a model built per step cost twice as much.
    scenario = Scenario.model_validate(
        {
            "schema_version": SCHEMA_VERSION,
            "id": p.id,
            "params": {
                "cell": cell.id,
                "steps": cell.steps,
                "lookback": cell.lookback,
                "realised_lookback": p.realised_lookback if p.format >= 2 else None,
                "range": cell.range,
                "ops": cell.ops,
                "mode": cell.mode,
                "seed": p.seed,
                "index": p.index,
            },
            "inputs": {"S1": to_number(p.inputs[0], scale), "S2": to_number(p.inputs[1], scale)},
            "answer": to_number(p.answer, scale),
            "answer_variable": f"S{len(values)}",
            "mode": cell.mode,
            "tolerance": 0.5 / scale if scale > 1 else 0,
            "steps": steps,
            "finish": {},
        }
    )
    scenario._procedure = procedure_record(p)
    return complete(scenario) if with_tools else scenario


def complete(scenario: Scenario) -> Scenario:
    """Fill in the tools and prompt of a scenario stored without them."""
    if scenario.tools and scenario.prompt:
        return scenario
    return scenario.model_copy(
        update={
            "tools": scenario.tools
            or make_tools(
                scenario.steps,
                scenario.mode,
                scenario.answer_variable,
                scenario.finish,
                types=scenario.types,
                fields=tuple(scenario.answer_fields or ()),
            ),
            "prompt": scenario.prompt or render_prompt(scenario),
        }
    )


@dataclass(frozen=True)
class StepGraph:
    """The expected step graph: data dependencies plus the listed order."""

    steps: tuple[int, ...]
    data_edges: tuple[tuple[int, int], ...]
    """``(producer, consumer)``: the consumer reads the producer's output."""
    order_edges: tuple[tuple[int, int], ...]
    """``(k, k+1)``: the listed order."""

    def predecessors(self, step: int) -> tuple[int, ...]:
        """Steps whose outputs ``step`` reads."""
        return tuple(a for a, b in self.data_edges if b == step)


def step_graph(scenario: Scenario) -> StepGraph:
    """The expected step graph of a scenario."""
    numbers = tuple(s.step for s in scenario.steps)
    data = tuple((d, s.step) for s in scenario.steps for d in s.depends_on)
    order = tuple(pairwise(numbers))
    return StepGraph(numbers, data, order)
