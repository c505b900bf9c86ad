"""The rules every drawn instance of a declared workflow keeps: the answer moves both
ways when an input moves by 1% (a choice to its neighbouring choices), and no step's
value is an input's or an earlier step's (on more than half the draws: refused when the
file is read, naming the step)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentproc.declared.draw import draw_instance, probe_draws
from agentproc.declared.file import InputSpec, read_workflow, workflow_from_json
from agentproc.declared.rules import identity_shares, moves
from agentproc.errors import InputError
from agentproc.resources import folder
from agentproc.workflow.declared.suite import load_workflow
from tests.helpers import cli


def flow(inputs: dict[str, Any], *steps: tuple[str, str, int], fmt: int | None = None) -> Any:
    data: dict[str, Any] = {
        "description": "test",
        "inputs": inputs,
        "steps": [
            {"tool": f"t_{out}", "output": out, "formula": f, "decimals": d} for out, f, d in steps
        ],
        "answer": steps[-1][0],
    }
    if fmt is not None:
        data["format"] = fmt
    return workflow_from_json(data)


def values(wf: Any, inst: Any) -> list[tuple[str, int]]:
    """Every number variable an instance computes, in order, as (name, thousandths); a
    table's drawn values (hidden inputs, which their look-ups return) left out."""
    types = wf.types
    pairs = [
        (n, u)
        for n, u in zip(wf.input_names, inst.inputs, strict=True)
        if n in wf.spec.inputs and (types is None or types[n].kind == "number")
    ]
    required = inst.required or (True,) * len(inst.values)
    for s, u, need in zip(wf.steps, inst.values, required, strict=True):
        if need and (types is None or types[s.output].kind == "number"):
            pairs.append((s.output, u))
    return pairs


# -- the answer moves with an input moved by 1% ----------------------------------------


def test_a_choice_moves_to_its_neighbouring_choices_and_a_number_by_one_percent():
    rate = InputSpec(choices=[0.5, 0.05, 0.21])
    assert moves(rate, 210) == (50, 500)
    assert moves(rate, 50) == (210,) and moves(rate, 500) == (210,)
    assert moves(InputSpec(range=(1.0, 900.0)), 250_000) == (247_500, 252_500)
    assert moves(InputSpec(integers=(0, 9)), 0) == (-1, 1)  # one thousandth at least
    assert moves(InputSpec(type="boolean"), 1) == ()
    assert moves(InputSpec(integers=(3, 3)), 3000) == ()
    assert moves(InputSpec(range=(1.0, 1.004)), 1000) == ()  # one value on its grid


def test_an_answer_that_only_a_whole_unit_move_of_a_choice_changes_is_refused():
    """0.21 moved by a whole unit is 1.21, which moves ``round(rate * 10)``; its
    neighbouring choices 0.2 and 0.22 (and any 1% move) do not."""
    wf = flow({"rate": {"choices": [0.2, 0.21, 0.22]}}, ("band", "round(rate * 10)", 0))
    with pytest.raises(InputError, match="changes with none of the inputs"):
        draw_instance(wf, 0, 0)


def test_an_answer_that_moves_up_but_not_down_with_its_input_is_refused():
    """``round(x + 0.495)`` moves when a whole number ``x`` moves 1% up, never 1% down."""
    wf = flow({"x": {"integers": [1, 99]}}, ("up", "round(x + 0.495)", 0))
    with pytest.raises(InputError, match=r"steps\[0\] \(t_up\)\.formula: .*none of the inputs"):
        draw_instance(wf, 0, 0)


def test_a_boolean_input_is_not_moved_so_an_answer_only_it_changes_is_refused():
    """A category or boolean changes the path, not by a slip of 1%: it is not moved."""
    wf = flow(
        {"flag": {"type": "boolean"}, "x": {"integers": [1, 9]}},
        ("base", "x * 2", 0),
        ("pay", "ifelse(flag, 10, 20) + round(base / 1000)", 0),
        fmt=2,
    )
    with pytest.raises(InputError, match="changes with none of the inputs"):
        draw_instance(wf, 0, 0)


# -- no step equals an input or an earlier step --------------------------------------


