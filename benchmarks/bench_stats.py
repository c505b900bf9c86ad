"""Calibration benchmark of the comparison's verdicts, run on demand (not a timed test):
``python benchmarks/bench_stats.py [--reps N]``.

Arms are built as run-file records and fed to ``compare_records``, as a user's runs
would be. Each scenario has its own chance of success (uniform on 0.1-0.9) and its own
chance of a ``skipped_step`` label (0-0.3); two grid cells.

- **False-positive rate** under three nulls, at k = 1, 3 and 10 trials of 30 scenarios:
  *both sampled* (each arm's per-scenario effect drawn from +-0.2 with mean 0, trials
  independent), *deterministic baseline* (the baseline's trials are copies of one draw,
  as greedy decoding gives; the arm is sampled around the same chance), and *three null
  arms* (Holm across arms). Rows: the faithful verdict (better or worse), any label
  flagged as risen or fallen, any per-cell mark. Each must be at most 5%; the Wilson 95%
  interval of the simulated rate is shown.
- **Power** against a known 10-point effect on faithful accuracy (60 scenarios).
- **Coverage** of the faithful interval at rare discordance (60 scenarios, one trial, 5%
  of scenarios discordant: about 3 of 60), with no effect and with every discordant
  scenario going the arm's way; and with trials.
- **Near-deterministic scenarios** (each scenario always passes or always fails in the
  baseline; the arm gains each failing trial with a small chance, a true effect of about
  1 point), 30 and 60 scenarios x 3 trials: coverage of the interval, and the share of
  zero-width intervals (must be 0).
- **Many variants with trials**: one variant collapses (about 53% faithful -> 0%) among
  60 (the rest null), 60 scenarios x 3 trials: the share of runs in which the ranking
  flags it (Holm across both measures of every variant) and of runs flagging a null one.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable
from typing import Any

from agentproc.analysis.compare.arms import compare_records
from agentproc.analysis.compare.result import CompareResult
from agentproc.analysis.stats.binomial import wilson

Record = dict[str, Any]
MARKED = ("faithful", "first_answer")
"""The measures the per-cell table marks."""


def record(sid: str, variant: str, trial: int, correct: bool, skip: bool, sig: str) -> Record:
    steps = 5 if sid.endswith(("0", "2", "4", "6", "8")) else 9
    return {
        "scenario_id": sid,
        "agent": "sim:x",
        "variant": variant,
        "trial": trial,
        "cell": f"n{steps}-L1",
        "params": {"steps": steps, "lookback": 1},
        "metrics": {"first_answer_correct": correct},
        "verdict": ("unfaithful_correct" if skip else "faithful") if correct else "wrong",
        "labels": [{"kind": "skipped_step", "step": 2, "call_index": 0}] if skip else [],
        "calls": [{"name": sig, "arguments": "{}"}],
        "stop_reason": "answer",
    }


def arm(
    rng: random.Random,
    variant: str,
    chances: list[tuple[float, float]],
    trials: int,
    deterministic: bool = False,
) -> list[Record]:
    out = []
    for i, (ok, skip) in enumerate(chances):
        first = (rng.random() < ok, rng.random() < skip)
        for t in range(trials):
            draw = first if deterministic else (rng.random() < ok, rng.random() < skip)
            sig = "same" if deterministic else f"t{t}-{rng.random()}"
            out.append(record(f"s{i}", variant, t, draw[0], draw[1], sig))
    return out


def scenarios(rng: random.Random, n: int) -> list[tuple[float, float]]:
    return [(rng.uniform(0.1, 0.9), rng.uniform(0.0, 0.3)) for _ in range(n)]


def shifted(rng: random.Random, base: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Per-scenario effects of +-0.2 (mean 0) on both chances."""
    out = []
    for ok, skip in base:
        e, f = rng.choice((-0.2, 0.2)), rng.choice((-0.1, 0.1))
        out.append((min(1.0, max(0.0, ok + e)), min(1.0, max(0.0, skip + f))))
    return out


def null_records(kind: str, trials: int) -> Callable[[random.Random], list[Record]]:
    def make(rng: random.Random) -> list[Record]:
        base = scenarios(rng, 30)
        if kind == "both sampled":
            return arm(rng, "default", shifted(rng, base), trials) + arm(
                rng, "v", shifted(rng, base), trials
            )
        if kind == "deterministic baseline":
            return arm(rng, "default", base, trials, deterministic=True) + arm(
                rng, "v", base, trials
            )
        out = arm(rng, "default", shifted(rng, base), trials)
        for v in ("v1", "v2", "v3"):
            out += arm(rng, v, shifted(rng, base), trials)
        return out

    return make


def rates(result: CompareResult) -> dict[str, bool]:
    cs = result.comparisons
    return {
        "verdict": any(c.verdict != "no detectable difference" for c in cs),
        "label flagged": any(d.significant for c in cs for d in c.labels),
        "cell mark": any(ds[m].significant for c in cs for ds in c.cells.values() for m in MARKED),
    }


def run(make: Callable[[random.Random], list[Record]], reps: int, seed: int) -> dict[str, int]:
    rng = random.Random(seed)
    hits: dict[str, int] = {}
    for i in range(reps):
        for name, hit in rates(compare_records(make(rng), seed=i)).items():
            hits[name] = hits.get(name, 0) + hit
    return hits


