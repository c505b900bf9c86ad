"""Suites on disk: grids of cells, shipped presets, and suite folders written and read back."""

from __future__ import annotations

import json
import os
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

import agentproc.procedures.suites as suites
from agentproc.errors import ConfigError, InputError
from agentproc.procedures import (
    MANIFEST,
    PROCEDURES,
    Block,
    Cell,
    Grid,
    generate_procedure,
    preset,
    presets,
    procedure_ids,
    procedure_record,
    read_procedures,
    write_suite,
)

SMALL = Grid(
    name="small",
    blocks=[Block(steps=[3, 4], lookback=[1, 2]), Block(steps=[2], modes=["integer"])],
    count=3,
    seed=7,
)


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def one_procedure_line(**override: Any) -> str:
    """A valid procedures.jsonl line of a 3-step cell, some fields replaced."""
    rec = procedure_record(generate_procedure(Cell(steps=3), 0, 0))
    rec.update(override)
    return json.dumps(rec)


def suite_folder(tmp_path: Path, *text_lines: str) -> Path:
    folder = tmp_path / "suite"
    folder.mkdir()
    (folder / PROCEDURES).write_text("".join(t + "\n" for t in text_lines), encoding="utf-8")
    # a manifest without a digest, as suites written before digests existed have
    (folder / MANIFEST).write_text(json.dumps({"grid": {"blocks": [{"steps": [1]}]}}))
    return folder


# -- Block and Grid ------------------------------------------------------------


def test_block_cells_are_the_product_of_its_lists_in_field_order():
    block = Block(steps=[5, 10], lookback=[1, 3], modes=["decimal", "integer"])
    got = [(c.steps, c.lookback, c.mode) for c in block.cells()]
    assert got == [
        (5, 1, "decimal"),
        (5, 1, "integer"),
        (5, 3, "decimal"),
        (5, 3, "integer"),
        (10, 1, "decimal"),
        (10, 1, "integer"),
        (10, 3, "decimal"),
        (10, 3, "integer"),
    ]


def test_block_defaults_give_one_cell_per_length():
    assert Block(steps=[7]).cells() == [Cell(steps=7)]


def test_grid_cells_follow_block_order():
    grid = Grid(blocks=[Block(steps=[20]), Block(steps=[5, 10])])
    assert [c.steps for c in grid.cells()] == [20, 5, 10]


def test_grid_cells_shared_by_two_blocks_appear_once_where_first_listed():
    grid = Grid(blocks=[Block(steps=[5, 10]), Block(steps=[10, 20]), Block(steps=[5])])
    assert [c.steps for c in grid.cells()] == [5, 10, 20]


# -- presets -------------------------------------------------------------------


def test_presets_lists_the_shipped_presets():
    assert {"quick", "reference"} <= set(presets())


@pytest.mark.parametrize("name", ["quick", "reference"])
def test_preset_loads_a_shipped_preset_by_name(name: str):
    grid = preset(name)
    assert grid.name == name
    assert grid.cells()


def test_quick_preset_has_its_documented_shape():
    grid = preset("quick")
    assert grid.count == 10
    assert [(c.steps, c.lookback) for c in grid.cells()] == [
        (5, 1),
        (5, 7),
        (25, 1),
        (25, 7),
        (95, 1),
        (95, 7),
    ]


def test_reference_preset_has_55_distinct_cells():
    assert len(preset("reference").cells()) == 55


def test_preset_by_path_reads_that_file(tmp_path: Path):
    path = tmp_path / "mine.json"
    path.write_text(json.dumps({"name": "mine", "blocks": [{"steps": [4]}], "count": 2}))
    grid = preset(str(path))
    assert grid.name == "mine" and grid.count == 2


def test_preset_of_an_unknown_name_is_a_config_error_listing_the_valid_names():
    with pytest.raises(ConfigError) as err:
        preset("enormous")
    message = str(err.value)
    assert "unknown preset 'enormous'" in message
    for name in presets():
        assert name in message


# -- write_suite ---------------------------------------------------------------


def test_write_suite_returns_the_number_of_procedures(tmp_path: Path):
    assert write_suite(SMALL, tmp_path / "s", jobs=1) == len(SMALL.cells()) * SMALL.count == 15


def test_write_suite_writes_one_line_per_procedure_cell_by_cell(tmp_path: Path):
    out = tmp_path / "s"
    write_suite(SMALL, out, jobs=1)
    expected = [
        procedure_record(generate_procedure(cell, SMALL.seed, i))
        for cell in SMALL.cells()
        for i in range(SMALL.count)
    ]
    assert lines(out / PROCEDURES) == expected


def test_write_suite_manifest_holds_the_grid(tmp_path: Path):
    out = tmp_path / "s"
    write_suite(SMALL, out, jobs=1)
    manifest = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    assert Grid.model_validate(manifest["grid"]) == SMALL


