"""Comparison benchmark, run on demand: ``python benchmarks/bench_compare.py``.

Prints the time ``compare_records`` takes for two arms of n paired scenarios (one trial,
four grid cells, a few labels), for growing n. With one trial per scenario each rate is
tested by exact McNemar, whose interval inverts the exact binomial test (a bisection over
tails summed within 40 standard deviations of the mean), so its cost grows with the
square root of the discordant scenarios; reading the records dominates. Target: under
10 s for two arms of 10,000 scenarios. Medians of three runs; machines are shared, so
read them as orders of magnitude.

Measured on a shared, loaded two-core machine: 0.02 s at 100, 0.34 s at 1,000 and 4.7 s
at 10,000 scenarios per arm (with the percentile bootstrap it replaced: 0.34, 0.38 and
3.95 s).
"""

from __future__ import annotations

import random
import statistics
import time
from typing import Any

from agentproc.analysis.compare.arms import compare_records


def records(n: int, variant: str, p_skip: float, rng: random.Random) -> list[dict[str, Any]]:
    out = []
    for i in range(n):
        steps = (5, 25)[i % 2]
        lookback = (1, 7)[(i // 2) % 2]
        labels = []
        if rng.random() < p_skip:
            labels.append({"kind": "skipped_step", "step": rng.randrange(steps), "call_index": 0})
        if rng.random() < 0.1:
            labels.append({"kind": "wrong_argument", "step": 1, "call_index": 1})
        correct = not any(lab["kind"] == "wrong_argument" for lab in labels)
        verdict = ("unfaithful_correct" if labels else "faithful") if correct else "wrong"
        out.append(
            {
                "scenario_id": f"s{i}",
                "agent": "sim:x",
                "mode": "tools",
                "variant": variant,
                "trial": 0,
                "cell": f"n{steps}-L{lookback}",
                "params": {"steps": steps, "lookback": lookback},
                "metrics": {"first_answer_correct": correct},
                "verdict": verdict,
                "labels": labels,
                "calls": [],
                "stop_reason": "answer",
            }
        )
    return out


def main() -> None:
    rng = random.Random(0)
    print(f"{'scenarios per arm':>18} {'median s':>9}")
    for n in (100, 1_000, 10_000):
        recs = records(n, "default", 0.05, rng) + records(n, "prose", 0.15, rng)
        times = []
        for _ in range(3):
            start = time.perf_counter()
            compare_records(recs)
            times.append(time.perf_counter() - start)
        print(f"{n:>18,} {statistics.median(times):>9.2f}")


if __name__ == "__main__":
    main()
