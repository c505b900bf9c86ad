"""Figures of a preset's generated procedures, run on demand:
``python benchmarks/procedure_rules.py [--preset reference] [--count N]``.

Prints, per look-back L, the share of steps by realised distance (the farthest variable
operand of each step) and the mean farthest distance; then over the whole preset the steps
that equal an earlier variable up to sign (identities kept because no other draw was
found), the answers at exactly 0 or 1 and the answers insensitive to an input read.
"""

from __future__ import annotations

import argparse
import collections
import multiprocessing
from typing import Any

from agentproc.procedures import Cell, generate_procedure, preset
from agentproc.procedures.fingerprint import _INPUTS, PRIME, _constant_print
from agentproc.procedures.sensitivity import insensitive_input


def identities(p: Any) -> int:
    """Steps whose expression equals an earlier variable's up to sign."""
    prints, found = list(_INPUTS), 0
    for s in p.steps:
        right = prints[s.operands[-1] - 1]
        if s.constant is not None:
            right = _constant_print(s.constant, p.scale)
        fp = prints[s.operands[0] - 1].apply(s.op, right)
        earlier = {(f.a, f.b) for f in prints}
        if (fp.a, fp.b) in earlier or ((PRIME - fp.a) % PRIME, (PRIME - fp.b) % PRIME) in earlier:
            found += 1
        prints.append(fp)
    return found


def cell_figures(job: tuple[Cell, int, int]) -> dict[str, Any]:
    cell, seed, count = job
    out: dict[str, Any] = {"id": cell.id, "lookback": cell.lookback}
    out["distances"] = collections.Counter()
    out |= {"steps": 0, "identities": 0, "zero": 0, "one": 0, "insensitive": 0, "n": count}
    for i in range(count):
        p = generate_procedure(cell, seed, i)
        out["distances"].update(p.distance_shares())
        out["steps"] += len(p.steps)
        out["identities"] += identities(p)
        out["zero"] += p.answer == 0
        out["one"] += p.answer == p.scale
        out["insensitive"] += insensitive_input(p) is not None
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--preset", default="reference")
    parser.add_argument("--count", type=int, help="procedures per cell (default: the preset's)")
    args = parser.parse_args()
    grid = preset(args.preset)
    count = args.count or grid.count
    jobs = [(c, grid.seed, count) for c in grid.cells()]
    with multiprocessing.get_context("spawn").Pool() as pool:
        cells = pool.map(cell_figures, jobs)
    by_l: dict[int, collections.Counter[int]] = {}
    for c in cells:
        by_l.setdefault(c["lookback"], collections.Counter()).update(c["distances"])
    print(f"preset {args.preset}: {len(cells)} cells x {count} procedures")
    for lookback, counts in sorted(by_l.items()):
        total = sum(counts.values())
        mean = sum(d * n for d, n in counts.items()) / total
        shares = ", ".join(f"{d}: {n / total:.1%}" for d, n in sorted(counts.items()))
        print(f"L={lookback}: {total} steps, mean farthest distance {mean:.2f}; {shares}")
    steps = sum(c["steps"] for c in cells)
    n = sum(c["n"] for c in cells)
    for key, what, of in (
        ("identities", "steps equal to an earlier variable up to sign", steps),
        ("zero", "answers exactly 0", n),
        ("one", "answers exactly 1", n),
        ("insensitive", "answers insensitive to an input read", n),
    ):
        total = sum(c[key] for c in cells)
        print(f"{what}: {total} of {of} ({total / of:.3%})")
    for c in cells:
        flagged = {k: c[k] for k in ("identities", "zero", "one", "insensitive") if c[k]}
        if flagged:
            print(f"  in {c['id']}: {flagged}")


if __name__ == "__main__":
    main()
