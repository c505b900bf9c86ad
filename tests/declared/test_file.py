"""Declared workflow files: the model, its checks, and one error per bad file."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from agentproc.declared.draw import check_conditions, probe_paths
from agentproc.declared.file import read_workflow
from agentproc.declared.identities import check_identities
from agentproc.errors import InputError
from agentproc.resources import folder
from tests.helpers import shipped_workflows

INVOICE = folder("workflows") / "invoice_approval.toml"
BASE = {
    "description": "A small order.",
    "inputs": {
        "qty": {"integers": [1, 9]},
        "price": {"range": [1.0, 5.0], "decimals": 2},
        "rate": {"choices": [0.1, 0.2]},
    },
    "steps": [
        {"tool": "line", "output": "amount", "formula": "qty * price"},
        {"tool": "levy", "output": "tax", "formula": "amount * rate"},
        {"tool": "memo", "output": "unit", "formula": "amount / qty", "decimals": 3},
        {"tool": "gross", "output": "total", "formula": "amount + tax"},
    ],
    "answer": "total",
}


def write(tmp_path: Path, data: dict) -> Path:
    path = tmp_path / "flow.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def changed(change) -> dict:
    data = copy.deepcopy(BASE)
    change(data)
    return data


def test_a_valid_file_gives_its_dependencies_and_dead_steps(tmp_path):
    wf = read_workflow(write(tmp_path, BASE))
    assert wf.depends == ((), (1,), (1,), (1, 2))
    assert wf.reads[2] == ("amount", "qty")
    assert wf.live == (True, True, False, True)
    assert wf.input_names == ("qty", "price", "rate")


SHIPPED = shipped_workflows()
LINEAR = shipped_workflows(branched=False)
BRANCHED = shipped_workflows(branched=True)


@pytest.mark.parametrize("path", LINEAR, ids=[p.stem for p in LINEAR])
def test_each_shipped_workflow_has_8_to_30_steps_parallel_branches_and_dead_steps(path):
    wf = read_workflow(path)
    check_identities(wf)
    assert 8 <= len(wf.spec.steps) <= 30
    assert sum(not d for d in wf.depends) >= 2  # steps that read inputs alone: branches
    assert not all(wf.live)


@pytest.mark.parametrize("path", BRANCHED, ids=[p.stem for p in BRANCHED])
def test_each_shipped_branched_workflow_has_two_conditions_an_exit_and_a_dead_step(path):
    wf = read_workflow(path)
    check_identities(wf)
    check_conditions(wf)
    assert sum(c is not None for c in wf.conditions) >= 2
    assert wf.exits
    assert not all(wf.live)
    assert len(probe_paths(wf)) >= 4


def test_the_shipped_workflows_are_the_four_linear_and_six_branched_ones():
    assert [p.stem for p in LINEAR] == [
        "etl_aggregation",
        "inventory_reorder",
        "invoice_approval",
        "payroll",
    ]
    assert [p.stem for p in BRANCHED] == [
        "business_verification",
        "claim_settlement",
        "hazard_class",
        "order_fulfilment",
        "refund_approval",
        "return_window",
        "service_triage",
        "warehouse_inspection",
    ]
    assert read_workflow(INVOICE).spec.finish_tool == "submit_approval_figure"


def _set(path, value):
    def change(data):
        *head, last = path
        at = data
        for key in head:
            at = at[key]
        at[last] = value

    return change


BAD = [
    (
        "unparsable",
        _set(("steps", 1, "formula"), "amount * * rate"),
        "steps[1] (levy).formula: 'amount * * rate': does not parse",
    ),
    (
        "power",
        _set(("steps", 1, "formula"), "amount ** rate"),
        "steps[1] (levy).formula: 'amount ** rate': the operator '**' is not allowed",
    ),
    (
        "unknown",
        _set(("steps", 1, "formula"), "amount * vat"),
        "steps[1] (levy).formula: unknown variable 'vat'",
    ),
    (
        "later",
        _set(("steps", 1, "formula"), "unit * rate"),
        "steps[1] (levy).formula: 'unit' is step 3's output, defined later",
    ),
    (
        "own",
        _set(("steps", 1, "formula"), "tax * rate"),
        "steps[1] (levy).formula: reads its own output 'tax' (a cycle)",
    ),
    (
        "cycle",
        _set(("steps", 0, "formula"), "qty * tax"),
        "steps[0] (line).formula: a cycle: amount -> tax -> amount",
    ),
    (
        "tool twice",
        _set(("steps", 2, "tool"), "line"),
        "steps[2] (line).tool: tool 'line' is also step 1's",
    ),
    (
        "finish clash",
        _set(("steps", 2, "tool"), "submit_answer"),
        "steps[2] (submit_answer).tool: tool 'submit_answer' is the finish tool's name",
    ),
    (
        "calculator clash",
        _set(("finish_tool",), "add"),
        "finish_tool: 'add' is a calculator tool's name",
    ),
    (
        "output twice",
        _set(("steps", 2, "output"), "amount"),
        "steps[2] (memo).output: 'amount' is already step 1's output",
    ),
    (
        "output is an input",
        _set(("steps", 2, "output"), "qty"),
        "steps[2] (memo).output: 'qty' is already an input",
    ),
    (
        "bad output name",
        _set(("steps", 2, "output"), "2x"),
        "steps[2] (memo).output: String should match pattern",
    ),
    (
        "function name",
        _set(("steps", 2, "output"), "round"),
        "steps[2] (memo).output: 'round' is a function's name",
    ),
    (
        "no variable",
        _set(("steps", 2, "formula"), "2 * 3"),
        "steps[2] (memo).formula: reads no input or earlier output",
    ),
    ("answer not last", _set(("answer",), "tax"), "answer: 'tax' is not the last step's output"),
    (
        "always zero",
        _set(("steps", 2, "formula"), "amount / (qty - qty)"),
        "steps[2] (memo).formula: 'amount / (qty - qty)' divides by zero whatever the inputs",
    ),
    (
        "range of zero",
        _set(("inputs", "qty"), {"range": [-0.004, 0.004], "decimals": 2}),
        "steps[0] (line).formula: 'qty * price' is a constant",
    ),
    (
        "choices of zero",
        _set(("inputs", "rate"), {"choices": [0, 0.0]}),
        "steps[1] (levy).formula: 'amount * rate' is a constant",
    ),
    (
        "divides by a zero range",
        lambda d: (
            _set(("steps", 2, "formula"), "amount / (qty - 3)")(d),
            _set(("inputs", "qty"), {"integers": [3, 3]})(d),
        ),
        "steps[2] (memo).formula: 'amount / (qty - 3)' divides by zero whatever the inputs",
    ),
    (
        "constant step",
        _set(("steps", 2, "formula"), "amount / amount"),
        "steps[2] (memo).formula: 'amount / amount' is a constant",
    ),
    (
        "identity",
        _set(("steps", 2, "formula"), "amount * rate / rate"),
        "steps[2] (memo).formula: 'amount * rate / rate' equals amount whatever the inputs",
    ),
    (
        "negated identity",
        _set(("steps", 2, "formula"), "0 - tax"),
        "steps[2] (memo).formula: '0 - tax' equals -tax whatever the inputs",
    ),
    (
        "two ways",
        _set(("inputs", "qty"), {"integers": [1, 2], "choices": [1]}),
        "inputs.qty: give exactly one of range, integers, choices (not integers and choices)",
    ),
    (
        "reversed range",
        _set(("inputs", "price"), {"range": [5.0, 1.0]}),
        "inputs.price: range: low 5.0 is above high 1.0",
    ),
    (
        "huge range",
        _set(("inputs", "price"), {"range": [1.0, 1e9]}),
        "inputs.price: range: values must lie within [-1e6, 1e6]",
    ),
    (
        "fine choice",
        _set(("inputs", "rate"), {"choices": [0.1234]}),
        "inputs.rate: choices: 0.1234 has more than 3 decimals",
    ),
    (
        "decimals",
        _set(("steps", 0, "decimals"), 6),
        "steps[0] (line).decimals: Input should be less than or equal to 3",
    ),
    (
        "too many steps",
        _set(("steps",), BASE["steps"] * 60),
        "steps: List should have at most 200 items",
    ),
    (
        "too many choices",
        _set(("inputs", "rate"), {"choices": [0.1] * 1001}),
        "inputs.rate.choices: List should have at most 1000 items",
    ),
    (
        "long formula",
        _set(("steps", 0, "formula"), "qty" + " + qty" * 300),
        "steps[0] (line).formula: String should have at most 1000 characters",
    ),
    (
        "unknown field",
        _set(("steps", 0, "formul"), "qty"),
        "steps[0] (line).formul: Extra inputs are not permitted",
    ),
    (
        "a tool that is no name",
        _set(("steps", 1, "tool"), 7),
        "steps[1].tool: Input should be a valid string",
    ),
    (
        "a choice of the wrong type",
        _set(("inputs", "rate"), {"choices": [0.1, [2]]}),
        "inputs.rate.choices[1]: Input should be a valid number",
    ),
    (
        "a literal beyond a float",
        _set(("steps", 2, "formula"), "amount + 1e309"),
        "steps[2] (memo).formula: 'amount + 1e309': the number 1e309 is too large",
    ),
    (
        "a literal below a float",
        _set(("steps", 2, "formula"), "min(amount, 1e-400)"),
        "steps[2] (memo).formula: 'min(amount, 1e-400)': the number 1e-400 is too small: "
        "it would read as 0",
    ),
    (
        "seen equal on every draw, not proved",
        _set(("steps", 2, "formula"), "amount + qty * 2305843009213693951 / 1e30"),
        "steps[2] (memo).formula: 'amount + qty * 2305843009213693951 / 1e30' equals amount "
        "in 100 of 100 draws (it would hide every mistake made before it)",
    ),
    (
        "seen constant on every draw, not proved",
        _set(("steps", 2, "formula"), "amount - amount + qty * 2305843009213693951 / 1e30"),
        "steps[2] (memo).formula: 'amount - amount + qty * 2305843009213693951 / 1e30' is 0.000 "
        "in 100 of 100 draws: it does not move with the inputs",
    ),
]


@pytest.mark.parametrize(("case", "change", "message"), BAD, ids=[b[0] for b in BAD])
def test_a_bad_workflow_file_gets_one_error_naming_the_file_the_step_and_the_field(
    tmp_path, case, change, message
):
    path = write(tmp_path, changed(change))
    with pytest.raises(InputError) as info:
        check_identities(read_workflow(path))
    text = str(info.value)
    assert text.startswith(f"{path}: "), text
    assert message in text, text
    assert "\n" not in text


@pytest.mark.parametrize(
    "formula",
    [
        "amount + qty * 2305843009213693951 / 1e15",  # 0 modulo the prime, not here
        "amount - qty * 2305843009213693951 / 1e15",
        "amount * 1e19 / (qty * 2305843009213693951)",  # divides by 0 modulo the prime
        "amount * 1e19 / 2305843009213693951",
        "min(amount, qty + 4611686018427387902) - min(amount, qty)",  # 2p: atoms differ
    ],
)
def test_a_step_that_agrees_with_an_identity_only_modulo_the_prime_is_not_refused(
    tmp_path, formula
):
    wf = read_workflow(write(tmp_path, changed(_set(("steps", 2, "formula"), formula))))
    check_identities(wf)


def test_an_identity_is_proved_whatever_the_prime_hides_in_it(tmp_path):
    text = "(amount + qty * 2305843009213693951) * rate / rate - qty * 2305843009213693951"
    path = write(tmp_path, changed(_set(("steps", 2, "formula"), text)))
    with pytest.raises(InputError, match="equals amount whatever the inputs"):
        check_identities(read_workflow(path))


@pytest.mark.parametrize(
    ("entry", "field"),
    [
        ("choices = [1.0, inf]", "choices[1]"),
        ("choices = [1e999]", "choices[0]"),
        ("range = [1.0, nan]", "range[1]"),
    ],
)
def test_a_toml_number_that_is_not_finite_is_refused_naming_its_field(tmp_path, entry, field):
    path = tmp_path / "flow.toml"
    text = INVOICE.read_text(encoding="utf-8")
    path.write_text(f"{text}\n[inputs.extra]\n{entry}\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        read_workflow(path)
    assert str(info.value) == f"{path}: inputs.extra.{field}: Input should be a finite number"


def test_a_toml_number_below_a_float_names_its_line_not_a_silent_zero(tmp_path):
    path = tmp_path / "flow.toml"
    text = INVOICE.read_text(encoding="utf-8")
    path.write_text(text + "\n[inputs.extra]\nchoices = [1.0, 1e-400]\n", encoding="utf-8")
    lines = len(text.splitlines()) + 3
    with pytest.raises(InputError) as info:
        read_workflow(path)
    assert str(info.value) == (
        f"{path}: line {lines}: the number 1e-400 is too small: it would read as 0"
    )


def test_a_file_that_is_not_toml_names_the_file(tmp_path):
    path = tmp_path / "flow.toml"
    path.write_text("description = \n", encoding="utf-8")
    with pytest.raises(InputError, match=r"flow\.toml: not valid TOML"):
        read_workflow(path)


def test_an_absurdly_large_file_is_refused_before_it_is_read(tmp_path):
    path = tmp_path / "flow.toml"
    path.write_bytes(b"#" * (2 << 20))
    with pytest.raises(InputError, match="bytes, over the limit"):
        read_workflow(path)


def test_a_workflow_built_in_python_is_the_one_its_file_declares(tmp_path):
    from agentproc.declared.file import (
        InputSpec,
        StepSpec,
        WorkflowSpec,
        check_workflow,
    )

    spec = WorkflowSpec(
        description="A small order.",
        inputs={
            "qty": InputSpec(integers=(1, 9)),
            "price": InputSpec(range=(1.0, 5.0), decimals=2),
            "rate": InputSpec(choices=[0.1, 0.2]),
        },
        steps=[
            StepSpec(tool="line", output="amount", formula="qty * price"),
            StepSpec(tool="levy", output="tax", formula="amount * rate"),
            StepSpec(tool="memo", output="unit", formula="amount / qty", decimals=3),
            StepSpec(tool="gross", output="total", formula="amount + tax"),
        ],
        answer="total",
    )
    built = check_workflow(spec, "flow")
    read = read_workflow(write(tmp_path, BASE))
    assert built.spec == read.spec
    assert (built.trees, built.depends, built.live) == (read.trees, read.depends, read.live)
