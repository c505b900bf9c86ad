"""A declared workflow's suite on disk: written as its instances are drawn (memory flat
whatever the count, with or without ``balance="paths"``), whole or not at all."""

from __future__ import annotations

import gc
import json
import os
import sys
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

import agentproc.workflow.declared.suite as declared_suite
from agentproc.declared.file import DeclaredWorkflow
from agentproc.procedures.files import SCENARIOS
from agentproc.resources import folder
from agentproc.workflow.declared.suite import (
    load_workflow,
    workflow_scenarios,
    write_workflow_suite,
)

INVOICE = load_workflow(folder("workflows") / "invoice_approval.toml")
REFUND = load_workflow(folder("workflows") / "refund_approval.toml")
RETURNS = load_workflow(folder("workflows") / "return_window.toml")

FOUR_STEPS = """\
description = "Price an order line: its amount, its tax, its gross amount and its unit price."
answer = "per_unit"
finish_tool = "submit_per_unit"

[inputs.quantity]
description = "Units ordered."
integers = [1, 40]

[inputs.unit_price]
description = "The price of one unit."
range = [2.5, 180.0]
decimals = 2

[inputs.tax_rate]
description = "The tax rate on the amount."
choices = [0.07, 0.19]

[[steps]]
tool = "line_amount"
description = "The quantity times the unit price."
output = "amount"
formula = "quantity * unit_price"

[[steps]]
tool = "tax"
description = "The amount times the tax rate."
output = "tax"
formula = "amount * tax_rate"

[[steps]]
tool = "gross"
description = "The amount plus the tax."
output = "gross"
formula = "amount + tax"

[[steps]]
tool = "per_unit"
description = "The gross amount over the quantity."
output = "per_unit"
formula = "gross / quantity"
"""


@pytest.mark.parametrize(
    ("wf", "balance"), [(INVOICE, None), (REFUND, "paths")], ids=["plain", "balance paths"]
)
def test_instances_reach_the_disk_before_the_last_is_drawn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, wf: DeclaredWorkflow, balance: str | None
):
    count, out = 40, tmp_path / "s"
    partial = tmp_path / f".s.partial-{os.getpid()}" / SCENARIOS
    real = declared_suite.draw_instance
    seen: dict[str, int] = {}

    def spy(wf: DeclaredWorkflow, seed: int, index: int, path: str | None = None) -> Any:
        if index == count - 1:
            seen["bytes on disk"] = partial.stat().st_size if partial.exists() else 0
        return real(wf, seed, index, path)

    monkeypatch.setattr(declared_suite, "draw_instance", spy)
    assert write_workflow_suite(wf, out, count, 0, "w", balance=balance) == count
    assert seen["bytes on disk"] > 0
    assert len((out / SCENARIOS).read_bytes().splitlines()) == count


def _peak_bytes(wf: DeclaredWorkflow, out: Path, count: int) -> int:
    tracemalloc.start()
    try:
        write_workflow_suite(wf, out, count, 0, "four")
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_memory_stays_flat_as_the_count_grows(tmp_path: Path):
    (tmp_path / "four.toml").write_text(FOUR_STEPS, encoding="utf-8")
    wf = load_workflow(tmp_path / "four.toml")
    _peak_bytes(wf, tmp_path / "warm", 500)  # one-time costs (free lists filled) first
    small = _peak_bytes(wf, tmp_path / "small", 50)
    large = _peak_bytes(wf, tmp_path / "large", 500)
    # An instance held takes tens of kilobytes (its scenario and its line); what the
    # allocator keeps for reuse stays within a few hundred bytes an instance.
    assert large - small < 1000 * (500 - 50), (small, large)


def test_a_draw_that_fails_partway_leaves_the_old_suite_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    out = tmp_path / "s"
    write_workflow_suite(INVOICE, out, 3, 0)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    real = declared_suite.draw_instance

    def failing(wf: DeclaredWorkflow, seed: int, index: int, path: str | None = None) -> Any:
        if index == 5:
            raise RuntimeError("interrupted")
        return real(wf, seed, index, path)

    monkeypatch.setattr(declared_suite, "draw_instance", failing)
    with pytest.raises(RuntimeError, match="interrupted"):
        write_workflow_suite(INVOICE, out, 10, 1)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s"]


def test_balanced_paths_are_counted_as_written(tmp_path: Path):
    paths: dict[str, int] = {}
    write_workflow_suite(REFUND, tmp_path / "s", 12, 0, balance="paths", paths=paths)
    lines = (tmp_path / "s" / SCENARIOS).read_text(encoding="utf-8").splitlines()
    written: dict[str, int] = {}
    for line in lines:
        name = json.loads(line)["path"]["name"]
        written[name] = written.get(name, 0) + 1
    assert paths == written
    assert len(paths) > 1 and max(paths.values()) - min(paths.values()) <= 1


def test_every_file_of_a_workflow_suite_is_one_the_output_rule_knows():
    from agentproc.outputs import SUITE_FILES

    written = {SCENARIOS, declared_suite.WORKFLOW_COPY, declared_suite.WORKFLOW_MANIFEST}
    written.add(declared_suite.WORKFLOWS_COPY)
    assert written <= set(SUITE_FILES)


def test_an_instances_drawn_ids_are_not_kept_once_it_is_dropped():
    # Each instance of return_window draws its own order and customer ids: the process
    # must not hold them after the instance, or memory grows with the count.
    first = next(iter(workflow_scenarios(RETURNS, "return_window", count=1, seed=0)))
    order = first.inputs["order_id"]
    assert isinstance(order, str) and order.startswith("ORD-")
    del first
    for _ in workflow_scenarios(RETURNS, "return_window", count=60, seed=1):
        pass
    gc.collect()
    assert sys.getrefcount(order) == 2  # ``order`` and the call's argument alone
