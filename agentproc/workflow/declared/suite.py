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
import itertools
import json
from collections.abc import Iterator
from pathlib import Path

from agentproc.declared.draw import (
    check_conditions,
    check_instance_identities,
    draw_instance,
    probe_paths,
)
from agentproc.declared.file import DeclaredWorkflow, read_workflow
from agentproc.declared.identities import check_identities
from agentproc.declared.loops import (
    draw_items,
    file_fields,
    instance_workflow,
    path_kind,
)
from agentproc.errors import ConfigError, unknown_key
from agentproc.outputs import check_suite_folder, replacing_folder
from agentproc.procedures.files import SCENARIOS
from agentproc.workflow.declared.compile import compile_instance
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
    with file_fields(wf.looped, wf.where):  # a looped step named as the file writes it
        check_identities(wf)
        check_conditions(wf)
        check_instance_identities(wf)
    return wf


BALANCES = ("paths",)
"""How ``--balance`` may spread a branched workflow's instances."""


def workflow_scenarios(
    wf: DeclaredWorkflow, name: str, count: int, seed: int, balance: str | None = None
) -> Iterator[Scenario]:
    """The scenarios of ``count`` instances drawn with ``seed``, one at a time
    (``balance="paths"``: instance ``i`` takes the ``i``-th path, in turn, of those
    seeded probe draws take). The count and the balance are checked at the call."""
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
    if wf.looped is not None and balance is not None:  # balanced whatever the items
        paths = [*sorted({path_kind(p) for p in probe_paths(wf)})]
    return (_scenario(wf, name, seed, index, paths[index % len(paths)]) for index in range(count))


def _scenario(wf: DeclaredWorkflow, name: str, seed: int, index: int, path: str | None) -> Scenario:
    """Instance ``index``'s scenario (a workflow with loops: drawn from its expansion
    over the instance's own items)."""
    if wf.looped is None:
        return compile_instance(wf, draw_instance(wf, seed, index, path), name, seed)
    spec = wf.looped
    wf = instance_workflow(wf, draw_items(spec, seed, index))
    with file_fields(spec, wf.where):
        drawn = draw_instance(wf, seed, index, path, path_kind)
    return compile_instance(wf, drawn, name, seed)


WORKFLOWS_COPY = "workflows.json"
"""A suite of several workflows: each workflow as declared, by name."""
PRESETS: dict[str, tuple[str, ...]] = {
    "sop": (
        "business_verification",
        "claim_settlement",
        "hazard_class",
        "order_fulfilment",
        "refund_approval",
        "return_window",
        "service_triage",
        "warehouse_inspection",
    ),
}
"""Shipped suites of several workflows (``generate --preset NAME``): ``sop``, the
procedures of format 2 as organisations write them (branches, gates, look-ups, ids and
dates)."""


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

    Each instance is written as it is drawn, so memory stays flat whatever the count.
    The suite is written beside ``out`` and takes its place only once complete
    (:func:`~agentproc.outputs.replacing_folder`), so a workflow that cannot be drawn
    leaves ``out`` as it was; a folder that is not a suite, or that holds the workflow
    file itself, is refused (:func:`~agentproc.outputs.check_suite_folder`). ``paths``:
    filled with how many instances take each path (a branched workflow's)."""
    return write_workflows_suite(
        [(wf, name or Path(wf.where).stem)], out, count, seed, balance=balance, paths=paths
    )


def write_workflows_suite(
    workflows: list[tuple[DeclaredWorkflow, str]],
    out: Path,
    count: int,
    seed: int,
    *,
    balance: str | None = None,
    paths: dict[str, int] | None = None,
) -> int:
    """:func:`write_workflow_suite` of one or several ``(workflow, name)``: ``count``
    instances of each, in the order given (with several, ``balance`` spreads each
    branched one over its paths, and ``paths`` counts them as ``NAME:PATH``)."""
    several = len(workflows) > 1
    names = [name for _, name in workflows]
    if several and balance is not None and not any(wf.branched for wf, _ in workflows):
        raise ConfigError(
            "--balance paths needs a workflow with conditions or exits (these have one path each)"
        )
    if len(set(names)) != len(names):
        raise ConfigError(f"--workflow: a workflow named {_twice(names)!r} is given twice")
    scenarios = itertools.chain.from_iterable(
        workflow_scenarios(wf, name, count, seed, None if several and not wf.branched else balance)
        for wf, name in workflows
    )
    inputs = [Path(wf.where) for wf, _ in workflows]
    out = check_suite_folder(Path(out), inputs=inputs, overwrite=True)
    digest, written = hashlib.sha256(), 0
    with replacing_folder(out) as partial:
        with open(partial / SCENARIOS, "wb") as fh:
            for s in scenarios:
                line = (s.model_dump_json(exclude={"tools", "prompt"}) + "\n").encode()
                fh.write(line)
                digest.update(line)
                written += 1
                if paths is not None and s.path is not None:
                    key = f"{s.params.cell}:{s.path.name}" if several else s.path.name
                    paths[key] = paths.get(key, 0) + 1
        manifest: dict[str, object] = {
            "kind": "workflow",
            **({"workflows": names} if several else {"workflow": names[0]}),
            "count": count,
            "seed": seed,
            "scenarios": written,
            "sha256": digest.hexdigest(),  # checked as the suite is read
        }
        if balance is not None:
            manifest["balance"] = balance
        if several:
            specs = {name: wf.spec.model_dump(mode="json") for wf, name in workflows}
            copy = json.dumps(specs, indent=2) + "\n"
            (partial / WORKFLOWS_COPY).write_text(copy, encoding="utf-8")
        else:
            copy = workflows[0][0].spec.model_dump_json(indent=2) + "\n"
            (partial / WORKFLOW_COPY).write_text(copy, encoding="utf-8")
        # The manifest last: it marks a finished suite and says what it holds.
        (partial / WORKFLOW_MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", "utf-8")
    return written


def _twice(names: list[str]) -> str:
    return next(n for n in names if names.count(n) > 1)
