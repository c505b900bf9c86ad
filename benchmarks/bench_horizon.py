"""Calibration benchmark of the procedure horizon, run on demand (not a timed test):
``python benchmarks/bench_horizon.py [--reps N] [--shapes | --paired]``.

An agent that leaves the procedure with chance ``p`` at each step, independently, stays
faithful through ``N`` steps with chance ``(1 - p) ** N``: its horizon at level ``q`` is
``log(q) / log(1 - p)`` steps. For each ``p`` and design (lengths 5 to 95 by 10, a number
of scenarios per length, trials per scenario; with ``--spread``, scenarios that differ in
difficulty, their ``p`` scaled by a factor uniform on ``1 +- spread``) the benchmark draws
episodes, fits the horizon as ``report`` does (:func:`agentproc.analysis.measures.horizon.horizon`)
and counts the runs whose 95% interval covers the true horizon (an open end of the
interval covers everything past it; a run that gives no horizon, success not shown to
fall, covers everything). Each row must be at least 93%.

``--shapes`` does the same for curves that are not one rate a step: steep falls (success
``exp(-ln 2 * (N / H) ** k)``, a 50% horizon of ``H`` steps and shape ``k`` of 3 or 8, a
near cliff where the outcomes nearly separate), flat curves (success 0.9 or 0.3 at every
length: the horizon is past every length, or before every one) and a rising curve
(success from 0.3 at 5 steps to 0.9 at 95: no horizon at all). Besides coverage, each
row gives how often success was shown to fall and how often a horizon was claimed
within the tested lengths.
"""

from __future__ import annotations

import argparse
import math
import random
import time
from collections.abc import Callable

from agentproc.analysis.compare.horizon_diff import horizon_difference
from agentproc.analysis.measures.horizon import LEVELS, horizon, horizon_fit
from agentproc.analysis.stats.binomial import wilson

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


SHAPES: dict[str, tuple[Callable[[int], float], float | None]] = {
    # name -> (success at N steps, the 50% horizon: None for a curve that rises)
    "steep k=3, H=20": (lambda n: math.exp(-math.log(2) * (n / 20) ** 3), 20.0),
    "steep k=3, H=50": (lambda n: math.exp(-math.log(2) * (n / 50) ** 3), 50.0),
    "steep k=8, H=20": (lambda n: math.exp(-math.log(2) * (n / 20) ** 8), 20.0),
    "steep k=8, H=50": (lambda n: math.exp(-math.log(2) * (n / 50) ** 8), 50.0),
    "flat 0.9": (lambda n: 0.9, math.inf),
    "flat 0.3": (lambda n: 0.3, -math.inf),
    "rising 0.3 to 0.9": (lambda n: 0.3 + 0.6 * math.log(n / 5) / math.log(95 / 5), None),
}


def truth_of(name: str, level: float) -> float | None:
    """The true horizon of a shape at ``level`` (infinite for a flat curve; ``None``:
    success rises, so no horizon is true)."""
    _, h = SHAPES[name]
    if h is None or math.isinf(h):
        return h
    k = float(name.split("k=")[1].split(",")[0])
    return h * (math.log(1 / level) / math.log(2)) ** (1 / k)


def shape_coverage(
    name: str, per: int, trials: int, reps: int, seed: int
) -> dict[float, tuple[int, int, int, int]]:
    """Per level: runs covering the truth, runs showing a fall, runs with a horizon
    claimed (within, beyond or below the tested lengths), runs with one within them."""
    rng = random.Random(seed)
    success, _ = SHAPES[name]
    out = {q: [0, 0, 0, 0] for q in LEVELS}
    for _ in range(reps):
        rows = [
            (n, sum(rng.random() < success(n) for _ in range(trials)), trials)
            for n in LENGTHS
            for _ in range(per)
        ]
        fit = horizon_fit(rows)
        for q in LEVELS:
            h, truth = fit(q), truth_of(name, q)
            low = -math.inf if h.low is None else h.low
            high = math.inf if h.high is None else h.high
            # a rising curve has no true horizon: any horizon claimed is wrong
            out[q][0] += (not h.claimed) if truth is None else low <= truth <= high
            out[q][1] += h.trend == "falls"
            out[q][2] += h.claimed
            out[q][3] += h.steps is not None
    return {q: (c[0], c[1], c[2], c[3]) for q, c in out.items()}


def main_shapes(reps: int) -> None:
    print(
        f"{'shape':<18} {'design':<16} {'level':>5} {'truth':>6}  {'coverage':<22} "
        f"{'falls shown':<12} {'claimed':<8} within"
    )
    for name in SHAPES:
        for per, trials in ((6, 1), (6, 3), (20, 1)):
            got = shape_coverage(name, per, trials, reps, seed=5)
            for q, (c, f, claimed, w) in got.items():
                lo, hi = wilson(c, reps)
                truth = truth_of(name, q)
                said = "none" if truth is None else f"{truth:.1f}"
                print(
                    f"{name:<18} {f'{per} x {trials} a length':<16} {q:>5} {said:>6}  "
                    f"{100 * c / reps:5.1f}% [{100 * lo:4.1f}, {100 * hi:5.1f}]  "
                    f"{100 * f / reps:5.1f}%       {100 * claimed / reps:5.1f}%   "
                    f"{100 * w / reps:5.1f}%"
                )


def paired(
    p0: float, p1: float, per: int, trials: int, reps: int, spread: float, seed: int
) -> tuple[int, int, int, int]:
    """Runs whose interval covers the true ratio, runs with a verdict, runs with no
    difference (a horizon out of range, or none: success not shown to fall), and runs in
    all that gave a difference."""
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
    parser.add_argument("--shapes", action="store_true", help="steep falls, flat and rising curves")
    args = parser.parse_args()
    start = time.perf_counter()
    if args.shapes:
        main_shapes(args.reps)
        print(f"\n{args.reps} repetitions a row, {time.perf_counter() - start:.0f} s")
        return
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
