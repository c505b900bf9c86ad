"""A suite of a declared workflow's instances on disk: ``scenarios.jsonl`` (each
scenario without its tools and prompt, filled in as it is read), ``suite.json`` (what
made it, and the digest of ``scenarios.jsonl``) and ``workflow.json`` (the workflow as
declared). ``run``, ``replay``, ``relabel`` and ``report`` read it as any suite.

>>> from agentproc.resources import folder
>>> wf = load_workflow(folder("workflows") / "invoice_approval.toml")
>>> [s.id for s in workflow_scenarios(wf, "invoice_approval", count=2, seed=0)]
['invoice_approval-0000', 'invoice_approval-0001']
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path

from agentproc.errors import ConfigError, OutputError
from agentproc.procedures.files import SCENARIOS
from agentproc.procedures.workflow_draw import check_identities, draw_instance
from agentproc.procedures.workflow_file import DeclaredWorkflow, read_workflow
from agentproc.workflow.declared import compile_instance
from agentproc.workflow.scenario import Scenario

MAX_COUNT = 100_000
"""Instances one suite may hold."""
WORKFLOW_MANIFEST = "suite.json"
WORKFLOW_COPY = "workflow.json"


def load_workflow(path: str | Path) -> DeclaredWorkflow:
    """A workflow file read and checked, identities included: one
    :class:`~agentproc.errors.InputError` naming the file, the step and the field."""
    wf = read_workflow(path)
    check_identities(wf)
    return wf


def workflow_scenarios(
    wf: DeclaredWorkflow, name: str, count: int, seed: int
) -> Iterator[Scenario]:
    """The scenarios of ``count`` instances drawn with ``seed``."""
    if not 1 <= count <= MAX_COUNT:
        raise ConfigError(f"--count: expected 1 to {MAX_COUNT} instances (not {count})")
    for index in range(count):
        yield compile_instance(wf, draw_instance(wf, seed, index), name, seed)


def write_workflow_suite(
    wf: DeclaredWorkflow, out: Path, count: int, seed: int, name: str | None = None
) -> int:
    """Write a suite of ``count`` instances to the folder ``out``; how many were written.
    Every instance is drawn before anything is written, so a workflow that cannot be
    drawn leaves ``out`` as it was."""
    name = name or Path(wf.where).stem
    lines = [
        s.model_dump_json(exclude={"tools", "prompt"}) + "\n"
        for s in workflow_scenarios(wf, name, count, seed)
    ]
    text = "".join(lines).encode()
    manifest = {
        "kind": "workflow",
        "workflow": name,
        "count": count,
        "seed": seed,
        "scenarios": len(lines),
        "sha256": hashlib.sha256(text).hexdigest(),  # checked as the suite is read
    }
    try:
        out.mkdir(parents=True, exist_ok=True)
        (out / SCENARIOS).write_bytes(text)
        (out / WORKFLOW_COPY).write_text(wf.spec.model_dump_json(indent=2) + "\n", encoding="utf-8")
        (out / WORKFLOW_MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", "utf-8")
    except OSError as exc:
        raise OutputError(out, f"cannot write the suite ({exc.strerror or exc})") from None
    return len(lines)
