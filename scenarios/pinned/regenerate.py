"""Rewrite the pinned scenarios: ``python scenarios/pinned/regenerate.py``.

The pinned files are golden: ``tests/test_schema.py`` regenerates each from its
``params`` and requires byte-identical text, so generation and compilation stay
deterministic across machines. Run this only for an intended format change.
"""

from __future__ import annotations

import json
from pathlib import Path

from agentproc.procedures import Cell, generate_procedure
from agentproc.workflow import compile_procedure

HERE = Path(__file__).resolve().parent
SEED = 0
CELLS = (
    Cell(steps=5, lookback=3, range=(1.0, 10.0)),
    Cell(steps=25, lookback=7, range=(0.0, 1.0)),
    Cell(steps=10, lookback=3, range=(1.0, 10.0), mode="integer"),
    Cell(steps=95, lookback=7, range=(10.0, 100.0)),
)


def scenario_text(cell: Cell, seed: int, index: int) -> str:
    """The exact text of a pinned scenario file."""
    scenario = compile_procedure(generate_procedure(cell, seed, index))
    return json.dumps(scenario.model_dump(mode="json"), indent=2) + "\n"


def main() -> None:
    for cell in CELLS:
        path = HERE / f"{cell.id}-0000.json"
        path.write_text(scenario_text(cell, SEED, 0), encoding="utf-8")
        print(path.name)


if __name__ == "__main__":
    main()
