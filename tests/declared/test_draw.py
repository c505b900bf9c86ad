"""Instances of a declared workflow: seeded draws, exact values, bounded redraws."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

from agentproc.declared.draw import draw_instance, evaluate_steps
from agentproc.declared.file import read_workflow, workflow_from_json
from agentproc.errors import InputError
from agentproc.resources import folder

INVOICE = read_workflow(folder("workflows") / "invoice_approval.toml")


def flow(inputs: dict, *steps: tuple[str, str, int]) -> object:
    return workflow_from_json(
        {
            "description": "test",
            "inputs": inputs,
            "steps": [
                {"tool": f"t_{out}", "output": out, "formula": f, "decimals": d}
                for out, f, d in steps
            ],
            "answer": steps[-1][0],
        }
    )


def test_the_same_seed_and_index_draw_the_same_instance_and_others_differ():
    a, b = draw_instance(INVOICE, 7, 3), draw_instance(INVOICE, 7, 3)
    assert a == b
    assert draw_instance(INVOICE, 7, 4) != a
    assert draw_instance(INVOICE, 8, 3) != a


def test_inputs_are_drawn_on_their_grid_within_their_bounds():
    specs = list(INVOICE.spec.inputs.values())
    for index in range(30):
        inst = draw_instance(INVOICE, 0, index)
        for spec, units in zip(specs, inst.inputs, strict=True):
            value = Fraction(units, 1000)
            if spec.integers is not None:
                assert value.denominator == 1
                assert spec.integers[0] <= value <= spec.integers[1]
            elif spec.range is not None:
                assert (value * 10**spec.decimals).denominator == 1
                assert spec.range[0] <= value <= spec.range[1]
            else:
                assert float(value) in spec.choices


def test_each_step_is_rounded_once_to_its_decimals_half_away_from_zero_and_read_rounded():
    wf = flow(
        {"a": {"range": [-10.0, 10.0], "decimals": 3}},
        ("half", "a / 8", 2),
        ("twice", "half * 2", 3),
    )
    # -0.04 / 8 = -0.005 rounds away from zero to -0.01; the next step reads -0.01, not
    # -0.005, so it is -0.02 (read unrounded it would be -0.010).
    assert evaluate_steps(wf, (-40,)) == (-10, -20)


def test_an_instance_that_divides_by_zero_is_drawn_again():
    wf = flow({"n": {"integers": [0, 1]}, "x": {"integers": [1, 50]}}, ("q", "3 * x / n", 2))
    for index in range(20):
        inst = draw_instance(wf, 0, index)
        assert inst.inputs[0] == 1000


def test_a_workflow_that_cannot_be_drawn_gets_one_error_naming_the_step():
    wf = flow(
        {"x": {"integers": [1, 5]}, "y": {"integers": [1, 5]}},
        ("spread", "x - y", 0),
        ("flat", "round(spread / 1000)", 0),
    )
    with pytest.raises(InputError) as info:
        draw_instance(wf, 0, 0)
    assert "steps[1] (t_flat).formula" in str(info.value)
    assert "changes with none of the inputs" in str(info.value)


def test_a_value_beyond_the_bound_is_drawn_again_and_then_named():
    wf = flow(
        {"x": {"range": [999000.0, 1000000.0], "decimals": 0}},
        ("sq", "x * x", 0),
        ("big", "sq * x", 0),
    )
    with pytest.raises(InputError, match=r"steps\[1\] \(t_big\)\.formula: .*exceeds the bound"):
        draw_instance(wf, 0, 0)


def test_json_and_toml_files_of_the_same_workflow_are_the_same(tmp_path):
    path = tmp_path / "invoice.json"
    path.write_text(json.dumps(INVOICE.spec.model_dump()), encoding="utf-8")
    assert read_workflow(path).spec == INVOICE.spec