def test_no_instance_of_the_invoice_workflow_has_a_step_equal_to_an_earlier_value():
    """A quantity of 1 made an amount equal to its unit price on 8 of the first 100."""
    wf = read_workflow(folder("workflows") / "invoice_approval.toml")
    found = {}
    for index in range(100):
        pairs = values(wf, draw_instance(wf, 0, index))
        seen: dict[int, str] = {}
        for name, units in pairs:
            if units in seen and name in {s.output for s in wf.steps}:
                found[index] = (name, seen[units])
            seen.setdefault(units, name)
    assert found == {}


CAPPED = {
    "description": "A capped bonus.",
    "inputs": {"sales": {"range": [0.0, 100.0], "decimals": 2}, "cap": {"integers": [10, 20]}},
    "steps": [
        {"tool": "bonus", "output": "bonus", "formula": "min(sales * 0.5, cap)"},
        {"tool": "gross", "output": "gross", "formula": "bonus * 3 + sales"},
    ],
    "answer": "gross",
}


def test_a_min_that_caps_at_an_input_on_most_draws_is_refused_naming_the_step(tmp_path):
    path = tmp_path / "capped.json"
    path.write_text(json.dumps(CAPPED), encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_workflow(path)
    text = str(info.value)
    assert text.startswith(f"{path}: steps[0] (bonus).formula: 'min(sales * 0.5, cap)' equals cap")
    assert "draws that require it" in text


def test_generate_refuses_the_capped_workflow_in_one_line_and_writes_nothing(tmp_path, capsys):
    path = tmp_path / "capped.json"
    path.write_text(json.dumps(CAPPED), encoding="utf-8")
    out = tmp_path / "suite"
    code, stdout, err = cli(capsys, "generate", "--workflow", path, "--count", "5", "--out", out)
    assert (code, stdout) == (2, "")
    assert len(err.strip().splitlines()) == 1
    assert f"{path}: steps[0] (bonus).formula: " in err and "Traceback" not in err
    assert not out.exists()


def test_a_rare_identity_is_drawn_again_and_the_file_is_read(tmp_path):
    """``min(sales * 0.5, cap)`` reaches the cap on few draws: those are drawn again."""
    data = json.loads(json.dumps(CAPPED))
    data["inputs"]["sales"]["range"] = [0.0, 24.0]
    path = tmp_path / "rare.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    wf = load_workflow(path)
    draws = probe_draws(wf)
    shares = identity_shares(wf, draws)
    assert 0 < shares[0][0] < len(draws) / 2 and shares[0][2] == "cap"
    for index in range(60):
        inst = draw_instance(wf, 0, index)
        assert inst.values[0] != inst.inputs[1]  # the bonus is never the cap itself


BRANCHED = {
    "format": 2,
    "description": "A refund.",
    "inputs": {"amount": {"range": [10.0, 900.0]}, "limit": {"integers": [300, 700]}},
    "steps": [
        {"tool": "check", "output": "big", "formula": "amount > 400"},
        {"tool": "approve", "when": "big", "output": "approved", "formula": "amount * 0.9"},
        {"tool": "pay", "output": "paid", "formula": "ifelse(big, approved, amount)"},
    ],
    "answer": "paid",
}


def test_a_choice_that_passes_a_value_on_is_no_identity_but_a_cap_written_as_one_is(tmp_path):
    path = tmp_path / "flow.json"
    path.write_text(json.dumps(BRANCHED), encoding="utf-8")
    wf = load_workflow(path)  # ``paid`` is ``amount`` where no approval is needed
    drawn = [draw_instance(wf, 0, index) for index in range(30)]
    assert {inst.path for inst in drawn} == {"base", "approve"}
    capped = json.loads(json.dumps(BRANCHED))
    capped["steps"][2]["formula"] = "ifelse(amount > limit, limit, amount)"
    path.write_text(json.dumps(capped), encoding="utf-8")
    with pytest.raises(InputError, match=r"steps\[2\] \(pay\)\.formula: .* equals "):
        load_workflow(path)


def test_every_shipped_workflow_is_read_and_its_first_instances_hold_no_identity():
    for path in sorted(Path(folder("workflows")).glob("*.toml")):
        wf = load_workflow(path)
        for index in range(20):
            inst = draw_instance(wf, 0, index)
            steps = {s.output for s in wf.steps}
            seen: dict[int, str] = {}
            for name, units in values(wf, inst):
                if name in steps and units in seen:
                    # only a choice passing its branch's value on may repeat one
                    k = next(i for i, s in enumerate(wf.steps) if s.output == name)
                    assert "ifelse" in wf.steps[k].formula or "case" in wf.steps[k].formula
                seen.setdefault(units, name)
