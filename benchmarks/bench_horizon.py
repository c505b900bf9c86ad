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
from agentproc.analysis.horizon_diff import horizon_difference

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


def paired(
    p0: float, p1: float, per: int, trials: int, reps: int, spread: float, seed: int
) -> tuple[int, int, int, int]:
    """Runs whose interval covers the true ratio, runs with a verdict, runs with no
    difference (a horizon out of range), and runs in all that gave a difference."""
    rng = random.Random(seed)
    truth = math.log(1 - p0) / math.log(1 - p1)
    covered = verdicts = out = 0
    for _ in range(reps):
        base, arm = [], []
        for n in LENGTHS:
            for _ in range(per):
                f = 1 + rng.uniform(-spread, spread)  # the scenario's difficulty, both arms
                for rows, p in ((base, p0), (arm, p1)):
                    q = min(0.99, p * f)
                    rows.append(
                        (n, sum(rng.random() < (1 - q) ** n for _ in range(trials)), trials)
                    )
        d = horizon_difference(base, arm)
        ci = d.ci
        if ci is None:
            out += 1
            continue
        covered += ci[0] <= truth <= ci[1]
        verdicts += d.significant
    return covered, verdicts, out, reps - out


def main_paired(reps: int) -> None:
    print(
        f"{'p0':>6} {'p1':>6} {'ratio':>5} {'design':<22} {'coverage':<22} "
        f"{'verdicts':<22} out of range"
    )
    for spread in (0.0, 0.5):
        for p0, p1 in ((0.01, 0.01), (0.02, 0.02), (0.04, 0.04), (0.02, 0.01), (0.04, 0.02)):
            for per, trials in ((6, 1), (6, 3), (20, 1)):
                cov, ver, out, given = paired(p0, p1, per, trials, reps, spread, seed=11)
                design = f"{per} x {trials} a length" + (f", spread {spread}" if spread else "")
                ratio = math.log(1 - p0) / math.log(1 - p1)
                c_lo, c_hi = wilson(cov, given) if given else (0.0, 1.0)
                v_lo, v_hi = wilson(ver, given) if given else (0.0, 1.0)
                print(
                    f"{p0:>6} {p1:>6} {ratio:>5.2f} {design:<22} "
                    f"{100 * cov / max(given, 1):5.1f}% [{100 * c_lo:4.1f}, {100 * c_hi:5.1f}]  "
                    f"{100 * ver / max(given, 1):5.1f}% [{100 * v_lo:4.1f}, {100 * v_hi:5.1f}]  "
                    f"{100 * out / reps:.1f}%"
                )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=400)
    parser.add_argument(
        "--paired", action="store_true", help="the paired difference of two arms' horizons"
    )
    args = parser.parse_args()
    start = time.perf_counter()
    if args.paired:
        main_paired(args.reps)
        print(f"\n{args.reps} repetitions a row, {time.perf_counter() - start:.0f} s")
        return
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
