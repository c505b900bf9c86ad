"""Core benchmark, run on demand: ``python benchmarks/bench_core.py``.

Prints, with the targets they answer to:
- suite generation for the reference grid (55 datasets x 1,000 procedures): < 30 s
- offline labelling of 1,000,000 calls read from a run file: < 10 s on one core,
  memory flat as the file grows (peak at 1/4 of the calls vs all of them)
- the per-call cost of the mock tools + monitor inside a run: < 50 microseconds
- ``agentproc --help`` start-up: < 0.5 s

Figures are medians of repeated runs where a run is short; machines are shared,
so read them as orders of magnitude and ratios, not as pass/fail.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from agentproc import (
    Cell,
    Monitor,
    Toolkit,
    build_workflow,
    generate_procedure,
    preset,
    scenario_of,
    write_suite,
)
from agentproc.agents.sim import run_sim_episode
from agentproc.analysis import label_record, replay_record
from agentproc.runs import episode_record, read_run, scenario_of_record


def bench_generation(tmp: Path, count: int) -> None:
    grid = preset("reference").model_copy(update={"count": count})
    start = time.perf_counter()
    n = write_suite(grid, tmp / "suite")
    took = time.perf_counter() - start
    size = (tmp / "suite" / "procedures.jsonl").stat().st_size / 1e6
    print(
        f"generation: {len(grid.cells())} datasets x {count} = {n} procedures in {took:.1f} s "
        f"({size:.0f} MB) [target < 30 s]"
    )


def make_run_file(path: Path, calls: int) -> int:
    """A run file of sim:decay episodes on 95-step procedures, repeated up to ``calls`` calls."""
    cell = Cell(steps=95, lookback=7)
    records = [
        episode_record(run_sim_episode(scenario_of(generate_procedure(cell, 0, i)), "sim:decay"))
        for i in range(50)
    ]
    lines = [json.dumps(r, separators=(",", ":")) for r in records]
    per = [len(r["calls"]) for r in records]
    written = 0
    with open(path, "w") as fh:
        i = 0
        while written < calls:
            fh.write(lines[i % len(lines)] + "\n")
            written += per[i % len(lines)]
            i += 1
    return written


def relabel(path: Path) -> tuple[int, int]:
    """Label every recorded call of a run file with the monitor (no re-execution)."""
    episodes = calls = 0
    for lineno, rec in read_run(path):
        label_record(rec, f"{path}: line {lineno}")
        episodes += 1
        calls += len(rec["calls"])
    return episodes, calls


def replay_all(path: Path) -> tuple[int, int]:
    """Re-execute and re-label every episode of a run file."""
    episodes = calls = 0
    for lineno, rec in read_run(path):
        result = replay_record(rec, scenario_of_record(path, lineno, rec), str(path))
        episodes += 1
        calls += len(result.calls)
    return episodes, calls


def bench_relabel(tmp: Path, calls: int) -> None:
    quarter = tmp / "quarter.jsonl"
    full = tmp / "full.jsonl"
    make_run_file(quarter, calls // 4)
    n = make_run_file(full, calls)
    size = full.stat().st_size / 1e6
    for label, path in (("1/4", quarter), ("all", full)):
        # A child process per file, so each peak RSS is its own.
        here = str(Path(__file__).parent)
        code = (
            f"import sys, time, resource; sys.path.insert(0, {here!r}); "
            "from bench_core import relabel; "
            f"t = time.perf_counter(); e, c = relabel({str(path)!r}); d = time.perf_counter() - t; "
            "print(e, c, d, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
        )
        out = subprocess.run(
            ["taskset", "-c", "0", sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        e, c, d, rss = int(out[0]), int(out[1]), float(out[2]), int(out[3])
        print(
            f"relabel ({label}): {c} calls in {e} episodes in {d:.1f} s on one core "
            f"({c / d / 1e3:.0f}k calls/s), peak RSS {rss / 1024:.0f} MB"
            + (
                f"; file {size:.0f} MB [target < 10 s for {n} calls, flat memory]"
                if label == "all"
                else ""
            )
        )


def bench_per_call(repeats: int = 5) -> None:
    scenario = scenario_of(generate_procedure(Cell(steps=95, lookback=7), 0, 0))
    wf = build_workflow(scenario)
    expected = wf.expected_calls()
    tool_times, monitor_times = [], []
    for _ in range(repeats):
        for _ in range(20):
            tk, mon = Toolkit(wf), Monitor(wf)
            t0 = time.perf_counter()
            records = [tk.call(n, a) for n, a in expected]
            t1 = time.perf_counter()
            for r in records:
                mon.observe(r)
            mon.finish()
            t2 = time.perf_counter()
            tool_times.append((t1 - t0) / len(expected))
            monitor_times.append((t2 - t1) / len(expected))
    print(
        f"per call: mock tools {statistics.median(tool_times) * 1e6:.1f} us, "
        f"monitor {statistics.median(monitor_times) * 1e6:.1f} us [target < 50 us]"
    )


def bench_help(repeats: int = 10) -> None:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "agentproc", "--help"], capture_output=True, check=True
        )
        times.append(time.perf_counter() - t)
    print(
        f"agentproc --help: median {statistics.median(times):.3f} s over {repeats} runs "
        "[target < 0.5 s]"
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--count", type=int, default=1000, help="procedures per dataset")
    p.add_argument("--calls", type=int, default=1_000_000, help="calls in the labelling run file")
    p.add_argument("--only", choices=["generation", "relabel", "per-call", "help"])
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        steps = {
            "help": bench_help,
            "per-call": bench_per_call,
            "generation": lambda: bench_generation(tmp, args.count),
            "relabel": lambda: bench_relabel(tmp, args.calls),
        }
        for name, fn in steps.items():
            if args.only in (None, name):
                fn()
    print(
        f"(cpus: {os.cpu_count()}, peak RSS of this process "
        f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB)"
    )


if __name__ == "__main__":
    main()
