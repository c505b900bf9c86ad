"""A suite's design: blocks of cells, a count per cell and a seed; the shipped presets
and preset files that hold one."""

from __future__ import annotations

import itertools
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agentproc.arith import Mode
from agentproc.errors import unknown_key
from agentproc.jsonio import invalid, read_json
from agentproc.procedures.procedure import Cell
from agentproc.resources import folder


class Block(BaseModel):
    """A rectangular grid: every combination of the listed values is a cell."""

    model_config = ConfigDict(extra="forbid")
    name: str = ""
    """The sweep this block is (``length``, ``lookback``, ...); blocks of one name form one
    sweep, and a report gives each sweep its own tables."""
    steps: list[int] = Field(min_length=1)
    lookback: list[int] = Field(default=[3], min_length=1)
    ranges: list[tuple[float, float]] = Field(default=[(1.0, 10.0)], min_length=1)
    ops: list[str] = Field(default=["mixed"], min_length=1)
    modes: list[Mode] = Field(default=["decimal"], min_length=1)

    def cells(self) -> list[Cell]:
        """The cells of this block, in a fixed order."""
        return [
            Cell(steps=n, lookback=lb, range=r, ops=o, mode=m)
            for n, lb, r, o, m in itertools.product(
                self.steps, self.lookback, self.ranges, self.ops, self.modes
            )
        ]


class Grid(BaseModel):
    """A suite's design: one or more blocks, a count per cell and a seed."""

    model_config = ConfigDict(extra="forbid")
    name: str = "custom"
    description: str = ""
    blocks: list[Block] = Field(min_length=1)
    count: int = Field(default=100, ge=1)
    seed: int = 0

    def cells(self) -> list[Cell]:
        """Every distinct cell, in block order."""
        return list(dict.fromkeys(c for b in self.blocks for c in b.cells()))

    def sweeps(self) -> dict[str, list[str]]:
        """Cell id -> the sweeps whose blocks list it, in block order (an unnamed
        block is ``block I``, counted from 1)."""
        out: dict[str, list[str]] = {}
        for i, block in enumerate(self.blocks, start=1):
            name = block.name or f"block {i}"
            for c in block.cells():
                names = out.setdefault(c.id, [])
                if name not in names:
                    names.append(name)
        return out


def presets() -> dict[str, Path]:
    """Shipped presets by name."""
    return {p.stem: p for p in sorted(folder("presets").glob("*.json"))}


def load_grid(path: Path) -> Grid:
    """Read a preset or ``suite.json`` file."""
    data = read_json(path)
    data = data.get("grid", data) if isinstance(data, dict) else data
    try:
        return Grid.model_validate(data)
    except ValidationError as exc:
        raise invalid(path, exc) from None


def preset(name: str) -> Grid:
    """A shipped preset by name, or a preset file by path."""
    if name.endswith(".json") or "/" in name:
        return load_grid(Path(name))
    known = presets()
    if name not in known:
        raise unknown_key("preset", name, list(known))
    return load_grid(known[name])
