"""Flat tables of a run: one row per episode and one per agent and cell, in CSV or parquet."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest

from agentproc import Cell, generate_procedure, scenario_of
from agentproc.agents.sim import run_sim_episode
from agentproc.analysis.render.tables import (
    CELL_COLUMNS,
    EPISODE_COLUMNS,
    episode_row,
    write_tables,
)
from agentproc.runs import episode_record


def records() -> list[dict[str, Any]]:
    out = []
    for agent in ("sim:oracle", "sim:wrong_argument"):
        for steps in (3, 5):
            for i in range(3):
                s = scenario_of(generate_procedure(Cell(steps=steps, lookback=2), 0, i))
                out.append(dict(episode_record(run_sim_episode(s, agent))))
    return out


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def test_csv_tables_hold_one_row_per_episode_and_per_agent_and_cell(tmp_path: Path):
    report = write_tables(records(), [(tmp_path, "csv")])
    episodes = read_csv(tmp_path / "episodes.csv")
    cells = read_csv(tmp_path / "cells.csv")
    assert list(episodes[0]) == list(EPISODE_COLUMNS)
    assert list(cells[0]) == list(CELL_COLUMNS)
    assert len(episodes) == 12
    assert [(c["agent"], c["cell"]) for c in cells] == [
        (a, f"n{n}-L2-r1_10-mixed-decimal")
        for a in ("sim:oracle", "sim:wrong_argument")
        for n in (3, 5)
    ]
    assert report.episodes == 12  # the report is aggregated while the rows are written


def test_cell_rows_agree_with_the_episode_rows(tmp_path: Path):
    write_tables(records(), [(tmp_path, "csv")])
    episodes = read_csv(tmp_path / "episodes.csv")
    for cell in read_csv(tmp_path / "cells.csv"):
        mine = [e for e in episodes if (e["agent"], e["cell"]) == (cell["agent"], cell["cell"])]
        right = sum(e["first_answer_correct"] == "True" for e in mine)
        assert int(cell["n"]) == len(mine)
        assert float(cell["accuracy"]) == pytest.approx(right / len(mine), abs=1e-6)
        assert (
            float(cell["accuracy_low"]) <= float(cell["accuracy"]) <= float(cell["accuracy_high"])
        )
        labels = sum(int(e["n_wrong_argument"]) for e in mine)
        assert int(cell["n_wrong_argument"]) == labels
        assert (cell["range_low"], cell["range_high"], cell["ops"]) == ("1.0", "10.0", "mixed")


def test_an_episode_row_counts_labels_by_kind_and_names_its_first_divergence():
    rec = next(r for r in records() if r["agent"] == "sim:wrong_argument" and r["labels"])
    row = episode_row(rec)
    assert row["labels"] == len(rec["labels"])
    assert row["n_wrong_argument"] == sum(lab["kind"] == "wrong_argument" for lab in rec["labels"])
    assert row["divergence_label"] == rec["metrics"]["first_divergence"]["label"]
    assert (row["verdict"], row["error_kind"]) == (rec["verdict"], "")


def test_parquet_tables_load_with_typed_columns(tmp_path: Path):
    pq = pytest.importorskip("pyarrow.parquet")
    write_tables(records(), [(tmp_path, "parquet")])
    episodes = pq.read_table(tmp_path / "episodes.parquet")
    cells = pq.read_table(tmp_path / "cells.parquet")
    assert episodes.num_rows == 12 and cells.num_rows == 4
    assert episodes.column_names == list(EPISODE_COLUMNS)
    assert str(episodes.schema.field("first_answer_correct").type) == "bool"
    assert str(cells.schema.field("accuracy_low").type) == "double"


def test_parquet_without_pyarrow_names_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    import sys

    from agentproc.errors import ConfigError

    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with pytest.raises(ConfigError, match=r"pip install 'agentproc\[parquet\]'"):
        write_tables(records(), [(tmp_path, "parquet")])


def test_cell_rows_with_trials_carry_the_design_effect_in_their_intervals():
    from agentproc.analysis.measures.report import aggregate
    from agentproc.analysis.render.tables import cell_rows
    from agentproc.analysis.stats.binomial import wilson
    from agentproc.analysis.stats.student_t import t_quantile

    recs = []
    for i, rec in enumerate(records()[:8]):
        for t in range(5):  # five identical trials of each scenario
            recs.append({**rec, "scenario_id": f"s{i}", "trial": t})
    rows = list(cell_rows(aggregate(recs)))
    for row in rows:
        scenarios = row["n"] // 5
        k = round(row["faithful_accuracy"] * scenarios)
        low, high = wilson(k, scenarios, t_quantile(scenarios - 1) if scenarios > 1 else 1.96)
        assert (row["faithful_accuracy_low"], row["faithful_accuracy_high"]) == (
            pytest.approx(low, abs=1e-6),
            pytest.approx(high, abs=1e-6),
        )
