"""Calibration of the per-step measures, run on demand: ``python benchmarks/bench_survival.py``.

Simulated episodes leave the procedure at each step with a known chance, so the true
survival at step ``t`` is known; over seeded runs, how often does the 95% band of the
Kaplan-Meier curve (:mod:`agentproc.analysis.stats.survival`) cover it? Rows vary the per-step
chance, the scenarios per length, the trials per scenario, and whether scenarios differ in
difficulty (each one's chance scaled by a factor drawn from 0.5 to 1.5: then trials of a
scenario are alike, and the truth is the mean over scenarios). Procedures of 10, 20 and 40
steps pool into one curve (the shorter ones censored at their end).

Then the observed self-conditioning (:mod:`agentproc.analysis.measures.observed`) of an
agent whose errors never depend on its history: with scenarios of one difficulty its
difference stays near 0; with scenarios of differing difficulty it is positive, which is
why the measure is called observational.

``--runs`` sets the seeded runs per row (default 300).
"""

from __future__ import annotations

import argparse
import random
import statistics

from agentproc.analysis.measures.observed import observed
from agentproc.analysis.stats.survival import kaplan_meier

LENGTHS = (10, 20, 40)
AT = (5, 10, 20, 30)
"""Steps at which coverage is checked."""


def episode(rng: random.Random, length: int, p: float) -> tuple[int, bool]:
    for t in range(1, length + 1):
        if rng.random() < p:
            return t, True
    return length, False


def coverage(p: float, scenarios: int, trials: int, spread: float, runs: int, seed: int) -> float:
    rng = random.Random(seed)
    hit = total = 0
    for _ in range(runs):
        clusters, rates = [], []
        for length in LENGTHS:
            for _ in range(scenarios):
                q = p * (1 + spread * (2 * rng.random() - 1))
                rates.append(q)
                clusters.append([episode(rng, length, q) for _ in range(trials)])
        s = kaplan_meier(clusters)
        for t in AT:
            truth = statistics.fmean((1 - q) ** t for q in rates)
            point = s.points[t - 1] if t <= len(s.points) else None
            if point is None or point.low is None or point.high is None:
                continue
            total += 1
            hit += point.low <= truth <= point.high
    return hit / total if total else float("nan")


def outcomes(rng: random.Random, length: int, p: float) -> bytes:
    return bytes(ord("e") if rng.random() < p else ord("c") for _ in range(length))


def self_conditioning(spread: float, seed: int) -> list[tuple[str, float]]:
    rng = random.Random(seed)
    clusters = []
    for _ in range(600):
        q = 0.03 * (1 + spread * (2 * rng.random() - 1))
        clusters.append([outcomes(rng, 40, q) for _ in range(3)])
    out = []
    for b in observed(clusters).bins:
        if b.difference is not None:
            d, (lo, hi) = b.difference
            out.append((f"{b.first}-{b.last}", d))
            ci = f"[{100 * lo:+.2f}, {100 * hi:+.2f}]"
            print(f"    bin {b.first}-{b.last}: {100 * d:+.2f} points {ci}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=300)
    args = parser.parse_args()
    print("coverage of the Kaplan-Meier band at steps 5, 10, 20, 30 (lengths 10, 20, 40 pooled)")
    print("per-step p | scenarios a length | trials | spread | coverage")
    row = 0
    for p in (0.01, 0.03, 0.08):
        for scenarios, trials in ((20, 1), (60, 1), (20, 3), (60, 3)):
            for spread in (0.0, 0.5):
                row += 1
                c = coverage(p, scenarios, trials, spread, args.runs, row)
                print(
                    f"{p:10.2f} | {scenarios:18d} | {trials:6d} | {spread:6.1f} | {100 * c:7.1f}%"
                )
    for spread in (0.0, 0.9):
        print(f"observed self-conditioning, no history effect, difficulty spread {spread}:")
        self_conditioning(spread, 7)


if __name__ == "__main__":
    main()
