"""Calibration benchmark of the induced self-conditioning measure, run on demand (not a
timed test): ``python benchmarks/bench_selfcond.py [--reps N]``.

``sim:selfcond`` slips with probability ``base`` a step while its history is clean and
``base + lift`` once it holds an error. Under a clean pre-fill its own error rate
(:func:`agentproc.analysis.measures.induced.own_error_rate`) estimates ``base``; under a pre-fill
with half its calls wrong, ``base + lift``; their difference, ``lift``. For each pair of
parameters and design (``--count``-style procedures per cell of 10, 25 and 50 steps at
look-backs 1 and 3: :data:`agentproc.experiments.selfcond_check.CELLS`) the benchmark runs
the check of ``agentproc selfcheck --selfcond`` under ``reps`` seeds and counts the runs
whose 95% interval covers each truth, with the mean estimate's bias. Each coverage must be
at least 93%.
"""

from __future__ import annotations

import argparse
import time

from agentproc.analysis.stats.binomial import wilson
from agentproc.experiments.selfcond_check import run_selfcond_check

SETTINGS = ((0.02, 0.08), (0.05, 0.15), (0.10, 0.20))
"""``(base, lift)`` pairs."""
DESIGNS = (10, 30)
"""Procedures a cell (six cells, two arms: 120 and 360 episodes a run)."""


def calibrate(base: float, lift: float, count: int, reps: int) -> dict[str, tuple[int, float]]:
    """Per truth (``base``, ``base+lift``, ``lift``): runs covered, and the mean estimate."""
    covered = {"base": 0, "base+lift": 0, "lift": 0}
    total = {"base": 0.0, "base+lift": 0.0, "lift": 0.0}
    for seed in range(reps):
        r = run_selfcond_check(count=count, seed=1000 + seed, base=base, lift=lift)
        lo, hi = r.lift_ci
        found = {
            "base": (r.clean.value, r.clean.ci, base),
            "base+lift": (r.wrong.value, r.wrong.ci, base + lift),
            "lift": (r.wrong.value - r.clean.value, (lo, hi), lift),
        }
        for name, (value, (low, high), truth) in found.items():
            covered[name] += low <= truth <= high
            total[name] += value
    return {name: (covered[name], total[name] / reps) for name in covered}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--reps", type=int, default=100)
    args = parser.parse_args()
    start = time.perf_counter()
    print(f"{'base':>5} {'lift':>5} {'count':>5}  {'truth':<9} {'':>6} {'bias':>7}  coverage")
    for base, lift in SETTINGS:
        for count in DESIGNS:
            found = calibrate(base, lift, count, args.reps)
            for name, (got, mean) in found.items():
                truth = {"base": base, "base+lift": base + lift, "lift": lift}[name]
                lo, hi = wilson(got, args.reps)
                print(
                    f"{base:>5} {lift:>5} {count:>5}  {name:<9} {truth:>6.3f} "
                    f"{mean - truth:>+7.4f}  {100 * got / args.reps:5.1f}% "
                    f"[{100 * lo:4.1f}, {100 * hi:5.1f}]"
                )
    print(f"\n{args.reps} repetitions a row, {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
