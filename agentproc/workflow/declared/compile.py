"""A declared workflow's instance compiled into a :class:`Scenario`, the one kind every
runner, monitor and report reads; and the workflow file's JSON Schema
(``schemas/workflow.schema.json``, written by
``python -m agentproc.workflow.declared.compile > schemas/workflow.schema.json``).

The scenario keeps the declared names: inputs and outputs are its variables, each step
tool is named as declared and takes the variables its formula reads, and the step holds
its formula and decimals in place of an operation. Inside, variables are indexed in
declared order (inputs first), as ``S1``, ``S2``, ... are for a procedure, so the mock
tools and the monitor run unchanged. Variants present it as they present a procedure,
but for the few that cannot (:func:`variant_refusal`).
"""

from __future__ import annotations

import json
from typing import Any

from agentproc.arith import SCALE, is_symbol, to_number
from agentproc.declared.draw import WorkflowInstance
from agentproc.declared.file import (
    DeclaredWorkflow,
    ExitSpec,
    InputSpec,
    StepSpec,
    TableSpec,
    WorkflowSpec,
)
from agentproc.declared.loops import path_kind
from agentproc.errors import ConfigError
from agentproc.workflow.compile import complete
from agentproc.workflow.declared.loops import list_items, mark_loops
from agentproc.workflow.declared.records import drawn_rows
from agentproc.workflow.declared.view import head, refusal_line
from agentproc.workflow.declared.view import refusal_reason as _reason
from agentproc.workflow.present import DISTRACTORS
from agentproc.workflow.scenario import SCHEMA_VERSION, Scenario
from agentproc.workflow.variant import Variant, field_docstrings

FORMULA_OPS = "formula"
"""The ``params.ops`` of a declared workflow's scenario."""


def compile_instance(
    wf: DeclaredWorkflow, instance: WorkflowInstance, name: str, seed: int
) -> Scenario:
    """The scenario of one instance of a declared workflow (``name``: the workflow's,
    the cell every instance shares)."""
    scale = SCALE["decimal"]
    spec = wf.spec
    steps_in = wf.steps
    shown = tuple(spec.inputs)  # the hidden inputs (a table's drawn values) are not
    drawn = dict(zip(wf.input_names, instance.inputs, strict=True))
    names = [*shown, *(s.output for s in steps_in)]
    index = {n: i + 1 for i, n in enumerate(names)}
    values = {**drawn, **dict(zip((s.output for s in steps_in), instance.values, strict=True))}
    typed = wf.types is not None
    # The variables the instance's path computes: a branch not taken passes nothing on.
    available = set(wf.input_names) | {
        s.output for s, r in zip(steps_in, instance.required or (), strict=False) if r
    }
    if instance.required is None:
        available.update(s.output for s in steps_in)
    steps: list[dict[str, Any]] = []
    lookback = 1
    for k, (s, reads) in enumerate(zip(steps_in, wf.reads, strict=True)):
        target = index[s.output]
        lookback = max(lookback, *(target - index[v] for v in reads))
        number = not typed or wf.types[s.output].kind == "number"  # type: ignore[index]
        step: dict[str, Any] = {
            "step": k + 1,
            "output": s.output,
            "operands": list(reads),
            "formula": s.formula.strip(),
            "decimals": s.decimals if number else None,
            "distances": [target - index[v] for v in reads],
            "value": to_number(values[s.output], scale),
            "depends_on": list(wf.depends[k]),
            "live": wf.live[k],
            "text": "",
            "expected_call": {
                "name": s.tool,
                "arguments": {v: to_number(values[v], scale) for v in reads if v in available},
            },
        }
        if typed and wf.branched:
            step["when"] = None if s.when is None else s.when.strip()
            step["required"] = (instance.required or ())[k]
        steps.append(step)
    bounds = [_bounds(i) for i in spec.inputs.values() if i.kind == "number"] or [(0.0, 0.0)]
    data: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "id": f"{name}-{instance.index:04d}",
        "params": {
            "cell": name,
            "steps": len(steps),
            "lookback": lookback,
            "range": (min(lo for lo, _ in bounds), max(hi for _, hi in bounds)),
            "ops": FORMULA_OPS,
            "mode": "decimal",
            "seed": seed,
            "index": instance.index,
        },
        "inputs": {
            n: v // scale if v % scale == 0 and not is_symbol(v) else to_number(v, scale)
            for n, v in ((n, drawn[n]) for n in shown)
        },
        "answer": to_number(instance.values[-1], scale),
        "answer_variable": spec.answer_variable,
        "mode": "decimal",
        "tolerance": 0.5 / scale,
        "steps": steps,
        "finish": {"tool": spec.finish_tool},
        "description": spec.description.strip(),
    }
    if wf.fields:
        data["answer_fields"] = {f: to_number(values[f], scale) for f in wf.fields}
    mark_loops(wf, steps, data["inputs"])
    data["lists"] = list_items(wf, data["inputs"])
    if typed:
        _branched(wf, instance, data)
    if spec.tables:
        data["tables"] = {n: _rows(n, t, drawn) for n, t in spec.tables.items()}
    scenario = Scenario.model_validate(data)
    for st, s in zip(scenario.steps, steps_in, strict=True):
        st.text = head(st)
        if s.description:
            st.text += f" ({s.description.strip().rstrip('.')})"
    return complete(scenario)


