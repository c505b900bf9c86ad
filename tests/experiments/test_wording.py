"""A comparison of wording-only variants with a simulated agent says it cannot show an effect."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentproc.cli import main
from agentproc.experiments.wording import prompt_blind_note, wording_only
from agentproc.workflow.variant import DEFAULT_VARIANT, Variant, load_variant

NOTE = "note: sim:decay does not read wording"


@pytest.mark.parametrize(
    ("name", "only"),
    [
        ("terse", True),
        ("checklist", True),
        ("one-call-per-step", True),
        ("no-descriptions", True),
        ("prose", False),
        ("random-names", False),
        ("calculator", False),
        ("enforce", False),
    ],
)
def test_a_variant_changes_only_wording_when_its_prompt_or_descriptions_alone_differ(name, only):
    assert wording_only(load_variant(name), DEFAULT_VARIANT) is only


def test_the_default_against_itself_changes_nothing():
    assert not wording_only(Variant(name="again"), DEFAULT_VARIANT)


def test_the_note_names_each_wording_variant_and_what_it_changes():
    variants = [DEFAULT_VARIANT, load_variant("terse"), load_variant("prose")]
    note = prompt_blind_note("sim:decay", variants, "default")
    assert note is not None and "\n" not in note
    assert note.startswith(NOTE)
    assert "terse (user prompt) changes only wording" in note and "prose" not in note


def test_no_note_for_an_agent_that_reads_or_variants_that_change_more():
    wording = [DEFAULT_VARIANT, load_variant("terse")]
    assert prompt_blind_note("openai:m", wording, "default") is None
    assert prompt_blind_note("my_agents/react.py:make_agent", wording, "default") is None
    assert (
        prompt_blind_note("sim:decay", [DEFAULT_VARIANT, load_variant("prose")], "default") is None
    )


def test_the_note_is_against_the_chosen_baseline():
    variants = [load_variant("terse"), DEFAULT_VARIANT, load_variant("checklist")]
    note = prompt_blind_note("sim:oracle", variants, "default")
    assert note is not None and "terse (user prompt), checklist (user prompt) change" in note


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wording") / "s"
    assert main(["generate", "--steps", "3", "--count", "3", "--out", str(out)]) == 0
    return out


def run(capsys, *argv: object) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("json", [[], ["--json"]])
def test_compare_of_wording_variants_with_a_sim_agent_says_so_in_one_line(
    capsys, suite, tmp_path, json
):
    argv = ["compare", suite, "--variants", "default,terse", "--agent", "sim:decay"]
    code, out, err = run(capsys, *argv, "--out", tmp_path / "r", *json)
    assert code == 0
    notes = [line for line in err.splitlines() if line.startswith(NOTE)]
    assert len(notes) == 1 and "terse (user prompt)" in notes[0]
    assert NOTE not in out  # stdout stays the result (JSON stays JSON)


def test_compare_of_a_rendering_with_a_sim_agent_says_nothing(capsys, suite, tmp_path):
    argv = ["compare", suite, "--variants", "default,prose", "--agent", "sim:decay"]
    code, _, err = run(capsys, *argv, "--out", tmp_path / "r")
    assert code == 0 and "does not read wording" not in err


def test_stress_names_the_wording_variants_of_its_sweep(capsys, suite, tmp_path):
    argv = ["stress", suite, "--variants", "default,terse,no-descriptions,json"]
    code, _, err = run(capsys, *argv, "--agent", "sim:decay", "--out", tmp_path / "r")
    assert code == 0
    (note,) = [line for line in err.splitlines() if line.startswith(NOTE)]
    assert "terse (user prompt), no-descriptions (no tool descriptions) change only wording" in note
    assert "json (" not in note
