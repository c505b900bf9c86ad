"""report, compare, stress and replay at 80 and 120 columns: every line within the width,
no table dropped, no id cut; the exact text is kept in golden files.

The width comes from ``COLUMNS``, as in a terminal; the runs are simulated agents on a
seeded suite. ``AGENTPROC_UPDATE_GOLDEN=1`` rewrites the golden files.
"""

from __future__ import annotations

import itertools
import json
import os
import re
from pathlib import Path

import pytest
from rich.cells import cell_len

from agentproc.cli import main

GOLDEN = Path(__file__).parents[1] / "golden"
UPDATE = os.environ.get("AGENTPROC_UPDATE_GOLDEN") == "1"
WIDTHS = (80, 120)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("widths")
    suite = root / "suite"
    argv = ["generate", "--steps", "3,5", "--lookback", "1,2", "--count", "3", "--seed", "0"]
    assert main([*argv, "--out", str(suite)]) == 0
    paths = {"suite": suite, "root": root}
    for agent in ("sim:decay", "sim:skipped_step"):
        paths[agent] = root / f"{agent.split(':')[1]}.jsonl"
        assert main(["run", str(suite), "--agent", agent, "--out", str(paths[agent])]) == 0
    return paths


def _at(width: int, capsys, monkeypatch: pytest.MonkeyPatch, argv: list[object]) -> str:
    monkeypatch.setenv("COLUMNS", str(width))
    capsys.readouterr()
    code = main([str(a) for a in argv])
    out = capsys.readouterr().out
    assert code == 0, out
    return out


def _check(text: str, width: int, name: str, root: Path) -> None:
    """Within the width, nothing cut, and as the golden file has it."""
    text = text.replace(str(root), "ROOT")
    assert [line for line in text.splitlines() if cell_len(line) > width] == []
    assert "…" not in text
    prose = [line for line in text.splitlines() if not set(line) & set("│┃┏┡└├┗╇━─")]
    for before, after in itertools.pairwise(prose):  # a figure keeps its interval
        assert not (before[-1:].isdigit() and after.lstrip().startswith("[")), (before, after)
    assert not any(re.search(r"\[[^\]]*$", line) for line in prose)  # nor an interval cut
    rows = [line for line in text.splitlines() if line.startswith("│")]
    for row in rows:  # in a table, an interval sits beside its figure, never on a line alone
        cells = [c.strip() for c in row.strip("│").split("│")]
        assert not any(c.startswith("[") for c in cells), row
    path = GOLDEN / f"{name}_{width}.txt"
    if UPDATE:
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8")


@pytest.mark.parametrize("width", WIDTHS)
def test_report_at_80_and_120_columns_matches_golden_and_keeps_the_execution_measures(
    width, runs, capsys, monkeypatch
):
    out = _at(width, capsys, monkeypatch, ["report", runs["sim:decay"], runs["sim:skipped_step"]])
    assert "execution measures by length" in out and "under-exec" in out.split("legend")[0]
    _check(out, width, "cli_report", runs["root"])


@pytest.mark.parametrize("width", WIDTHS)
def test_compare_at_80_and_120_columns_matches_golden(width, runs, capsys, monkeypatch):
    out = _at(width, capsys, monkeypatch, ["compare", runs["sim:decay"], runs["sim:skipped_step"]])
    _check(out, width, "cli_compare", runs["root"])


@pytest.mark.parametrize("width", WIDTHS)
def test_stress_at_80_and_120_columns_matches_golden(width, runs, capsys, monkeypatch):
    out_dir = runs["root"] / f"stress{width}"
    argv = ["stress", runs["suite"], "--agent", "sim:decay", "--variants", "terse,prose"]
    out = _at(width, capsys, monkeypatch, [*argv, "--out", out_dir])
    _check(out, width, "cli_stress", runs["root"])


@pytest.mark.parametrize("width", WIDTHS)
def test_replay_at_80_and_120_columns_matches_golden_with_every_episode_id_whole(
    width, runs, capsys, monkeypatch
):
    run = runs["sim:skipped_step"]
    out = _at(width, capsys, monkeypatch, ["replay", run])
    ids = [json.loads(line).get("scenario_id") for line in run.read_text().splitlines()]
    ids = [sid for sid in ids if sid]
    for sid in ids:  # each id can be copied whole into --episode
        assert any(sid in line.split() or f"episode: {sid}" in line for line in out.splitlines())
    _check(out, width, "cli_replay", runs["root"])
    one = _at(width, capsys, monkeypatch, ["replay", run, "--episode", ids[-1]])
    assert one.startswith(ids[-1])
    _check(one, width, "cli_replay_episode", runs["root"])


@pytest.mark.parametrize("width", WIDTHS)
def test_check_at_80_and_120_columns_wraps_each_condition_with_every_id_whole(
    width, runs, capsys, monkeypatch
):
    monkeypatch.setenv("COLUMNS", str(width))
    capsys.readouterr()
    argv = ["check", runs["sim:skipped_step"], "--baseline", runs["sim:decay"]]
    code = main([str(a) for a in [*argv, "--min-faithful", "0.9", "--labels", "skipped_step"]])
    out = capsys.readouterr().out
    assert code == 1
    assert [line for line in out.splitlines() if cell_len(line) > width] == []
    assert "…" not in out
    ids = {json.loads(line)["scenario_id"] for line in runs["sim:skipped_step"].open()}
    words = set(re.findall(r"n\d+-L\d+-[\w.-]+?-\d{4}", out))
    assert words and words <= ids  # ids named are whole, never split across lines
    conditions = [line for line in out.splitlines() if line.startswith(("ok ", "FAIL "))]
    assert len(conditions) == 4