def _branched(wf: DeclaredWorkflow, instance: WorkflowInstance, data: dict[str, Any]) -> None:
    """A workflow of format 2's own fields: the types of its variables that are not
    numbers, its exits and the instance's path (and an exit's answer, when one fires)."""
    types = wf.types or {}
    data["types"] = {
        n: {"type": t.kind, "choices": list(t.choices) if t.kind == "category" else None}
        for n, t in types.items()
        if t.kind != "number"
    } or None
    for field in wf.fields or (wf.spec.answer_variable,):
        answer = types[field]
        if answer.kind == "category":  # the exits' answers are the answer's names too
            given = (e.answer if e.fields is None else e.fields[field] for e in wf.exits)
            names = {*answer.choices, *map(str, given)}
            data["types"][field]["choices"] = sorted(names)
    if not wf.branched:
        return
    data["exits"] = [
        {
            "name": e.name,
            "when": wf.spec.steps[e.position].when.strip(),  # type: ignore[union-attr]
            "answer": _answer(e.answer),
            **({} if e.fields is None else {"fields": _fields(e.fields)}),
            "after": e.after,
            "description": wf.spec.steps[e.position].description.strip(),
            "operands": list(e.reads),
        }
        for e in wf.exits
    ] or None
    fired = None if instance.exit is None else wf.exits[instance.exit]
    # A looped workflow's path is named whatever its items (``verify_owner+check_capital``),
    # as --balance spreads it: the report's figures by path then group like instances.
    name = instance.path if wf.looped is None or instance.path is None else path_kind(instance.path)
    data["path"] = {"name": name, "exit": None if fired is None else fired.name}
    if fired is not None:
        data["answer"] = _answer(fired.answer)
        if fired.fields is not None:
            data["answer_fields"] = _fields(fired.fields)


def _fields(fields: Any) -> dict[str, Any]:
    """An exit's multi-field answer as a scenario holds it."""
    return {f: _answer(v) for f, v in fields.items()}


def _answer(value: Any) -> Any:
    """An exit's answer as a scenario holds it (a number as its JSON number)."""
    if isinstance(value, bool | str):
        return value
    return int(value) if value.denominator == 1 else float(value)


def check_applies(scenario: Scenario, mode: str, variant: Variant | None) -> None:
    """Refuse, in one line, what does not apply to a declared workflow's scenario: text
    mode (its protocol reads ``S<k> = value`` lines of a procedure's steps) and a variant
    that cannot present it (:func:`variant_refusal`)."""
    if not scenario.declared:
        return
    if mode == "text":
        raise ConfigError(
            f"{scenario.id}: --mode text does not apply to a declared workflow (the text "
            "protocol reads a procedure's S<k> lines); use --mode tools"
        )
    why = None if variant is None else variant_refusal(scenario, variant)
    if why is not None:
        raise ConfigError(f"{scenario.id}: {why}")


def variant_refusal(scenario: Scenario, variant: Variant) -> str | None:
    """Why ``variant`` cannot present a declared workflow's scenario, in a line naming
    the variant (``None``: it can; see :func:`refusal_reason`)."""
    return refusal_line(scenario, variant, DISTRACTORS)


def refusal_reason(scenario: Scenario, variant: Variant) -> str | None:
    """Why ``variant`` cannot present a declared workflow's scenario (``None``: it can).
    Everything applies but the calculator tool set (a formula is no one operation of
    ``add``/``sub``/``mul``/``div``) and names made from a procedure's operations;
    distractors need names no tool of the workflow has."""
    return _reason(scenario, variant, DISTRACTORS)


def _bounds(spec: InputSpec) -> tuple[float, float]:
    if spec.choices is not None:
        numbers = [float(c) for c in spec.choices]  # a number input's (categories are left out)
        return min(numbers), max(numbers)
    lo, hi = spec.range or spec.integers or (0, 0)
    return float(lo), float(hi)


def workflow_schema() -> dict[str, Any]:
    """The JSON Schema of a workflow file, generated from
    :class:`~agentproc.declared.file.WorkflowSpec`, each field described by the
    docstring written under it."""
    schema = WorkflowSpec.model_json_schema()
    for model in (WorkflowSpec, InputSpec, StepSpec, ExitSpec):
        at = schema if model is WorkflowSpec else schema["$defs"][model.__name__]
        for name, doc in field_docstrings(model).items():
            at["properties"][name].setdefault("description", doc)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}


if __name__ == "__main__":  # pragma: no cover
    print(json.dumps(workflow_schema(), indent=2))


def _rows(name: str, table: TableSpec, drawn: dict[str, int]) -> dict[str, Any]:
    """A table as an instance's scenario holds it: each row with its drawn values (a
    table of drawn records: the instance's records, its empty slots left out)."""
    scale = SCALE["decimal"]
    if table.count is not None:
        return {"key": table.key, "rows": drawn_rows(name, table, drawn)}
    rows = []
    for row in table.rows:
        full: dict[str, Any] = dict(row)
        for column, kind in table.columns.items():
            if isinstance(kind, InputSpec):
                full[column] = to_number(drawn[f"{name}[{row[table.key]}].{column}"], scale)
        rows.append({c: full[c] for c in (table.key, *table.columns)})
    return {"key": table.key, "rows": rows}
