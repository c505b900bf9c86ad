"""The scenario JSON Schema documents what the compiler writes; the pinned scenarios are golden."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from pydantic import BaseModel, ValidationError

from agentproc.arith import Op
from agentproc.procedures import Cell, Procedure, StepDef, generate_procedure
from agentproc.resources import folder
from agentproc.workflow import (
    SCHEMA_VERSION,
    ExpectedCall,
    FinishSpec,
    Scenario,
    ScenarioParams,
    ScenarioStep,
    compile_procedure,
    load_scenario,
)
from agentproc.workflow.scenario_types import ScenarioTable

SCHEMA = json.loads((folder("schemas") / "scenario.schema.json").read_text(encoding="utf-8"))
VALIDATOR = Draft202012Validator(SCHEMA)
PINNED = sorted((Path(__file__).parents[2] / "scenarios" / "pinned").glob("*.json"))

CELLS = [
    Cell(steps=1, lookback=1),
    Cell(steps=5, lookback=3),
    Cell(steps=25, lookback=7, range=(0.0, 1.0)),
    Cell(steps=60, lookback=16, range=(-10.0, 10.0), ops="add+sub"),
    Cell(steps=10, lookback=1, mode="integer"),
    Cell(steps=40, lookback=5, range=(10.0, 100.0), ops="mul+div", mode="integer"),
]


def compiled(cell: Cell = CELLS[1], with_tools: bool = True) -> dict[str, Any]:
    exclude = None if with_tools else {"tools", "prompt"}
    scenario = compile_procedure(generate_procedure(cell, 0, 0), with_tools=with_tools)
    return scenario.model_dump(mode="json", exclude=exclude)


def errors(instance: Any) -> list[str]:
    return [e.message for e in VALIDATOR.iter_errors(instance)]


def test_schema_is_a_valid_draft_2020_12_schema():
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(SCHEMA)


SUBSCHEMA_MAPS = ("properties", "$defs", "patternProperties")
SUBSCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
SUBSCHEMAS = ("items", "additionalProperties", "propertyNames", "if", "then", "else", "not")


def undescribed(schema: Any, where: str = "#") -> list[str]:
    """Where a property of the schema lacks a description."""
    if not isinstance(schema, dict):
        return []
    missing = [
        f"{where}/properties/{name}"
        for name, sub in schema.get("properties", {}).items()
        if "description" not in sub
    ]
    for key in SUBSCHEMA_MAPS:
        for name, sub in schema.get(key, {}).items():
            missing += undescribed(sub, f"{where}/{key}/{name}")
    for key in SUBSCHEMA_LISTS:
        for i, sub in enumerate(schema.get(key, [])):
            missing += undescribed(sub, f"{where}/{key}/{i}")
    for key in SUBSCHEMAS:
        missing += undescribed(schema.get(key), f"{where}/{key}")
    return missing


def test_every_property_has_a_description():
    assert undescribed(SCHEMA) == []


@pytest.mark.parametrize(
    ("pointer", "model"),
    [
        ("", Scenario),
        ("/$defs/params", ScenarioParams),
        ("/$defs/step", ScenarioStep),
        ("/$defs/expected_call", ExpectedCall),
        ("/$defs/finish", FinishSpec),
        ("/$defs/table", ScenarioTable),
    ],
)
def test_schema_objects_mirror_the_pydantic_models_fields_and_required_ones(
    pointer, model: type[BaseModel]
):
    node = SCHEMA
    for part in pointer.split("/")[1:]:
        node = node[part]
    assert set(node["properties"]) == set(model.model_fields)
    required = {name for name, f in model.model_fields.items() if f.is_required()}
    assert set(node.get("required", [])) == required
    assert node["additionalProperties"] is False  # every one of these models forbids extras


def test_schema_version_is_the_current_one():
    assert SCHEMA["properties"]["schema_version"]["const"] == SCHEMA_VERSION


@pytest.mark.parametrize("cell", CELLS, ids=[c.id for c in CELLS])
def test_every_compiled_scenario_validates(cell):
    assert errors(compiled(cell)) == []


@pytest.mark.parametrize("cell", [CELLS[1], CELLS[4]], ids=["decimal", "integer"])
def test_scenario_stored_without_tools_and_prompt_validates(cell):
    assert errors(compiled(cell, with_tools=False)) == []


def test_scenario_without_steps_fails():
    s = compiled()
    del s["steps"]
    assert errors(s) == ["'steps' is a required property"]


@pytest.mark.parametrize(
    "where",
    [(), ("params",), ("steps", 0), ("steps", 0, "expected_call"), ("finish",), ("inputs",)],
)
def test_unknown_field_fails(where):
    s = compiled()
    node = s
    for key in where:
        node = node[key]
    node["comment"] = "not a field"
    assert errors(s) == ["Additional properties are not allowed ('comment' was unexpected)"]


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("mode",), "float"),
        (("steps", 0, "op"), "pow"),
        (("steps", 0, "operands"), ["S1"]),
        (("steps", 0, "output"), "x3"),
        (("params", "ops"), "add+pow"),
        (("tools", 0, "type"), "retrieval"),
        (("tools", 0, "function", "parameters", "type"), "array"),
    ],
)
def test_a_value_outside_the_format_fails(path, value):
    s = compiled()
    node = s
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    assert errors(s) != []


@pytest.mark.parametrize(
    "path",
    [("answer",), ("inputs", "S1"), ("steps", 0, "value")],
    ids=lambda p: ".".join(map(str, p)),
)
def test_integer_mode_requires_integers(path):
    s = compiled(CELLS[4])
    node = s
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] += 0.5
    assert errors(s) != []
    decimal = copy.deepcopy(s)
    decimal["mode"] = decimal["params"]["mode"] = "decimal"
    decimal["tolerance"] = 0.0005
    assert errors(decimal) == []


def test_there_are_pinned_scenarios():
    assert len(PINNED) >= 3


@pytest.mark.parametrize("path", PINNED, ids=[p.name for p in PINNED])
def test_pinned_scenario_validates_and_loads(path):
    assert errors(json.loads(path.read_text(encoding="utf-8"))) == []
    assert load_scenario(path).id == path.stem


@pytest.mark.parametrize("path", PINNED, ids=[p.name for p in PINNED])
def test_pinned_scenario_compiles_byte_identical_from_its_format_one_procedure(path):
    """The pinned scenarios were generated under procedure format 1: compiled again from
    their own procedure, read as format 1, they are the same bytes (their live flags
    included)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    params, scale = data["params"], 1000 if data["mode"] == "decimal" else 1
    cell = Cell(
        steps=params["steps"],
        lookback=params["lookback"],
        range=tuple(params["range"]),
        ops=params["ops"],
        mode=params["mode"],
    )
    assert cell.id == params["cell"]
    steps = tuple(
        StepDef(
            s["step"],
            Op(s["op"]),
            tuple(int(v[1:]) for v in s["operands"]),
            round(s["value"] * scale),
        )
        for s in data["steps"]
    )
    inputs = (round(data["inputs"]["S1"] * scale), round(data["inputs"]["S2"] * scale))
    old = Procedure(data["id"], cell, params["seed"], params["index"], steps, inputs, format=1)
    text = json.dumps(compile_procedure(old).model_dump(mode="json"), indent=2)
    assert (text + "\n").encode() == path.read_bytes()


