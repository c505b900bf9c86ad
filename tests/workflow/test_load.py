"""Scenarios from disk are compiled one at a time and carry the sweeps of the suite's design."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

import agentproc.workflow.load as load
from agentproc.procedures import MANIFEST, Block, Grid, write_suite
from agentproc.workflow import load_scenario, load_scenarios, suite_size

GRID = Grid(
    blocks=[
        Block(name="length", steps=[2, 3], lookback=[2]),
        Block(name="lookback", steps=[3], lookback=[1, 2]),
    ],
    count=3,
)


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    write_suite(GRID, tmp_path / "s", jobs=1)
    return tmp_path / "s"


def test_scenarios_of_a_suite_are_compiled_as_they_are_read(
    suite: Path, monkeypatch: pytest.MonkeyPatch
):
    compiled: list[str] = []
    real = load.scenario_of

    def spy(p):  # type: ignore[no-untyped-def]
        compiled.append(p.id)
        return real(p)

    monkeypatch.setattr(load, "scenario_of", spy)
    first_two = list(itertools.islice(load_scenarios(suite), 2))
    assert [s.id for s in first_two] == compiled  # nothing compiled ahead of the reader


def test_each_scenario_names_every_sweep_listing_its_cell(suite: Path):
    sweeps = {s.params.cell: s.params.sweeps for s in load_scenarios(suite)}
    assert sweeps == {
        "n2-L2-r1_10-mixed-decimal": ["length"],
        "n3-L2-r1_10-mixed-decimal": ["length", "lookback"],
        "n3-L1-r1_10-mixed-decimal": ["lookback"],
    }


def test_unnamed_blocks_are_numbered_sweeps():
    grid = Grid(blocks=[Block(steps=[2]), Block(steps=[3])])
    assert grid.sweeps() == {
        "n2-L3-r1_10-mixed-decimal": ["block 1"],
        "n3-L3-r1_10-mixed-decimal": ["block 2"],
    }


def test_a_scenario_file_has_no_sweeps_and_its_json_no_sweeps_key():
    s = load_scenario(Path("scenarios/pinned/n5-L3-r1_10-mixed-decimal-0000.json"))
    assert s.params.sweeps is None
    assert "sweeps" not in s.model_dump(mode="json")["params"]


def test_suite_size_is_the_count_in_the_manifest(suite: Path, tmp_path: Path):
    assert suite_size(suite) == 9
    assert suite_size(Path("scenarios/pinned/n5-L3-r1_10-mixed-decimal-0000.json")) is None
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / MANIFEST).write_text(json.dumps({"grid": {}}))
    assert suite_size(broken) is None


@pytest.mark.parametrize("k", [0, 1, 2, None])
def test_per_cell_keeps_the_first_k_scenarios_of_each_cell_in_suite_order(suite: Path, k):
    every = list(load_scenarios(suite))
    kept = [s.id for s in load.per_cell(every, k)]
    firsts = {}
    for s in every:
        firsts.setdefault(s.params.cell, []).append(s.id)
    wanted = {sid for ids in firsts.values() for sid in (ids if k is None else ids[:k])}
    assert kept == [s.id for s in every if s.id in wanted]
