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

from agentproc.errors import ConfigError, OutputError, unknown_key
from agentproc.procedures.files import SCENARIOS
from agentproc.procedures.workflow_draw import (
    check_conditions,
    check_identities,
    check_instance_identities,
    draw_instance,
    probe_paths,
)
from agentproc.procedures.workflow_file import DeclaredWorkflow, read_workflow
from agentproc.workflow.declared import compile_instance
from agentproc.workflow.scenario import Scenario

MAX_COUNT = 100_000
"""Instances one suite may hold."""
WORKFLOW_MANIFEST = "suite.json"
WORKFLOW_COPY = "workflow.json"


def load_workflow(path: str | Path) -> DeclaredWorkflow:
    """A workflow file read and checked, identities included (whatever the inputs, and
    on more than half the draws), and, for a branched one, that every condition can go
    both ways: one :class:`~agentproc.errors.InputError` naming the file, the step and
    the field."""
    wf = read_workflow(path)
    check_identities(wf)
    check_conditions(wf)
    check_instance_identities(wf)
    return wf


BALANCES = ("paths",)
"""How ``--balance`` may spread a branched workflow's instances."""


def workflow_scenarios(
    wf: DeclaredWorkflow, name: str, count: int, seed: int, balance: str | None = None
) -> Iterator[Scenario]:
    """The scenarios of ``count`` instances drawn with ``seed`` (``balance="paths"``:
    instance ``i`` takes the ``i``-th path, in turn, of those seeded probe draws take)."""
    if not 1 <= count <= MAX_COUNT:
        raise ConfigError(f"--count: expected 1 to {MAX_COUNT} instances (not {count})")
    paths: list[str | None] = [None]
    if balance is not None:
        if balance not in BALANCES:
            raise unknown_key("balance", balance, BALANCES)
        if not wf.branched:
            raise ConfigError(
                f"{wf.where}: --balance paths needs a workflow with conditions or exits "
                "(this one has one path)"
            )
        paths = list(probe_paths(wf))
    for index in range(count):
        path = paths[index % len(paths)]
        yield compile_instance(wf, draw_instance(wf, seed, index, path), name, seed)


def write_workflow_suite(
    wf: DeclaredWorkflow,
    out: Path,
    count: int,
    seed: int,
    name: str | None = None,
    *,
    balance: str | None = None,
    paths: dict[str, int] | None = None,
) -> int:
    """Write a suite of ``count`` instances to the folder ``out``; how many were written.
    Every instance is drawn before anything is written, so a workflow that cannot be
    drawn leaves ``out`` as it was. ``paths``: filled with how many instances take each
    path (a branched workflow's)."""
    name = name or Path(wf.where).stem
    scenarios = list(workflow_scenarios(wf, name, count, seed, balance))
    lines = [s.model_dump_json(exclude={"tools", "prompt"}) + "\n" for s in scenarios]
    if paths is not None:
        for s in scenarios:
            if s.path is not None:
                paths[s.path.name] = paths.get(s.path.name, 0) + 1
    text = "".join(lines).encode()
    manifest: dict[str, object] = {
        "kind": "workflow",
        "workflow": name,
        "count": count,
        "seed": seed,
        "scenarios": len(lines),
        "sha256": hashlib.sha256(text).hexdigest(),  # checked as the suite is read
    }
    if balance is not None:
        manifest["balance"] = balance
    try:
        out.mkdir(parents=True, exist_ok=True)
        (out / SCENARIOS).write_bytes(text)
        (out / WORKFLOW_COPY).write_text(wf.spec.model_dump_json(indent=2) + "\n", encoding="utf-8")
        (out / WORKFLOW_MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", "utf-8")
    except OSError as exc:
        raise OutputError(out, f"cannot write the suite ({exc.strerror or exc})") from None
    return len(lines)
