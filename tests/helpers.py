"""Small builders shared by the tests."""

from __future__ import annotations

from typing import Any

from agentproc.arith import Op
from agentproc.labelling import Label, label_calls
from agentproc.procedures import Cell, Procedure, StepDef
from agentproc.runs import read_run
from agentproc.workflow import Scenario, Toolkit, build_workflow, scenario_of


def tiny_scenario() -> Scenario:
    """S1 = 2, S2 = 3; S3 = S1 + S2 = 5; S4 = S3 * S2 = 15; S5 = S4 - S2 = 12 (dead);
    S6 = S4 / S3 = 3 (the answer)."""
    steps = (
        StepDef(1, Op.ADD, (1, 2), 5000),
        StepDef(2, Op.MUL, (3, 2), 15000),
        StepDef(3, Op.SUB, (4, 2), 12000),
        StepDef(4, Op.DIV, (4, 3), 3000),
    )
    cell = Cell(steps=4, lookback=3)
    return scenario_of(Procedure("tiny", cell, 0, 0, steps, (2000, 3000)))


RIGHT: dict[int, dict[str, Any]] = {
    1: {"S1": 2, "S2": 3},
    2: {"S3": 5, "S2": 3},
    3: {"S4": 15, "S2": 3},
    4: {"S4": 15, "S3": 5},
}
"""The right arguments of each step of :func:`tiny_scenario`."""


def step(k: int, **override: Any) -> tuple[str, dict[str, Any]]:
    """A call of step k with the right arguments, some replaced."""
    return (f"step_{k}", {**RIGHT[k], **override})


def submit(answer: Any = 3) -> tuple[str, dict[str, Any]]:
    """A submit_answer call."""
    return ("submit_answer", {"answer": answer})


ORACLE = [step(1), step(2), step(3), step(4), submit()]


def run(calls: list[tuple[str, Any]], scenario: Scenario | None = None, guard: str = "observe"):
    """Execute calls on fresh mock tools; return (labels, metrics, records)."""
    wf = build_workflow(scenario or tiny_scenario())
    tk = Toolkit(wf, guard)  # type: ignore[arg-type]
    records = [tk.call(name, args) for name, args in calls]
    labels, metrics = label_calls(wf, records)
    return labels, metrics, records


def kinds(labels: list[Label]) -> list[tuple[str, int | None, int | None]]:
    """(kind, call_index, step) of each label."""
    return [(lab.kind.value, lab.call_index, lab.step) for lab in labels]


def cli(capsys: Any, *argv: object) -> tuple[int, str, str]:
    """Run ``agentproc`` in process: its exit status, stdout and stderr."""
    from agentproc.cli import main

    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:  # argparse refuses a bad option at parse time
        code = int(exc.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def records(path: Any) -> list[dict[str, Any]]:
    """The records of a run file as readers get them (calls as objects, bulk at the top)."""
    return [dict(rec) for _, rec in read_run(path)]


def last_paragraph(text: str) -> str:
    """The last printed line, unwrapped: a line wrapped to the console's width goes on in
    indented lines, joined back here with single spaces."""
    lines = text.rstrip().splitlines()
    start = max(i for i, line in enumerate(lines) if not line.startswith(" "))
    return " ".join(line.strip() for line in lines[start:])


def constant_scenario() -> Scenario:
    """Look-back 1 with constants: S1 = 2, S2 = 3; S3 = S2 * S2 = 9; S4 = S3 - 4 = 5;
    S5 = S4 / 2.5 = 2; S6 = S5 + S5 = 4 (the answer)."""
    steps = (
        StepDef(1, Op.MUL, (2, 2), 9000),
        StepDef(2, Op.SUB, (3,), 5000, 4000),
        StepDef(3, Op.DIV, (4,), 2000, 2500),
        StepDef(4, Op.ADD, (5, 5), 4000),
    )
    cell = Cell(steps=4, lookback=1)
    return scenario_of(Procedure("constants", cell, 0, 0, steps, (2000, 3000)))


def shipped_workflows(branched: bool | None = None) -> list[Any]:
    """The shipped workflow files, sorted: all, or only those of format 2 (``True``, with
    conditions and exits) or of format 1 (``False``)."""
    from agentproc.resources import folder

    paths = sorted(folder("workflows").glob("*.toml"))
    if branched is None:
        return paths
    return [p for p in paths if ("format = 2" in p.read_text(encoding="utf-8")) == branched]
