"""How long a declared workflow's formula checks take on what tries to exhaust them, run on
demand: ``python benchmarks/bench_formula_refusals.py``.

Prints the median over ``--repeats`` of the time :func:`~agentproc.declared.formula.parse`
takes to refuse each grammar attack (the parse cache cleared each time), and the time
:func:`~agentproc.declared.identities.check_identities` takes on a shipped
workflow and on workflows whose one suspicious step is proved, needs more than the proof's
bound of work (so the probe draws decide), or is a resource bomb for both
[target: each one line within 1 s].
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agentproc.declared.file import (  # noqa: E402
    DeclaredWorkflow,
    read_workflow,
    workflow_from_json,
)
from agentproc.declared.formula import FormulaError, parse  # noqa: E402
from agentproc.declared.identities import check_identities  # noqa: E402
from agentproc.errors import InputError  # noqa: E402

ATTACKS = {
    "flat chain past the size": "a" + "+a" * 499,
    "nesting past the depth": "a * (" * 200 + "a" + ")" * 200,
    "unary minus 999 deep": "-" * 999 + "a",
    "literal beyond a float": "a + " + "9" * 400 + "e999",
    "literal below a float": "a * 1e-99999",
}


def _cancelled(factor: str, n: int) -> str:
    """``x + f * f * ... - f * f * ...``: equal to ``x``, after expanding ``f ** n``."""
    power = " * ".join([factor] * n)
    return f"x + {power} - {power}"


STEPS = {
    "proved identity": "x * a / a",
    "past the proof's bound": _cancelled("(a + b + c + d + 1)", 16),
    "huge coefficients": _cancelled("(a * 1e300 + b)", 24),
}


def _workflow(formula: str) -> DeclaredWorkflow:
    inputs = {n: {"integers": [1, 9]} for n in "abcd"}
    steps = [
        {"tool": "t1", "output": "x", "formula": "a + b"},
        {"tool": "t2", "output": "y", "formula": formula},
    ]
    data = {"description": "x", "inputs": inputs, "steps": steps, "answer": "y"}
    return workflow_from_json(data, "bench")


def _median(repeats: int, work: Callable[[], None]) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _refused(work: Callable[[], object]) -> Callable[[], None]:
    def run() -> None:
        parse.cache_clear()
        try:
            work()
        except (FormulaError, InputError):
            return

    return run


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=5)
    args = p.parse_args()
    print("parse, median seconds to refuse [target: under 1 s]")
    for name, text in ATTACKS.items():
        print(f"  {name:28} {_median(args.repeats, _refused(lambda t=text: parse(t))):.4f}")
    print("check_identities, median seconds [target: under 1 s]")
    payroll = read_workflow(ROOT / "scenarios" / "workflows" / "payroll.toml")
    print(
        f"  {'payroll (shipped)':28} {_median(args.repeats, lambda: check_identities(payroll)):.4f}"
    )
    for name, formula in STEPS.items():
        wf = _workflow(formula)
        print(
            f"  {name:28} {_median(args.repeats, _refused(lambda w=wf: check_identities(w))):.4f}"
        )


if __name__ == "__main__":
    main()
