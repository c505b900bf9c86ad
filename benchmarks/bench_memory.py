"""Memory benchmark, run on demand: ``python benchmarks/bench_memory.py``.

Prints peak resident memory (the maximum RSS of a child process) for:
- ``generate`` of one 5-step cell at 1,000 and at 20,000 procedures, in one
  process: memory stays flat whatever the count (cells are streamed to disk);
- ``run`` of the reference suite (55 datasets) with a simulated agent
  (``sim:decay``): peak memory, time to the first episode on disk, and the total
  time, at ``--fraction`` of the suite and at all of it, so their ratio shows
  whether memory grows with the suite.

``--count`` sets the procedures per dataset of the reference suite (default
1,000, the full suite: the run then takes a long while on two cores).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GENERATE = """
import resource, sys
from pathlib import Path
from agentproc.procedures import Block, Grid, write_suite
write_suite(Grid(blocks=[Block(steps=[5])], count=int(sys.argv[1])), Path(sys.argv[2]), jobs=1)
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


GENERATE_REFERENCE = [sys.executable, "-m", "agentproc", "generate", "--preset", "reference"]
GENERATE_REFERENCE += ["--count"]


def peak_generate(tmp: Path, count: int) -> float:
    """Peak RSS in MB of one process writing a one-cell suite of ``count`` procedures."""
    out = subprocess.run(
        [sys.executable, "-c", GENERATE, str(count), str(tmp / f"g{count}")],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(out.stdout.split()[-1]) / 1024


def timed_run(suite: Path, run: Path, limit: int | None) -> tuple[float, float, float, int]:
    """(peak RSS MB, seconds to the first episode on disk, total seconds, episodes)."""
    cmd = [sys.executable, "-m", "agentproc", "run", str(suite), "--agent", "sim:decay"]
    cmd += ["--out", str(run), "--overwrite"]
    if limit is not None:
        cmd += ["--limit", str(limit)]
    run.unlink(missing_ok=True)
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    first: float | None = None
    while True:  # reaped by wait4, which also gives the child's peak RSS
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if first is None and run.exists() and run.stat().st_size:
            first = time.perf_counter() - start
        if pid:
            break
        time.sleep(0.05)
    total = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"run exited {proc.returncode}")
    episodes = sum(1 for _ in run.open("rb"))
    return usage.ru_maxrss / 1024, total if first is None else first, total, episodes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1000, help="procedures per dataset")
    parser.add_argument("--fraction", type=float, default=0.05, help="share of the first run")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="agentproc-bench-") as d:
        tmp = Path(d)
        small, large = peak_generate(tmp, 1_000), peak_generate(tmp, 20_000)
        print(
            f"generate, one cell in one process: peak {small:.0f} MB at 1,000 procedures, "
            f"{large:.0f} MB at 20,000 (ratio {large / small:.2f}) [target: flat]"
        )
        suite = tmp / "reference"
        start = time.perf_counter()
        subprocess.run(
            [*GENERATE_REFERENCE, str(args.count), "--out", str(suite)],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        n = 55 * args.count
        print(f"generate --preset reference: {n} procedures in {time.perf_counter() - start:.0f} s")
        part = max(1, int(n * args.fraction))
        rows = []
        for limit in (part, None):
            peak, first, total, episodes = timed_run(suite, tmp / "run.jsonl", limit)
            rows.append(peak)
            print(
                f"run sim:decay, {episodes} episodes: peak {peak:.0f} MB, first episode on disk "
                f"after {first:.1f} s, {total:.0f} s in all ({episodes / total:.0f} episodes/s)"
            )
        print(
            f"peak memory, whole suite / first {part} episodes: {rows[1] / rows[0]:.2f} "
            "[target: flat]"
        )


if __name__ == "__main__":
    main()
