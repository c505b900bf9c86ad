"""Seeded generation of step-wise arithmetic procedures, and suites of them on disk."""

from agentproc.procedures.files import MANIFEST, PROCEDURES
from agentproc.procedures.generate import generate_procedure
from agentproc.procedures.grid import Block, Grid, load_grid, preset, presets
from agentproc.procedures.procedure import (
    MAX_LOOKBACK,
    MAX_STEPS,
    OP_MIXES,
    Cell,
    Procedure,
    StepDef,
    parse_ops,
)
from agentproc.procedures.records import procedure_of_json, procedure_of_text, procedure_record
from agentproc.procedures.suites import (
    default_folder,
    holds_suite,
    missing_suite,
    procedure_ids,
    read_procedures,
    write_suite,
)

__all__ = [
    "MANIFEST",
    "MAX_LOOKBACK",
    "MAX_STEPS",
    "OP_MIXES",
    "PROCEDURES",
    "Block",
    "Cell",
    "Grid",
    "Procedure",
    "StepDef",
    "default_folder",
    "generate_procedure",
    "holds_suite",
    "load_grid",
    "missing_suite",
    "parse_ops",
    "preset",
    "presets",
    "procedure_ids",
    "procedure_of_json",
    "procedure_of_text",
    "procedure_record",
    "read_procedures",
    "write_suite",
]
