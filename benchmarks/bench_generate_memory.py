"""Memory of a declared workflow's suite generation, run on demand:
``python benchmarks/bench_generate_memory.py``.

Prints the peak resident memory (the maximum RSS of a child process running
``agentproc generate``) at two instance counts (``--counts``, default 1,000 and 100,000),
and their ratio [target: flat, about 1.0], for each case of ``--cases`` (default all):
- ``four``: a four-step workflow of format 1 (written by this script),
- ``refund``: the shipped branched workflow ``refund_approval`` with ``--balance paths``,
- ``sop``: ``--preset sop``, the shipped workflows of format 2 in one suite (the count
  is the suite's: an equal share of it for each of its workflows),
- ``order``: the shipped look-up workflow ``order_fulfilment``.

``--run AGENT`` also runs that agent (say ``sim:oracle``) over each suite generated and
prints the peak resident memory of the ``run`` child at both counts and their ratio.

``--root`` runs the ``agentproc`` of another checkout (default: this one), so two trees
can be measured the same hour.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from agentproc.workflow.declared.suite import PRESETS

ROOT = Path(__file__).resolve().parent.parent
SOP = len(PRESETS["sop"])
"""The workflows of ``--preset sop``: each draws its share of the count."""

FOUR_STEPS = """\
description = "Price an order line: its amount, the tax on it, the shipping and the total."
answer = "total"
finish_tool = "submit_total"

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

[inputs.shipping]
description = "The shipping charge."
range = [5.0, 60.0]
decimals = 2

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
tool = "shipped"
description = "The amount plus the shipping."
output = "shipped"
formula = "amount + shipping"

[[steps]]
tool = "total"
description = "The shipped amount plus the tax."
output = "total"
formula = "shipped + tax"
"""


def peak_generate(root: Path, argv: list[str], count: int, out: Path, shown: int) -> float:
    """Peak RSS in MB of one ``generate`` (``argv`` before ``--count``) with ``--count
    count``, ``shown`` instances in all (and seconds, to stderr)."""
    argv = [*argv, "--count", str(count), "--seed", "0", "--out", str(out)]
    return peak(root, ["generate", *argv], f"{shown:>7,} instances")


def peak_run(root: Path, agent: str, suite: Path, shown: int) -> float:
    """Peak RSS in MB of one ``run`` of ``agent`` over the whole of ``suite`` (``shown``
    episodes; seconds to stderr)."""
    argv = ["run", str(suite), "--agent", agent, "--out", str(suite / "run.jsonl")]
    return peak(root, argv, f"{shown:>7,} episodes of {agent}")


def peak(root: Path, argv: list[str], what: str) -> float:
    """Peak RSS in MB of ``agentproc ARGV`` run by the checkout ``root`` (and its seconds,
    to stderr, after ``what``)."""
    cmd = [sys.executable, "-m", "agentproc", *argv]
    env = {**os.environ, "PYTHONPATH": str(root)}
    start = time.perf_counter()
    proc = subprocess.Popen(
        cmd, cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    _, status, usage = os.wait4(proc.pid, 0)  # reaps the child and gives its peak RSS
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(cmd)} exited {os.waitstatus_to_exitcode(status)}")
    print(f"  {what}: {time.perf_counter() - start:.1f} s", file=sys.stderr)
    return usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout to measure")
    parser.add_argument("--counts", default="1000,100000", help="the two instance counts")
    parser.add_argument("--cases", default="four,refund,sop,order", help="the cases to measure")
    parser.add_argument("--run", metavar="AGENT", help="also run AGENT over each suite")
    args = parser.parse_args()
    small, large = (int(c) for c in args.counts.split(","))
    shipped = ROOT / "scenarios" / "workflows"
    with tempfile.TemporaryDirectory(prefix="agentproc-bench-") as d:
        tmp = Path(d)
        four = tmp / "order.toml"
        four.write_text(FOUR_STEPS, encoding="utf-8")
        refund = ["--workflow", str(shipped / "refund_approval.toml"), "--balance", "paths"]
        # label, arguments, how many instances one --count makes
        cases = {
            "four": ("--workflow, 4 steps, format 1", ["--workflow", str(four)], 1),
            "refund": ("--workflow refund_approval --balance paths", refund, 1),
            "sop": (f"--preset sop ({SOP} workflows)", ["--preset", "sop"], SOP),
            "order": (
                "--workflow order_fulfilment",
                ["--workflow", str(shipped / "order_fulfilment.toml")],
                1,
            ),
        }
        for case in args.cases.split(","):
            label, argv, per_count = cases[case]
            peaks = [
                peak_generate(args.root.resolve(), argv, n // per_count, tmp / f"{case}-{n}", n)
                for n in (small, large)
            ]
            print(
                f"generate {label}: peak {peaks[0]:.0f} MB at {small:,} "
                f"instances, {peaks[1]:.0f} MB at {large:,} (ratio {peaks[1] / peaks[0]:.2f}) "
                "[target: flat]",
                flush=True,
            )
            if args.run is None:
                continue
            runs = [
                peak_run(args.root.resolve(), args.run, tmp / f"{case}-{n}", n)
                for n in (small, large)
            ]
            print(
                f"run {args.run} over it: peak {runs[0]:.0f} MB at {small:,} "
                f"episodes, {runs[1]:.0f} MB at {large:,} (ratio {runs[1] / runs[0]:.2f}) "
                "[target: flat]",
                flush=True,
            )


if __name__ == "__main__":
    main()
