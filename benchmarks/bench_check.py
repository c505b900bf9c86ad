"""``check --baseline`` benchmark, run on demand (not a timed test):
``python benchmarks/bench_check.py [--trials 2000,8000] [--big]``.

Writes a run and its baseline as run files of one agent, from two real episodes of the
pinned 5-step scenario (a faithful ``sim:oracle`` one and a ``sim:skipped_step`` one) repeated
with their scenario and trial changed; the run is faithful in about 70% of episodes, the
baseline in 80%. Then times :func:`agentproc.analysis.gate.conditions.check_files` on them as
``agentproc check RUN --baseline BASE`` does (reading both files, the paired comparison and
pass^k of every k), and prints the seconds and the verdict line.

- one scenario of T trials, for each T of ``--trials``: the trials-per-scenario cost (pass^k
  for every k was quadratic in T: 2.2 s at 2,000 and 39 s at 8,000);
- ``--big``: 100 scenarios of 1,000 trials, 100,000 episodes in each file.

Machines are shared, so read the figures as orders of magnitude.

Measured on a shared two-core machine at a load average of about 9: one scenario of
2,000, 8,000 and 20,000 trials in 0.95, 3.5 and 10.9 s (the tree before, measured the
same hour with this file: 7.9 s at 2,000 and 334 s at 8,000); 100 scenarios of 1,000
trials, two files of 100,000 self-contained episodes (474 MB each), in 49.7 s, most of
it reading and checking the lines (measured apart: 32 s reading both, 7 s comparing).
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path
from typing import Any

from agentproc.analysis.gate.conditions import check_files
from agentproc.cli import main as cli
from agentproc.runs import read_run
from agentproc.runs.layout import line_of

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "scenarios" / "pinned" / "n5-L3-r1_10-mixed-decimal-0000.json"


def episode(folder: Path, agent: str) -> dict[str, Any]:
    """One real record of ``agent`` on the pinned scenario, stored self-contained."""
    out = folder / f"{agent.replace(':', '-')}.jsonl"
    argv = ["run", str(SCENARIO), "--agent", agent, "--out", str(out), "--self-contained"]
    assert cli(argv) == 0
    [(_, rec)] = list(read_run(out))
    return dict(rec)


def write_run(
    path: Path, scenarios: int, trials: int, faithful: float, pair: tuple[dict, dict]
) -> None:
    """A run file of ``scenarios`` x ``trials`` episodes, each faithful with that chance."""
    rng = random.Random(f"{path.name}:{faithful}")
    good, bad = pair
    with open(path, "w", encoding="utf-8") as fh:
        for s in range(scenarios):
            for t in range(trials):
                rec = good if rng.random() < faithful else bad
                fh.write(line_of({**rec, "scenario_id": f"s{s:04d}", "trial": t, "agent": "bench"}))


def timed(folder: Path, scenarios: int, trials: int, pair: tuple[dict, dict]) -> None:
    run, base = folder / "run.jsonl", folder / "base.jsonl"
    write_run(base, scenarios, trials, 0.8, pair)
    write_run(run, scenarios, trials, 0.7, pair)
    start = time.perf_counter()
    result = check_files(run, base)
    took = time.perf_counter() - start
    line = next(c.message for c in result.conditions if c.name == "regression")
    episodes = scenarios * trials
    print(f"{scenarios:>9,} {trials:>7,} {episodes:>9,} {took:>8.2f}  {line[:70]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", default="2000,8000", help="trials of the one-scenario runs")
    parser.add_argument("--big", action="store_true", help="also 100 scenarios x 1,000 trials")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        pair = (episode(folder, "sim:oracle"), episode(folder, "sim:skipped_step"))
        print(f"{'scenarios':>9} {'trials':>7} {'episodes':>9} {'check s':>8}  regression")
        for trials in (int(t) for t in args.trials.split(",") if t):
            timed(folder, 1, trials, pair)
        if args.big:
            timed(folder, 100, 1_000, pair)


if __name__ == "__main__":
    main()
