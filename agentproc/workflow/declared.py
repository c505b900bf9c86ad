"""A declared workflow's instance compiled into a :class:`Scenario`, the one kind every
runner, monitor and report reads; and the workflow file's JSON Schema
(``schemas/workflow.schema.json``, written by
``python -m agentproc.workflow.declared > schemas/workflow.schema.json``).

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

from agentproc.arith import SCALE, to_number
from agentproc.errors import ConfigError
from agentproc.procedures.workflow_draw import WorkflowInstance
from agentproc.procedures.workflow_file import (
    DeclaredWorkflow,
    InputSpec,
    StepSpec,
    WorkflowSpec,
)
from agentproc.workflow.compile import complete
from agentproc.workflow.declared_view import refusal_line
from agentproc.workflow.declared_view import refusal_reason as _reason
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
    names = [*wf.input_names, *(s.output for s in spec.steps)]
    index = {n: i + 1 for i, n in enumerate(names)}
    values = dict(zip(names, (*instance.inputs, *instance.values), strict=True))
    steps: list[dict[str, Any]] = []
    lookback = 1
    for k, (s, reads) in enumerate(zip(spec.steps, wf.reads, strict=True)):
        target = index[s.output]
        lookback = max(lookback, *(target - index[v] for v in reads))
        text = f"{s.output} = {s.formula.strip()}, rounded to {s.decimals} decimals"
        if s.description:
            text += f" ({s.description.strip().rstrip('.')})"
        steps.append(
            {
                "step": k + 1,
                "output": s.output,
                "operands": list(reads),
                "formula": s.formula.strip(),
                "decimals": s.decimals,
                "distances": [target - index[v] for v in reads],
                "value": to_number(values[s.output], scale),
                "depends_on": list(wf.depends[k]),
                "live": wf.live[k],
                "text": text,
                "expected_call": {
                    "name": s.tool,
                    "arguments": {v: to_number(values[v], scale) for v in reads},
                },
            }
        )
    bounds = [_bounds(i) for i in spec.inputs.values()]
    scenario = Scenario.model_validate(
        {
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
                n: v // scale if v % scale == 0 else to_number(v, scale)
                for n, v in zip(wf.input_names, instance.inputs, strict=True)
            },
            "answer": to_number(instance.values[-1], scale),
            "answer_variable": spec.answer,
            "mode": "decimal",
            "tolerance": 0.5 / scale,
            "steps": steps,
            "finish": {"tool": spec.finish_tool},
            "description": spec.description.strip(),
        }
    )
    return complete(scenario)


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
        return min(spec.choices), max(spec.choices)
    lo, hi = spec.range or spec.integers or (0, 0)
    return float(lo), float(hi)


def workflow_schema() -> dict[str, Any]:
    """The JSON Schema of a workflow file, generated from
    :class:`~agentproc.procedures.workflow_file.WorkflowSpec`, each field described by the
    docstring written under it."""
    schema = WorkflowSpec.model_json_schema()
    for model in (WorkflowSpec, InputSpec, StepSpec):
        at = schema if model is WorkflowSpec else schema["$defs"][model.__name__]
        for name, doc in field_docstrings(model).items():
            at["properties"][name].setdefault("description", doc)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}


if __name__ == "__main__":  # pragma: no cover
    print(json.dumps(workflow_schema(), indent=2))