def test_write_suite_writes_the_manifest_after_every_procedure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    out = tmp_path / "s"
    seen: dict[str, int] = {}
    real_write_text = Path.write_text

    def spy(self: Path, *args: Any, **kwargs: Any) -> int:
        if self.name == MANIFEST:
            procedures = self.parent / PROCEDURES
            seen["lines"] = len(procedures.read_text(encoding="utf-8").splitlines())
        return real_write_text(self, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", spy)
    n = write_suite(SMALL, out, jobs=1)
    assert seen == {"lines": n}


def test_write_suite_interrupted_leaves_no_manifest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    real = suites.generate_procedure

    def failing(cell: Cell, seed: int, index: int):
        if cell.steps == 4:
            raise RuntimeError("interrupted")
        return real(cell, seed, index)

    monkeypatch.setattr(suites, "generate_procedure", failing)
    with pytest.raises(RuntimeError, match="interrupted"):
        write_suite(SMALL, tmp_path / "s", jobs=1)
    assert not (tmp_path / "s" / MANIFEST).exists()


def test_write_suite_streams_a_cell_to_disk_before_the_cell_is_complete(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    count = 3 * suites.BATCH
    out = tmp_path / "s"
    partial = tmp_path / f".s.partial-{os.getpid()}" / PROCEDURES
    real = suites.generate_procedure
    seen: dict[str, int] = {}

    def spy(cell: Cell, seed: int, index: int):
        if index == count - 1:  # the last procedure of the only cell
            seen["bytes on disk"] = partial.stat().st_size
        return real(cell, seed, index)

    monkeypatch.setattr(suites, "generate_procedure", spy)
    write_suite(Grid(blocks=[Block(steps=[1])], count=count), out, jobs=1)
    assert seen["bytes on disk"] > 0
    assert len(lines(out / PROCEDURES)) == count


def _peak_bytes(tmp_path: Path, count: int) -> int:
    grid = Grid(blocks=[Block(steps=[1])], count=count)
    tracemalloc.start()
    try:
        write_suite(grid, tmp_path / f"s{count}", jobs=1)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_write_suite_memory_stays_flat_as_the_count_grows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr(suites, "BATCH", 100)
    _peak_bytes(tmp_path / "warm", 2000)  # one-time costs (caches the generator fills) first
    small = _peak_bytes(tmp_path, 100)
    large = _peak_bytes(tmp_path, 2000)
    # a cell held whole would take 20 times the memory
    assert large < 2 * small, (small, large)


def test_write_suite_in_processes_matches_in_process_across_batches(tmp_path: Path):
    grid = Grid(blocks=[Block(steps=[1, 2])], count=suites.BATCH + 7, seed=3)
    write_suite(grid, tmp_path / "one", jobs=1)
    write_suite(grid, tmp_path / "two", jobs=2)
    one = (tmp_path / "one" / PROCEDURES).read_bytes()
    assert one == (tmp_path / "two" / PROCEDURES).read_bytes()
    assert len(one.splitlines()) == 2 * (suites.BATCH + 7)


def test_write_suite_replaces_a_declared_workflow_s_suite_whole(tmp_path: Path):
    out = tmp_path / "s"
    out.mkdir()
    for name in ("scenarios.jsonl", "workflow.json", MANIFEST):
        (out / name).write_text("{}")
    write_suite(SMALL, out, jobs=1)
    assert sorted(p.name for p in out.iterdir()) == sorted([MANIFEST, PROCEDURES])


def test_write_suite_refuses_a_folder_holding_a_subfolder_named_like_a_suite_file(
    tmp_path: Path,
):
    out = tmp_path / "s"
    (out / PROCEDURES).mkdir(parents=True)
    (out / PROCEDURES / "mine.txt").write_text("keep me")
    with pytest.raises(InputError, match="not a suite folder"):
        write_suite(SMALL, out, jobs=1)
    assert (out / PROCEDURES / "mine.txt").read_text() == "keep me"


# -- read_procedures -----------------------------------------------------------


def test_read_procedures_round_trips_write_suite(tmp_path: Path):
    out = tmp_path / "s"
    write_suite(SMALL, out, jobs=1)
    got = [procedure_record(p) for p in read_procedures(out)]
    expected = [
        procedure_record(generate_procedure(cell, SMALL.seed, i))
        for cell in SMALL.cells()
        for i in range(SMALL.count)
    ]
    assert got == expected


def test_read_procedures_gives_procedures_with_the_generated_values(tmp_path: Path):
    out = tmp_path / "s"
    write_suite(SMALL, out, jobs=1)
    first = next(read_procedures(out))
    original = generate_procedure(SMALL.cells()[0], SMALL.seed, 0)
    assert first.values == original.values
    assert first.live == original.live
    assert first.answer == original.answer


def test_read_procedures_skips_blank_lines(tmp_path: Path):
    folder = suite_folder(tmp_path, one_procedure_line(), "", one_procedure_line(index=1))
    assert [p.index for p in read_procedures(folder)] == [0, 1]


def test_read_procedures_of_a_folder_without_procedures_names_the_folder(tmp_path: Path):
    with pytest.raises(InputError) as err:
        list(read_procedures(tmp_path))
    assert err.value.path == str(tmp_path)
    assert PROCEDURES in str(err.value)


def test_a_step_reading_a_variable_it_cannot_see_names_the_line_and_steps(tmp_path: Path):
    good = json.loads(one_procedure_line())
    steps = good["steps"]
    steps[1] = [steps[1][0], 4, 1, steps[1][3]]  # step 2 defines S4: it cannot read S4
    folder = suite_folder(tmp_path, one_procedure_line(), json.dumps({**good, "steps": steps}))
    with pytest.raises(InputError) as err:
        list(read_procedures(folder))
    assert err.value.field == "line 2: steps"
    assert "step 2 reads a variable it cannot see" in str(err.value)
    assert err.value.path == str(folder / PROCEDURES)


def test_a_step_reading_variable_zero_is_refused(tmp_path: Path):
    good = json.loads(one_procedure_line())
    steps = good["steps"]
    steps[0] = [steps[0][0], 0, 1, steps[0][3]]
    folder = suite_folder(tmp_path, json.dumps({**good, "steps": steps}))
    with pytest.raises(InputError) as err:
        list(read_procedures(folder))
    assert err.value.field == "line 1: steps"


def test_a_step_count_that_disagrees_with_the_cell_is_refused(tmp_path: Path):
    good = json.loads(one_procedure_line())
    folder = suite_folder(tmp_path, json.dumps({**good, "steps": good["steps"][:2]}))
    with pytest.raises(InputError) as err:
        list(read_procedures(folder))
    assert err.value.field == "line 1: steps"
    assert "2 steps for a cell of 3" in str(err.value)


def test_an_invalid_json_line_names_its_line(tmp_path: Path):
    folder = suite_folder(tmp_path, one_procedure_line(), one_procedure_line()[:-5])
    with pytest.raises(InputError) as err:
        list(read_procedures(folder))
    assert err.value.field == "line 2"
    assert "not valid JSON" in str(err.value)


def test_a_line_with_an_unknown_field_names_the_line_and_field(tmp_path: Path):
    folder = suite_folder(tmp_path, one_procedure_line(extra=1))
    with pytest.raises(InputError) as err:
        list(read_procedures(folder))
    assert err.value.field == "line 1: extra"


def test_a_line_with_an_unknown_op_names_the_line(tmp_path: Path):
    good = json.loads(one_procedure_line())
    steps = good["steps"]
    steps[0] = ["pow", *steps[0][1:]]
    folder = suite_folder(tmp_path, json.dumps({**good, "steps": steps}))
    with pytest.raises(InputError) as err:
        list(read_procedures(folder))
    assert (err.value.field or "").startswith("line 1: steps")


# -- reading a part of a suite ---------------------------------------------------


def _two_procedures_the_second_spoiled(tmp_path: Path) -> Path:
    good = procedure_record(generate_procedure(Cell(steps=3), 0, 0))
    bad = procedure_record(generate_procedure(Cell(steps=3), 0, 1))
    bad["steps"][0][3] += 1  # a value its operation does not give
    return suite_folder(
        tmp_path, json.dumps(good, separators=(",", ":")), json.dumps(bad, separators=(",", ":"))
    )


def test_read_procedures_with_keep_passes_over_the_others_unparsed(tmp_path: Path):
    folder = _two_procedures_the_second_spoiled(tmp_path)
    first = json.loads((folder / PROCEDURES).read_text().splitlines()[0])["id"]
    kept = list(read_procedures(folder, keep=lambda sid: sid == first))
    assert [p.id for p in kept] == [first]
    with pytest.raises(InputError, match="line 2"):  # read whole, the spoiled one is refused
        list(read_procedures(folder))


def test_read_procedures_with_keep_still_checks_the_procedures_it_keeps(tmp_path: Path):
    folder = _two_procedures_the_second_spoiled(tmp_path)
    with pytest.raises(InputError, match="line 2"):
        list(read_procedures(folder, keep=lambda sid: True))


def test_procedure_ids_lists_every_id_in_order_without_reading_the_procedures(tmp_path: Path):
    folder = _two_procedures_the_second_spoiled(tmp_path)
    expected = [json.loads(x)["id"] for x in (folder / PROCEDURES).read_text().splitlines()]
    assert list(procedure_ids(folder)) == expected


def test_procedure_ids_refuses_a_suite_changed_after_generation(tmp_path: Path):
    write_suite(SMALL, tmp_path / "s")
    with open(tmp_path / "s" / PROCEDURES, "a") as fh:
        fh.write(one_procedure_line() + "\n")
    with pytest.raises(InputError, match="digest"):
        list(procedure_ids(tmp_path / "s"))
