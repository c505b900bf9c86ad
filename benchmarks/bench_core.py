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
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

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
from agentproc.analysis import relabel_run, replay_record
from agentproc.runs import RunWriter, episode_record, read_run, scenario_of_record


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


def make_run_file(path: Path, calls: int, distinct: int = 50, episodes: int | None = None) -> int:
    """A run file of sim:decay episodes on 95-step procedures (``distinct`` scenarios,
    repeated as trials are), written as ``agentproc run`` writes it, up to ``calls`` calls
    (or ``episodes`` episodes, when given)."""
    cell = Cell(steps=95, lookback=7)
    scenarios = [scenario_of(generate_procedure(cell, 0, i)) for i in range(distinct)]
    written = i = 0
    with RunWriter(path) as writer:
        while written < calls if episodes is None else i < episodes:
            ep = run_sim_episode(scenarios[i % distinct], "sim:decay", seed=i // distinct)
            ep.trial = i // distinct
            writer.write(episode_record(ep))
            written += len(ep.calls)
            i += 1
    return written


def relabel(path: Path) -> tuple[int, int]:
    """``agentproc relabel RUN``: label every recorded call again (no re-execution)."""
    result = relabel_run(path)
    return result.episodes, result.calls


def parse(path: Path) -> tuple[int, int]:
    """The floor: parse every line of the same file with orjson, doing nothing else."""
    episodes = calls = 0
    with open(path, "rb") as fh:
        for line in fh:
            rec = orjson.loads(line)
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


def _child(fn: str, path: Path) -> tuple[int, int, float, int]:
    """``fn(path)`` in a child process pinned to one core: episodes, calls, seconds, RSS."""
    here = str(Path(__file__).parent)
    code = (
        f"import sys, time, resource; sys.path.insert(0, {here!r}); "
        f"from bench_core import {fn}; "
        f"t = time.perf_counter(); e, c = {fn}({str(path)!r}); d = time.perf_counter() - t; "
        "print(e, c, d, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
    )
    out = subprocess.run(
        ["taskset", "-c", "0", sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return int(out[0]), int(out[1]), float(out[2]), int(out[3])


def _process(argv: list[str]) -> float:
    """CPU seconds (user + system) of one whole process pinned to one core: start-up,
    imports and all, as a user runs it."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(["taskset", "-c", "0", *argv], capture_output=True, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


PARSE = (
    "import sys, orjson\n"
    "with open(sys.argv[1], 'rb') as fh:\n"
    "    n = sum(len(orjson.loads(line)['calls']) for line in fh)\n"
)
"""The floor as a whole process: parse every line of the file with orjson."""


def bench_relabel_process(tmp: Path, run: Path, repeats: int) -> None:
    """``agentproc relabel RUN`` (and with ``--out``) as whole processes against a whole
    process that parses the same file with orjson: the ratios a user sees."""
    cli = [sys.executable, "-m", "agentproc", "relabel", str(run)]
    out = tmp / "relabelled.jsonl"
    rounds: dict[str, list[float]] = {"parse": [], "relabel": [], "relabel --out": []}
    for _ in range(repeats):
        rounds["parse"].append(_process([sys.executable, "-c", PARSE, str(run)]))
        rounds["relabel"].append(_process(cli))
        out.unlink(missing_ok=True)
        rounds["relabel --out"].append(_process([*cli, "--out", str(out)]))
    floor = rounds["parse"]
    for name, target in (("relabel", 5), ("relabel --out", 6)):
        ratios = sorted(b / a for a, b in zip(floor, rounds[name], strict=True))
        print(
            f"{name}, whole process: {statistics.median(rounds[name]):.2f} CPU s against "
            f"{statistics.median(floor):.2f} for the parse = {statistics.median(ratios):.2f}x "
            f"(rounds {', '.join(f'{r:.2f}' for r in ratios)}) [target <= {target}x]"
        )


def bench_relabel(
    tmp: Path, calls: int, repeats: int = 5, distinct: int = 50, every: int = 2000
) -> None:
    quarter = tmp / "quarter.jsonl"
    full = tmp / "full.jsonl"
    make_run_file(quarter, calls // 4, distinct)
    make_run_file(full, calls, distinct)
    size = full.stat().st_size / 1e6
    _, _, _, rss_quarter = _child("relabel", quarter)
    floor, took, rss = [], [], 0
    for _ in range(repeats):  # interleaved, so both see the same machine
        e, c, d, _ = _child("parse", full)
        floor.append(d)
        e, _, d, rss = _child("relabel", full)
        took.append(d)
    f, t = statistics.median(floor), statistics.median(took)
    # Each round's relabel over the parse just before it: the pair saw the same machine.
    ratios = sorted(b / a for a, b in zip(floor, took, strict=True))
    print(
        f"relabel: {c} calls in {e} episodes ({distinct} distinct scenarios), file {size:.0f} MB: "
        f"orjson parse {f:.2f} s, relabel {t:.2f} s (medians of {repeats}, one core) = "
        f"{statistics.median(ratios):.2f}x the parse, the median of the rounds' ratios "
        f"({', '.join(f'{r:.2f}' for r in ratios)}) ({c / t / 1e3:.0f}k calls/s) "
        f"[target <= 2x the parse and < 8 s]; peak RSS {rss_quarter / 1024:.0f} MB at 1/4 of "
        f"the calls, {rss / 1024:.0f} MB at all [target: flat]"
    )
    # A run over a real suite holds each scenario once per agent, variant and trial: each
    # is indexed, then labelled.
    once = tmp / "distinct.jsonl"
    make_run_file(once, 0, distinct=every, episodes=every)
    floor, took = [], []
    for _ in range(repeats):
        e, c, d, _ = _child("parse", once)
        floor.append(d)
        took.append(_child("relabel", once)[2])
    f, t = statistics.median(floor), statistics.median(took)
    ratios = sorted(b / a for a, b in zip(floor, took, strict=True))
    print(
        f"relabel, every scenario distinct: {c} calls in {e} episodes ({every} distinct "
        f"95-step scenarios): orjson parse {f:.2f} s, relabel {t:.2f} s (medians of {repeats}, "
        f"one core) = {statistics.median(ratios):.2f}x the parse, the median of the rounds' "
        f"ratios ({', '.join(f'{r:.2f}' for r in ratios)}) ({t / e * 1e3:.2f} ms per episode) "
        "[target <= 4x the parse]"
    )
    bench_relabel_process(tmp, once, repeats)


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
    p.add_argument("--repeats", type=int, default=5, help="interleaved relabel rounds")
    p.add_argument(
        "--distinct", type=int, default=2000, help="scenarios (and episodes) of the distinct run"
    )
    p.add_argument("--only", choices=["generation", "relabel", "per-call", "help"])
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        steps = {
            "help": bench_help,
            "per-call": bench_per_call,
            "generation": lambda: bench_generation(tmp, args.count),
            "relabel": lambda: bench_relabel(tmp, args.calls, args.repeats, every=args.distinct),
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
