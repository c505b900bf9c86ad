"""Seeded generation of step-wise arithmetic procedures, and suites of them on disk.

The names below are imported on first use (:mod:`agentproc.lazy`): reading a suite's
ids (:mod:`agentproc.procedures.files`) needs no pydantic model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentproc.lazy import exports

if TYPE_CHECKING:  # the same names, for IDEs and type checkers (``X as X`` re-exports)
    from agentproc.procedures.files import MANIFEST as MANIFEST
    from agentproc.procedures.files import PROCEDURES as PROCEDURES
    from agentproc.procedures.generate import MAX_LOOKBACK as MAX_LOOKBACK
    from agentproc.procedures.generate import MAX_STEPS as MAX_STEPS
    from agentproc.procedures.generate import OP_MIXES as OP_MIXES
    from agentproc.procedures.generate import Cell as Cell
    from agentproc.procedures.generate import Procedure as Procedure
    from agentproc.procedures.generate import StepDef as StepDef
    from agentproc.procedures.generate import generate_procedure as generate_procedure
    from agentproc.procedures.generate import parse_ops as parse_ops
    from agentproc.procedures.suites import Block as Block
    from agentproc.procedures.suites import Grid as Grid
    from agentproc.procedures.suites import default_folder as default_folder
    from agentproc.procedures.suites import holds_suite as holds_suite
    from agentproc.procedures.suites import load_grid as load_grid
    from agentproc.procedures.suites import preset as preset
    from agentproc.procedures.suites import presets as presets
    from agentproc.procedures.suites import procedure_ids as procedure_ids
    from agentproc.procedures.suites import procedure_of_json as procedure_of_json
    from agentproc.procedures.suites import procedure_record as procedure_record
    from agentproc.procedures.suites import read_procedures as read_procedures
    from agentproc.procedures.suites import write_suite as write_suite

_EXPORTS: dict[str, str] = {
    "MAX_LOOKBACK": "agentproc.procedures.generate",
    "MAX_STEPS": "agentproc.procedures.generate",
    "OP_MIXES": "agentproc.procedures.generate",
    "Cell": "agentproc.procedures.generate",
    "Procedure": "agentproc.procedures.generate",
    "StepDef": "agentproc.procedures.generate",
    "generate_procedure": "agentproc.procedures.generate",
    "parse_ops": "agentproc.procedures.generate",
    "MANIFEST": "agentproc.procedures.files",
    "PROCEDURES": "agentproc.procedures.files",
    "Block": "agentproc.procedures.suites",
    "Grid": "agentproc.procedures.suites",
    "default_folder": "agentproc.procedures.suites",
    "holds_suite": "agentproc.procedures.suites",
    "load_grid": "agentproc.procedures.suites",
    "preset": "agentproc.procedures.suites",
    "presets": "agentproc.procedures.suites",
    "procedure_ids": "agentproc.procedures.suites",
    "procedure_of_json": "agentproc.procedures.suites",
    "procedure_record": "agentproc.procedures.suites",
    "read_procedures": "agentproc.procedures.suites",
    "write_suite": "agentproc.procedures.suites",
}
"""Public name -> the module that defines it."""

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = exports(__name__, _EXPORTS, globals())
