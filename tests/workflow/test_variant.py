"""Variant files: the model, the shipped variants, the JSON Schema and bad input."""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from agentproc.cli import main
from agentproc.errors import ConfigError, InputError
from agentproc.workflow.variant import (
    DEFAULT_VARIANT,
    Variant,
    fill_template,
    load_variant,
    shipped_variants,
    variant_schema,
)

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "schemas" / "variant.schema.json"
UPDATE = os.environ.get("AGENTPROC_UPDATE_GOLDEN") == "1"
PROMPT_STYLES = ("terse", "step-by-step", "one-call-per-step", "checklist", "study-text")


def test_variant_schema_file_is_generated_from_the_model():
    """``AGENTPROC_UPDATE_GOLDEN=1`` rewrites ``schemas/variant.schema.json`` instead."""
    if UPDATE:
        SCHEMA.write_text(json.dumps(variant_schema(), indent=2) + "\n", encoding="utf-8")
    assert json.loads(SCHEMA.read_text(encoding="utf-8")) == variant_schema()
    Draft202012Validator.check_schema(variant_schema())


def test_every_field_of_a_variant_file_is_described_by_its_docstring():
    from agentproc.workflow.variant import PromptTemplate, ToolFaults, field_docstrings

    schema = variant_schema()
    for model, where in (
        (Variant, schema),
        (PromptTemplate, schema["$defs"]["PromptTemplate"]),
        (ToolFaults, schema["$defs"]["ToolFaults"]),
    ):
        docs = field_docstrings(model)
        assert set(docs) == set(model.model_fields) == set(where["properties"])
        assert {k: p["description"] for k, p in where["properties"].items()} == docs


def test_field_docstrings_reads_the_string_under_each_annotated_field():
    from agentproc.workflow.variant import field_docstrings

    class Doc:
        a: int = 1
        """First line.

            indented on."""
        b: str  # none: a field follows
        c: int = 2
        "A plain string counts too."

    docs = {"a": "First line.\n\nindented on.", "c": "A plain string counts too."}
    assert field_docstrings(Doc) == docs


@pytest.mark.parametrize("path", sorted((ROOT / "scenarios" / "variants").glob("*.toml")))
def test_every_shipped_variant_file_validates_against_the_schema_and_changes_something(path):
    validator = Draft202012Validator(json.loads(SCHEMA.read_text(encoding="utf-8")))
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    assert [e.message for e in validator.iter_errors(data)] == []
    variant = load_variant(path.stem)
    assert variant.name == path.stem and variant.description
    assert not variant.is_default and variant.changes()


def test_the_shipped_variants_cover_the_prompt_styles_renderings_and_tool_sets():
    shipped = {name: load_variant(name) for name in shipped_variants()}
    assert set(PROMPT_STYLES) <= set(shipped)
    assert all(
        shipped[s].prompt.user and "{procedure}" in shipped[s].prompt.user for s in PROMPT_STYLES
    )
    assert {v.rendering for v in shipped.values()} == {"numbered", "prose", "pseudocode", "json"}
    assert {v.tools for v in shipped.values()} == {"per_step", "calculator"}
    assert {v.names for v in shipped.values()} == {"none", "descriptive", "random"}
    assert {v.guard for v in shipped.values()} >= {"enforce", "feedback"}
    assert any(v.faults.transient for v in shipped.values())
    assert any(v.order == "shuffled" for v in shipped.values())


def test_default_changes_nothing_whatever_a_variant_with_no_knob_is_called():
    assert load_variant("default") is DEFAULT_VARIANT and DEFAULT_VARIANT.is_default
    assert Variant(name="mine", description="just a name").is_default
    assert not Variant(name="mine", distractors=1).is_default
    assert DEFAULT_VARIANT.digest == Variant(name="other").digest


def test_spec_rebuilds_the_same_variant():
    v = load_variant("one-call-per-step")
    again = Variant.model_validate(json.loads(json.dumps(v.spec())))
    assert again == v and again.digest == v.digest


def test_unknown_variant_name_lists_the_shipped_ones():
    with pytest.raises(ConfigError, match=r"unknown variant 'loud' \(expected one of: default, "):
        load_variant("loud")


