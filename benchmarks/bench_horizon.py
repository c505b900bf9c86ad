"""Calibration benchmark of the procedure horizon, run on demand (not a timed test):
``python benchmarks/bench_horizon.py [--reps N]``.

An agent that leaves the procedure with chance ``p`` at each step, independently, stays
faithful through ``N`` steps with chance ``(1 - p) ** N``: its horizon at level ``q`` is
``log(q) / log(1 - p)`` steps. For each ``p`` and design (lengths 5 to 95 by 10, a number
of scenarios per length, trials per scenario; with ``--spread``, scenarios that differ in
difficulty, their ``p`` scaled by a factor uniform on ``1 +- spread``) the benchmark draws
episodes, fits the horizon as ``report`` does (:func:`agentproc.analysis.horizon.horizon`)
and counts the runs whose 95% interval covers the true horizon (an open end of the
interval covers everything past it). Each row must be at least 93%.
"""

from __future__ import annotations

import argparse
import math
import random
import time

from agentproc.analysis.cell_stats import wilson
from agentproc.analysis.horizon import horizon

LENGTHS = (5, 15, 25, 35, 45, 55, 65, 75, 85, 95)


def coverage(
    p: float, per: int, trials: int, level: float, reps: int, spread: float, seed: int
) -> tuple[int, float]:
    rng = random.Random(seed)
    truth = math.log(level) / math.log(1 - p)
    covered, widths = 0, []
    for _ in range(reps):
        rows = []
        for n in LENGTHS:
            for _ in range(per):
                q = min(0.99, p * (1 + rng.uniform(-spread, spread)))
                rows.append((n, sum(rng.random() < (1 - q) ** n for _ in range(trials)), trials))
        h = horizon(rows, level)
        low = 0.0 if h.low is None else h.low
        high = math.inf if h.high is None else h.high
        covered += low <= truth <= high
        if h.low is not None and h.high is not None:
            widths.append(h.high / h.low)
    return covered, (sorted(widths)[len(widths) // 2] if widths else math.inf)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=400)
    args = parser.parse_args()
    start = time.perf_counter()
    print(f"{'p':>6} {'truth':>6} {'design':<22} {'level':>5}  {'coverage':<22} median high/low")
    for spread in (0.0, 0.5):
        for p in (0.005, 0.01, 0.02, 0.04, 0.08):
            for per, trials in ((6, 1), (6, 3), (20, 1)):
                for level in (0.5, 0.8):
                    got, width = coverage(p, per, trials, level, args.reps, spread, seed=7)
                    lo, hi = wilson(got, args.reps)
                    design = f"{per} x {trials} a length" + (f", spread {spread}" if spread else "")
                    truth = math.log(level) / math.log(1 - p)
                    print(
                        f"{p:>6} {truth:>6.1f} {design:<22} {level:>5}  "
                        f"{100 * got / args.reps:5.1f}% [{100 * lo:4.1f}, {100 * hi:5.1f}]  "
                        f"{width:.2f}"
                    )
    print(f"\n{args.reps} repetitions a row, {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
