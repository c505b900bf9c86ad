"""Console text benchmark, run on demand (not a timed test):
``python benchmarks/bench_text.py [--sizes 10000,100000,1000000] [--repeats 3]``.

A cell too long for a line is wrapped by
:func:`agentproc.analysis.render.console_fit.print_wrapped`; its cost must grow linearly with
the cell's length (target: a 100 KB cell well under a second, 1 MB a few seconds at most).
For each size, prints the median seconds of ``--repeats`` runs:

- ``replay``: ``agentproc replay RUN`` of a one-episode run file whose agent name is one
  word of that many characters (the summary table is stacked, the name wrapped), in
  process, output to memory, at 80 columns;
- ``word`` and ``words``: :func:`~agentproc.analysis.render.console_fit.print_table` alone on
  a one-row table whose cell is one word of that many characters, or words of four letters.

Each line ends with the time per KB, which stays flat when the cost is linear.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ["COLUMNS"] = "80"

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from agentproc.analysis.render.console_fit import print_table  # noqa: E402
from agentproc.cli import main as cli  # noqa: E402

SCENARIO = ROOT / "scenarios" / "pinned" / "n5-L3-r1_10-mixed-decimal-0000.json"


def oracle_record(folder: Path) -> dict[str, object]:
    """One real ``sim:oracle`` record on the pinned scenario, stored self-contained."""
    out = folder / "oracle.jsonl"
    argv = ["run", str(SCENARIO), "--agent", "sim:oracle", "--out", str(out), "--self-contained"]
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        if cli(argv) != 0:
            raise SystemExit("the oracle run failed")
    return dict(json.loads(out.read_text().splitlines()[0]))


def timed(fn: Callable[[], object], repeats: int) -> float:
    """The median seconds of ``repeats`` calls of ``fn``."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def replay(run: Path) -> Callable[[], object]:
    def go() -> object:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            return cli(["replay", str(run)])

    return go


def table(cell: str) -> Callable[[], object]:
    def go() -> object:
        t = Table("episode", "agent")
        t.add_row("n5-L3-r1_10-mixed-decimal-0000", cell)
        print_table(Console(file=io.StringIO(), width=80), t)
        return None

    return go


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10000,100000,1000000")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        rec = oracle_record(folder)
        print(f"{'case':<8}{'size':>10}{'median s':>11}{'ms per KB':>11}")
        for n in sizes:
            run = folder / f"long-{n}.jsonl"
            run.write_text(json.dumps({**rec, "agent": "a" * n}) + "\n")
            cases = {
                "replay": replay(run),
                "word": table("a" * n),
                "words": table(("word " * (n // 5 + 1))[:n]),
            }
            for name, fn in cases.items():
                s = timed(fn, args.repeats)
                print(f"{name:<8}{n:>10,}{s:>11.3f}{1000 * s / (n / 1000):>11.3f}", flush=True)


if __name__ == "__main__":
    main()