def test_a_step_with_a_constant_operand_fits_the_schema_and_needs_its_constant():
    s = compiled(Cell(steps=6, lookback=1, ops="sub"))
    assert all("constant" in st and len(st["operands"]) == 1 for st in s["steps"])
    assert errors(s) == []
    del s["steps"][0]["constant"]
    assert errors(s) != []
    with pytest.raises(ValidationError, match="one and a constant"):
        Scenario.model_validate(s)


def test_a_step_of_two_variables_with_a_constant_is_refused():
    s = compiled()
    s["steps"][0]["constant"] = 4.0
    assert errors(s) != []
    with pytest.raises(ValidationError, match="one and a constant"):
        Scenario.model_validate(s)


def test_the_workflow_file_schema_is_generated_from_its_model():
    """``AGENTPROC_UPDATE_GOLDEN=1`` rewrites ``schemas/workflow.schema.json`` instead."""
    import os

    from jsonschema import Draft202012Validator

    from agentproc.workflow.declared.compile import workflow_schema

    path = folder("schemas") / "workflow.schema.json"
    if os.environ.get("AGENTPROC_UPDATE_GOLDEN") == "1":
        path.write_text(json.dumps(workflow_schema(), indent=2) + "\n", encoding="utf-8")
    schema = workflow_schema()
    assert json.loads(path.read_text(encoding="utf-8")) == schema
    Draft202012Validator.check_schema(schema)
    assert schema["properties"]["steps"]["description"] == (
        "The steps (and, in format 2, exits), in their listed order."
    )


def test_a_declared_workflows_scenario_validates_and_a_procedure_step_still_needs_its_op():
    from agentproc.workflow.declared.suite import load_workflow, workflow_scenarios

    wf = load_workflow(folder("workflows") / "invoice_approval.toml")
    scenario = next(workflow_scenarios(wf, "invoice_approval", count=1, seed=0))
    data = scenario.model_dump(mode="json")
    assert errors(data) == []
    del data["description"]  # read as a procedure's: S1 and S2, steps with an op
    assert errors(data)
    procedure = compiled()
    del procedure["steps"][0]["op"]
    assert set(errors(procedure)) == {"'op' is a required property"}
