"""Lists and loops in a workflow file (format 2): a list input drawn per instance, a step
done for each item (expanded to ``verify_owner[0]``, ...), the aggregates ``count``,
``all`` and ``any``; a bad list, loop or aggregate refused in one line naming the field."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentproc.cli import main
from agentproc.declared import loops as workflow_loops
from agentproc.declared.draw import draw_instance
from agentproc.declared.file import StepSpec, read_workflow, workflow_from_json

PEOPLE = ["P-01", "P-02", "P-03", "P-04", "P-05", "P-06"]

BASE: dict[str, Any] = {
    "format": 2,
    "description": "Verify a business's owners.",
    "inputs": {
        "business": {"type": "category", "choices": ["B-1", "B-2"]},
        "owners": {"type": "list", "choices": PEOPLE, "count": [2, 4]},
    },
    "tables": {
        "people": {
            "key": "person",
            "columns": {"share": {"integers": [5, 60]}, "id_ok": "boolean"},
            "rows": [{"person": p, "id_ok": k % 3 != 1} for k, p in enumerate(PEOPLE)],
        },
        "firms": {
            "key": "business",
            "columns": {"status": "category"},
            "rows": [
                {"business": "B-1", "status": "active"},
                {"business": "B-2", "status": "dissolved"},
            ],
        },
    },
    "steps": [
        {"tool": "get_status", "output": "status", "formula": "lookup(firms, business, 'status')"},
        {"kind": "exit", "name": "dissolved", "when": "status == 'dissolved'", "answer": "reject"},
        {
            "tool": "owner_share",
            "for_each": "owner in owners",
            "output": "share",
            "formula": "lookup(people, owner, 'share')",
            "decimals": 0,
        },
        {
            "tool": "verify_owner",
            "for_each": "owner in owners",
            "when": "share >= 25",
            "output": "verified",
            "formula": "lookup(people, owner, 'id_ok')",
        },
        {
            "tool": "decide",
            "output": "decision",
            "formula": "ifelse(count(share >= 25 and not verified) == 0, 'approve', 'review')",
        },
    ],
    "answer": "decision",
}


def _write(tmp_path: Path, data: dict[str, Any]) -> Path:
    path = tmp_path / "flow.json"
    path.write_text(json.dumps(data))
    return path


def _changed(change: Callable[[dict[str, Any]], Any]) -> dict[str, Any]:
    data = copy.deepcopy(BASE)
    change(data)
    return data


def _set(k: int, field: str, value: Any) -> Callable[[dict[str, Any]], Any]:
    return lambda d: d["steps"][k].__setitem__(field, value)


def _tools(spec: Any) -> list[str]:
    return [s.tool if isinstance(s, StepSpec) else s.name for s in spec.steps]


def test_a_looped_step_is_one_step_per_item_named_by_its_index():
    wf = workflow_from_json(BASE)
    wf = workflow_loops.instance_workflow(wf, {"owners": ("P-04", "P-01", "P-06")})
    assert [workflow_loops.shown(t) for t in _tools(wf.spec)] == [
        "get_status",
        "dissolved",
        "owner_share[0]",
        "owner_share[1]",
        "owner_share[2]",
        "verify_owner[0]",
        "verify_owner[1]",
        "verify_owner[2]",
        "decide",
    ]
    assert list(wf.spec.inputs) == ["business", "owners__0", "owners__1", "owners__2"]
    # Each item's input keeps the list's names as its type; its own alone is drawn.
    assert [wf.spec.inputs[f"owners__{i}"].choices for i in range(3)] == [PEOPLE] * 3
    assert [wf.spec.inputs[f"owners__{i}"].weights for i in range(3)] == [
        [0, 0, 0, 1, 0, 0],
        [1, 0, 0, 0, 0, 0],
        [0, 0, 0, 0, 0, 1],
    ]


def test_the_item_is_its_own_and_a_looped_output_over_the_same_list_is_the_items_own():
    wf = workflow_loops.instance_workflow(workflow_from_json(BASE), {"owners": ("P-02", "P-05")})
    verify = [s for s in wf.steps if s.tool.startswith("verify_owner")]
    assert [(s.formula, s.when) for s in verify] == [
        ("lookup(people, owners__0, 'id_ok')", "share__0 >= 25"),
        ("lookup(people, owners__1, 'id_ok')", "share__1 >= 25"),
    ]
    # verify_owner[1] depends on get_status (the exit's barrier) and owner_share[1] only.
    assert wf.depends[4] == (1, 3)


def test_aggregates_expand_over_every_item():
    data = _changed(
        _set(
            4,
            "formula",
            "case(all(verified or share < 25), 'approve', any(share > 50), "
            "'escalate', count(share >= 25) > 2, 'review', 'hold')",
        )
    )
    wf = workflow_loops.instance_workflow(workflow_from_json(data), {"owners": ("P-02", "P-05")})
    assert wf.steps[-1].formula == (
        "case((verified__0 or share__0 < 25) and (verified__1 or share__1 < 25), 'approve', "
        "share__0 > 50 or share__1 > 50, 'escalate', "
        "ifelse(share__0 >= 25, 1, 0) + ifelse(share__1 >= 25, 1, 0) > 2, 'review', 'hold')"
    )


def test_the_file_is_checked_at_each_lists_largest_count_and_kept_as_written():
    wf = workflow_from_json(BASE)
    assert wf.looped is not None and wf.looped.steps[2].for_each == "owner in owners"  # type: ignore[union-attr]
    assert len(wf.steps) == 1 + 4 + 4 + 1
    assert wf.spec.inputs["owners__3"].choices == PEOPLE


def test_items_are_drawn_distinct_seeded_and_within_the_count():
    wf = workflow_from_json(BASE)
    assert wf.looped is not None
    drawn = [workflow_loops.draw_items(wf.looped, 7, i)["owners"] for i in range(40)]
    assert drawn == [workflow_loops.draw_items(wf.looped, 7, i)["owners"] for i in range(40)]
    assert all(2 <= len(d) <= 4 and len(set(d)) == len(d) for d in drawn)
    assert {len(d) for d in drawn} == {2, 3, 4}


def test_an_instance_of_a_looped_workflow_runs_its_expanded_steps():
    wf = workflow_from_json(BASE)
    assert wf.looped is not None
    items = {"owners": ("P-01", "P-03", "P-05")}
    inst = workflow_loops.instance_workflow(wf, items)
    drawn = draw_instance(inst, 3, 1)
    assert len(drawn.values) == 1 + 3 + 3 + 1
    assert drawn.required is not None and len(drawn.required) == 8


BAD = [
    (
        "unknown_list",
        _set(3, "for_each", "owner in partners"),
        "steps[3] (verify_owner).for_each",
        "'partners' is no list input (the lists: owners)",
    ),
    (
        "not_item_in_list",
        _set(3, "for_each", "owners"),
        "steps[3] (verify_owner).for_each",
        "expected 'item in list'",
    ),
    (
        "item_is_an_input",
        _set(3, "for_each", "business in owners"),
        "steps[3] (verify_owner).for_each",
        "'business' is already an input",
    ),
    (
        "nested_loop",
        _set(3, "for_each", "who in owner"),
        "steps[3] (verify_owner).for_each",
        "'owner' is the item of another loop: loops do not nest",
    ),
    (
        "count_above_choices",
        lambda d: d["inputs"]["owners"].update(count=[2, 9]),
        "inputs.owners: count",
        "expected 1 <= low <= high <= 6",
    ),
    (
        "count_reversed",
        lambda d: d["inputs"]["owners"].update(count=[3, 2]),
        "inputs.owners: count",
        "not [3, 2]",
    ),
    (
        "count_missing",
        lambda d: d["inputs"]["owners"].pop("count"),
        "inputs.owners",
        "a list input gives its count",
    ),
    (
        "count_on_a_category",
        lambda d: d["inputs"]["business"].update(count=[1, 2]),
        "inputs.business",
        "count is for a list input",
    ),
    (
        "aggregate_of_no_looped_value",
        _set(4, "formula", "ifelse(count(status == 'active') > 0, 'approve', 'review')"),
        "steps[4] (decide).formula",
        "count() reads no looped value",
    ),
    (
        "aggregate_of_a_number",
        _set(4, "formula", "ifelse(all(share), 'approve', 'review')"),
        "steps[4] (decide).formula",
        "",
    ),
    (
        "looped_output_outside_an_aggregate",
        _set(4, "formula", "ifelse(share > 3, 'approve', 'review')"),
        "steps[4] (decide).formula",
        "'share' is computed for each item of owners",
    ),
    (
        "aggregate_inside_a_loop",
        _set(3, "when", "count(share > 3) > 1"),
        "steps[3] (verify_owner).when",
        "not inside a loop",
    ),
    (
        "list_in_a_formula",
        _set(4, "formula", "ifelse(owners == 'P-01', 'approve', 'review')"),
        "steps[4] (decide).formula",
        "the list 'owners' is read by for_each",
    ),
    (
        "looped_answer",
        _set(4, "for_each", "owner in owners"),
        "steps[4] (decide).for_each",
        "the answer's step cannot be looped",
    ),
    (
        "looped_step_not_reading_its_item",
        _set(3, "formula", "share > 40"),
        "steps[3] (verify_owner).formula",
        "a looped step's formula reads its item 'owner'",
    ),
    (
        "bad_expanded_formula",
        _set(3, "formula", "lookup(people, owner, 'id_ok') + 1"),
        "steps[3] (verify_owner).formula",
        "",
    ),
]


@pytest.mark.parametrize(("case", "change", "field", "message"), BAD, ids=[b[0] for b in BAD])
def test_a_bad_list_or_loop_is_one_line_naming_the_field_exit_2_and_nothing_written(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    case: str,
    change: Any,
    field: str,
    message: str,
):
    path = _write(tmp_path, _changed(change))
    out = tmp_path / "suite"
    code = main(["generate", "--workflow", str(path), "--count", "3", "--out", str(out)])
    _, err = capsys.readouterr()
    assert code == 2
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"{path}: {field}" in err and message in err
    assert "__" not in err  # expanded names are shown as share[0]
    assert not out.exists()


def test_lists_and_loops_need_format_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    data = {
        "description": "Count the owners.",
        "inputs": {"n": {"integers": [1, 4]}},
        "steps": [{"tool": "double", "output": "x", "formula": "n * 2", "for_each": "o in os"}],
        "answer": "x",
    }
    path = _write(tmp_path, data)
    assert main(["generate", "--workflow", str(path), "--out", str(tmp_path / "s")]) == 2
    assert f"{path}: steps[0] (double).for_each: lists and loops need format = 2" in (
        capsys.readouterr().err
    )


def test_a_looped_file_reads_from_toml(tmp_path: Path):
    path = tmp_path / "flow.toml"
    path.write_text(
        'format = 2\ndescription = "d"\nanswer = "n"\n'
        '[inputs.owners]\ntype = "list"\nchoices = ["a", "b", "c"]\ncount = [1, 3]\n'
        "[inputs.k]\nintegers = [1, 9]\n"
        '[[steps]]\ntool = "flag"\nfor_each = "o in owners"\noutput = "f"\n'
        "formula = \"o == 'a'\"\n"
        '[[steps]]\ntool = "n"\noutput = "n"\nformula = "k * 3 + count(f)"\n'
    )
    wf = read_workflow(path)
    assert wf.steps[-1].formula == (
        "k * 3 + (ifelse(f__0, 1, 0) + ifelse(f__1, 1, 0) + ifelse(f__2, 1, 0))"
    )


def test_an_instance_that_cannot_be_drawn_names_the_files_own_step(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    path = tmp_path / "flat.toml"
    path.write_text(
        'format = 2\ndescription = "d"\nanswer = "total"\n'
        '[inputs.owners]\ntype = "list"\nchoices = ["a", "b", "c"]\ncount = [1, 3]\n'
        "[inputs.k]\nintegers = [1, 9]\n"
        '[[steps]]\ntool = "flag"\nfor_each = "o in owners"\noutput = "f"\n'
        "formula = \"o == 'a'\"\n"
        '[[steps]]\ntool = "total_weight"\noutput = "total"\n'
        'formula = "count(f) * 1000 + round(k / 100)"\ndecimals = 0\n'
    )
    out = tmp_path / "suite"
    code = main(["generate", "--workflow", str(path), "--count", "4", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and not out.exists()
    assert f"{path}: steps[1] (total_weight).formula: " in err
    assert "changes with none of the inputs" in err and "f[0]" in err and "__" not in err