def test_templates_fill_only_the_four_placeholders():
    text = fill_template(
        'Do {procedure} with {inputs} and {tools} for {answer_variable}; keep {"x": 1} {other}',
        {"procedure": "P", "inputs": "I", "tools": "T", "answer_variable": "A"},
    )
    assert text == 'Do P with I and T for A; keep {"x": 1} {other}'


def test_prompt_files_are_read_relative_to_the_variant_file(tmp_path):
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "user.txt").write_text("My steps:\n{procedure}\n", encoding="utf-8")
    path = tmp_path / "mine.toml"
    path.write_text('rendering = "prose"\n[prompt]\nuser_file = "prompts/user.txt"\n', "utf-8")
    v = load_variant(str(path))
    assert v.name == "mine" and v.prompt.user == "My steps:\n{procedure}\n"
    assert v.prompt.user_file is None  # the text is in the variant: a run file rebuilds it


def test_a_json_variant_file_loads_like_a_toml_one(tmp_path):
    path = tmp_path / "calc.json"
    path.write_text(json.dumps({"name": "calc", "tools": "calculator"}), encoding="utf-8")
    assert load_variant(str(path)).tools == "calculator"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('rendering = "poem"\n', "rendering: Input should be 'numbered', 'prose', 'pseudocode'"),
        ("colour = 1\n", "colour: Extra inputs are not permitted"),
        ("distractors = 99\n", "distractors: Input should be less than or equal to 8"),
        ("[faults]\ntransient = 1.5\n", "faults.transient: Input should be less than 1"),
        (
            '[prompt]\nuser = "no steps here"\n',
            "prompt.user: the template must contain {procedure}",
        ),
        ('tools = "calculator"\nguard = "enforce"\n', "guard: enforce and feedback need per-step"),
        ('[prompt]\nuser_file = "missing.txt"\n', "prompt.user_file: "),
        ("rendering = \n", "not valid TOML"),
    ],
)
def test_a_bad_variant_file_is_one_error_naming_the_file_and_the_field(tmp_path, text, message):
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_variant(str(path))
    assert str(info.value).startswith(f"{path}: ") and message in str(info.value)


def test_run_with_a_bad_variant_exits_2_with_one_line_and_writes_nothing(tmp_path, capsys):
    assert main(["generate", "--steps", "3", "--count", "1", "--out", str(tmp_path / "s")]) == 0
    bad = tmp_path / "bad.toml"
    bad.write_text('names = "emoji"\n', encoding="utf-8")
    capsys.readouterr()
    out = tmp_path / "run.jsonl"
    code = main(
        [
            "run",
            str(tmp_path / "s"),
            "--agent",
            "sim:oracle",
            "--variant",
            str(bad),
            "--out",
            str(out),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and not out.exists()
    assert err.count("\n") == 1 and err.startswith(f"agentproc: error: {bad}: names: ")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--variant", "calculator", "--guard", "enforce"], "guard 'enforce' needs per-step tools"),
        (["--variant", "nope"], "unknown variant 'nope'"),
    ],
)
def test_run_refuses_a_variant_that_cannot_run_before_touching_the_run_file(
    tmp_path, capsys, argv, message
):
    assert main(["generate", "--steps", "3", "--count", "1", "--out", str(tmp_path / "s")]) == 0
    capsys.readouterr()
    out = tmp_path / "run.jsonl"
    code = main(["run", str(tmp_path / "s"), "--agent", "sim:oracle", "--out", str(out), *argv])
    err = capsys.readouterr().err
    assert code == 2 and not out.exists() and message in err and err.count("\n") == 1


def test_variants_command_lists_every_shipped_variant_with_what_it_changes(capsys):
    assert main(["variants", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    names = [r["name"] for r in rows]
    assert names[0] == "default" and set(PROMPT_STYLES) <= set(names)
    assert len(names) == len(set(names)) == len(shipped_variants()) + 1
    by = {r["name"]: r for r in rows}
    assert by["default"]["changes"] == [] and by["prose"]["changes"] == ["rendering=prose"]
    assert by["calculator"]["variant"] == load_variant("calculator").spec()
    assert main(["variants"]) == 0
    table = capsys.readouterr().out
    assert all(name in table for name in names)
