"""``generate --out``: the grid's and a declared workflow's suite under one output rule. A
folder that is not a suite, a file, or a folder holding the command's own input is
refused in one line (exit 2) with nothing changed; ``--overwrite`` replaces a suite, of
either kind, whole."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from agentproc.resources import folder
from tests.helpers import cli

INVOICE = folder("workflows") / "invoice_approval.toml"
WORKFLOW = ["generate", "--workflow", INVOICE, "--count", "2"]
GRID = ["generate", "--steps", "3", "--count", "2"]


def tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` and its bytes."""
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def refused(capsys, root: Path, *argv: object, says: tuple[str, ...]) -> None:
    """A command refused: exit 2, one line saying ``says``, nothing under ``root`` changed."""
    before = tree(root)
    code, _, err = cli(capsys, *argv)
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    for part in says:
        assert part in err, err
    assert tree(root) == before
    assert not [p for p in root.rglob(".*") if "partial" in p.name]


def not_a_suite(out: Path) -> None:
    out.mkdir()
    (out / "notes.txt").write_text("keep me")


def only_a_manifest(out: Path) -> None:
    out.mkdir()
    (out / "suite.json").write_text('{"mine": true}')


@pytest.mark.parametrize("overwrite", [[], ["--overwrite"]], ids=["", "overwrite"])
@pytest.mark.parametrize(
    ("make", "says"),
    [
        (not_a_suite, ("holds 'notes.txt'", "not a suite folder")),
        (lambda out: out.write_text("keep me"), ("not a folder",)),
    ],
    ids=["folder that is not a suite", "file"],
)
def test_generate_workflow_refuses_an_out_that_is_not_a_suite_folder(
    capsys, tmp_path: Path, make: Callable[[Path], None], says: tuple[str, ...], overwrite
):
    out = tmp_path / "out"
    make(out)
    refused(capsys, tmp_path, *WORKFLOW, "--out", out, *overwrite, says=(str(out), *says))


def test_generate_workflow_keeps_a_folder_s_suite_json_without_overwrite(capsys, tmp_path: Path):
    out = tmp_path / "out"
    only_a_manifest(out)
    refused(capsys, tmp_path, *WORKFLOW, "--out", out, says=("--overwrite",))


@pytest.mark.parametrize("name", ["scenarios.jsonl", "suite.json", "workflow.json"])
def test_generate_workflow_never_replaces_its_own_input_in_the_suite_folder(
    capsys, tmp_path: Path, name: str
):
    out = tmp_path / "out"
    assert cli(capsys, *WORKFLOW, "--out", out)[0] == 0
    source = out / name
    if name == "scenarios.jsonl":  # a TOML workflow saved under a suite file's name
        shutil.copy(INVOICE, source)
    elif name == "suite.json":  # a JSON one
        shutil.copy(out / "workflow.json", source)
    # workflow.json: the suite's own copy of the workflow, read back as one
    argv = ["generate", "--workflow", source, "--count", "3", "--out", out, "--overwrite"]
    refused(capsys, tmp_path, *argv, says=(str(source), "input", "another folder"))


def test_generate_workflow_never_replaces_its_input_by_another_name(capsys, tmp_path: Path):
    out = tmp_path / "out"
    assert cli(capsys, *WORKFLOW, "--out", out)[0] == 0
    link = tmp_path / "flow.json"
    os.link(out / "workflow.json", link)
    argv = ["generate", "--workflow", link, "--out", out, "--overwrite"]
    refused(capsys, tmp_path, *argv, says=(str(link), "input"))


def test_generate_grid_never_replaces_its_preset_file(capsys, tmp_path: Path):
    out = tmp_path / "out"
    assert cli(capsys, *GRID, "--out", out)[0] == 0
    grid = json.loads((out / "suite.json").read_text())["grid"]
    preset = out / "workflow.json"  # a preset file saved under a suite file's name
    preset.write_text(json.dumps(grid))
    refused(capsys, tmp_path, "generate", "--preset", preset, "--count", "3", "--out", out,
            "--overwrite", says=(str(preset), "input"))  # fmt: skip


@pytest.mark.parametrize(
    ("first", "then", "files"),
    [
        (GRID, WORKFLOW, ["scenarios.jsonl", "suite.json", "workflow.json"]),
        (WORKFLOW, GRID, ["procedures.jsonl", "suite.json"]),
    ],
    ids=["workflow over grid", "grid over workflow"],
)
def test_overwrite_replaces_a_suite_of_either_kind_whole(
    capsys, tmp_path: Path, first: list[object], then: list[object], files: list[str]
):
    out = tmp_path / "out"
    assert cli(capsys, *first, "--out", out)[0] == 0
    code, _, err = cli(capsys, *then, "--out", out, "--overwrite")
    assert code == 0, err
    assert sorted(p.name for p in out.iterdir()) == files
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    assert cli(capsys, "run", out, "--agent", "sim:oracle", "--out", tmp_path / "r.jsonl")[0] == 0


def test_generate_workflow_over_an_existing_suite_without_overwrite_keeps_it(
    capsys, tmp_path: Path
):
    out = tmp_path / "out"
    assert cli(capsys, *GRID, "--out", out)[0] == 0
    refused(capsys, tmp_path, *WORKFLOW, "--out", out, says=(str(out), "--overwrite"))


def test_generate_workflow_overwrite_replaces_its_own_earlier_suite(capsys, tmp_path: Path):
    out = tmp_path / "out"
    assert cli(capsys, *WORKFLOW, "--out", out)[0] == 0
    code, text, _ = cli(capsys, *WORKFLOW[:-1], "5", "--out", out, "--overwrite")
    assert code == 0 and "wrote 5 instances" in text
    assert json.loads((out / "suite.json").read_text())["count"] == 5