def share(k: int, n: int) -> str:
    lo, hi = wilson(k, n)
    return f"{k / n * 100:5.1f}% [{lo * 100:4.1f}, {hi * 100:4.1f}]"


def power(trials: int, reps: int, seed: int) -> int:
    rng = random.Random(seed)
    found = 0
    for i in range(reps):
        base = [(rng.uniform(0.1, 0.8), 0.0) for _ in range(60)]
        better = [(ok + 0.1, 0.0) for ok, _ in base]
        records = arm(rng, "default", base, trials) + arm(rng, "v", better, trials)
        found += compare_records(records, seed=i).comparisons[0].verdict == "better"
    return found


def coverage(theta: float, trials: int, reps: int, seed: int) -> int:
    """Discordant scenarios (5%) go the arm's way with chance theta; true difference
    0.05 * (2 * theta - 1)."""
    rng = random.Random(seed)
    truth = 0.05 * (2 * theta - 1)
    covered = 0
    for i in range(reps):
        records = []
        for s in range(60):
            for t in range(trials):
                sig = f"{t}-{rng.random()}"
                base = arm_ok = rng.random() < 0.5
                if rng.random() < 0.05:
                    arm_ok = rng.random() < theta
                    base = not arm_ok
                records.append(record(f"s{s}", "default", t, base, False, sig))
                records.append(record(f"s{s}", "v", t, arm_ok, False, sig))
        ci = compare_records(records, seed=i).comparisons[0].overall["faithful"].ci
        covered += ci is not None and ci[0] <= truth <= ci[1]
    return covered


def near_deterministic(scenario_count: int, reps: int, seed: int) -> tuple[int, int]:
    """Coverage of a true gain of about one point, and zero-width intervals."""
    rng = random.Random(seed)
    gain = 0.02  # a failing trial turns into a pass with this chance: truth = gain * share failing
    covered = zero = 0
    for _ in range(reps):
        records = []
        failing = 0
        for s in range(scenario_count):
            ok = rng.random() < 0.5
            failing += not ok
            for t in range(3):
                sig = f"{t}-{rng.random()}"
                records.append(record(f"s{s}", "default", t, ok, False, sig))
                records.append(record(f"s{s}", "v", t, ok or rng.random() < gain, False, sig))
        truth = gain * failing / scenario_count
        ci = compare_records(records).comparisons[0].overall["faithful"].ci
        covered += ci is not None and ci[0] <= truth <= ci[1]
        zero += ci is not None and ci[1] - ci[0] < 1e-9
    return covered, zero


def many_variants(reps: int, seed: int) -> tuple[int, int]:
    """Runs in which the collapsing variant is flagged, and in which a null one is."""
    from agentproc.experiments.ranking import rank_variants

    rng = random.Random(seed)
    flagged = false = 0
    for _ in range(reps):
        base = [(rng.uniform(0.3, 0.76), 0.0) for _ in range(60)]
        records = arm(rng, "default", base, 3)
        records += arm(rng, "broken", [(0.0, 0.0)] * 60, 3)
        for j in range(59):
            records += arm(rng, f"null{j}", base, 3)
        ranking = rank_variants(compare_records(records), {})
        flagged += any(r.variant == "broken" and r.flagged for r in ranking)
        false += any(r.variant != "broken" and r.flagged for r in ranking)
    return flagged, false


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=400)
    args = parser.parse_args()
    reps = args.reps
    start = time.perf_counter()
    print(f"{'null (30 scenarios)':<28} {'k':>3}  {'verdict':<22} {'label flagged':<22} cell mark")
    for kind in ("both sampled", "deterministic baseline", "three null arms"):
        for trials in (1, 3, 10):
            hits = run(null_records(kind, trials), reps, seed=trials)
            cols = [share(hits[n], reps) for n in ("verdict", "label flagged", "cell mark")]
            print(f"{kind:<28} {trials:>3}  {cols[0]:<22} {cols[1]:<22} {cols[2]}")
    print()
    print("power against a 10-point effect (60 scenarios, both sampled)")
    for trials in (1, 3, 10):
        print(f"  k = {trials:>2}: {share(power(trials, reps, seed=100 + trials), reps)}")
    print()
    print("coverage of the 95% faithful interval at rare discordance (60 scenarios, 5% discordant)")
    for theta in (0.5, 1.0):
        for trials in (1, 3):
            got = coverage(theta, trials, reps, seed=200 + trials)
            print(f"  difference {0.05 * (2 * theta - 1):+.2f}, k = {trials}: {share(got, reps)}")
    print()
    print("near-deterministic scenarios, 3 trials, a true gain of about 1 point")
    for count in (30, 60):
        got, zero = near_deterministic(count, reps, seed=300 + count)
        print(f"  {count} scenarios: coverage {share(got, reps)}, zero-width {share(zero, reps)}")
    print()
    few = max(1, reps // 20)
    print(f"a collapse among 60 variants, 60 scenarios x 3 trials ({few} repetitions)")
    flagged, false = many_variants(few, seed=400)
    print(f"  collapse flagged {share(flagged, few)}, a null variant flagged {share(false, few)}")
    print(f"\n{reps} repetitions a row, {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
