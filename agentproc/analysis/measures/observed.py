"""Self-conditioning as observed: does an agent err more at a step once its history holds
an error?

Over every executed step of every episode (the outcomes of
:mod:`~agentproc.analysis.measures.steps`), the step's **error rate** (its first run in
``error``: a new mistake made there, not one carried forward) is counted apart for two
histories:

- **after an error**: some earlier step of the procedure (a lower position) is not
  ``correct``: in error, carrying an earlier mistake forward, or skipped;
- **clean history**: every earlier step ran and its first run was correct.

Steps are grouped in bins of position that double in width (1, 2-3, 4-7, 8-15, ...),
since an error in the history is likelier the further a step lies and the error rate
may change with position; within a bin, the difference *after an error minus clean*
is the observed self-conditioning.

**It is observational.** Episodes with an early error are not a random half of the
episodes: an agent that finds a procedure hard errs more throughout it, so the
difference mixes self-conditioning with difficulty and would be positive for an agent
whose errors never depend on its history, if its procedures differ in difficulty.
Only the induced measure (a history pre-filled with chosen errors) tells them apart.

**Intervals**: each rate's is Wilson's on the effective count, the steps clustered by
scenario (an episode contributes several steps to a bin, and a scenario's trials are
alike); the difference's is MOVER's from the two intervals, with the correlation of
the two rates over the shared scenarios
(:meth:`~agentproc.analysis.stats.clustered.Paired.difference`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agentproc.analysis.stats.binomial import Rate
from agentproc.analysis.stats.clustered import Clustered, Paired

_CORRECT, _ERROR, _SKIPPED = ord("c"), b"e", b"s"


def doubling_bin(step: int) -> int:
    """The bin of a step (from 1): ``0`` for 1, ``1`` for 2-3, ``2`` for 4-7, ...

    >>> [doubling_bin(k) for k in (1, 2, 3, 4, 7, 8, 95)]
    [0, 1, 1, 2, 2, 3, 6]
    """
    return step.bit_length() - 1


@dataclass(frozen=True, slots=True)
class Bin:
    """One bin's two error rates and their difference."""

    first: int
    last: int
    after_error: Rate
    clean: Rate
    difference: tuple[float, tuple[float, float]] | None
    """``after_error - clean`` and its 95% interval; ``None`` when either has no step."""

    def to_json(self) -> dict[str, Any]:
        """``{"from", "to", "after_error", "clean_history", "difference"}``."""

        def rate(r: Rate) -> dict[str, Any]:
            j = r.to_json()
            out = {"steps": j["n"], "errors": j["k"], "value": j["value"], "ci": j["ci"]}
            if "design_effect" in j:
                out["design_effect"] = j["design_effect"]
            return out

        d = self.difference
        return {
            "from": self.first,
            "to": self.last,
            "after_error": rate(self.after_error),
            "clean_history": rate(self.clean),
            "difference": None
            if d is None
            else {"value": round(d[0], 4), "ci": [round(d[1][0], 4), round(d[1][1], 4)]},
        }


@dataclass(frozen=True, slots=True)
class SelfConditioning:
    """The observed measure, bin by bin (bins with no executed step are left out)."""

    bins: list[Bin]

    def to_json(self) -> dict[str, Any]:
        """``report --json``'s ``self_conditioning.observed``."""
        return {"bins": [b.to_json() for b in self.bins]}


@dataclass(slots=True)
class ObservedTally:
    """The two rates of each bin, folded one cluster (scenario) at a time."""

    pairs: list[Paired] = field(default_factory=list)
    width: int = 0
    """The longest procedure seen."""

    def fold(self, cluster: Sequence[bytes]) -> None:
        """A whole cluster: its episodes' step outcomes."""
        width = max((len(e) for e in cluster), default=0)
        self.width = max(self.width, width)
        bins = doubling_bin(width) + 1 if width else 0
        while len(self.pairs) < bins:
            self.pairs.append(Paired(Clustered(), Clustered()))
        counts = [[0, 0, 0, 0] for _ in range(bins)]  # errors, steps after an error; clean
        for outcomes in cluster:
            # the history is clean up to the first step not correct (that step included)
            first = next((k for k, o in enumerate(outcomes) if o != _CORRECT), len(outcomes))
            for b, row in enumerate(counts):
                lo, hi = 2**b - 1, min(2 ** (b + 1) - 1, len(outcomes))  # 0-based [lo, hi)
                clean = outcomes[lo : min(hi, first + 1)]
                after = outcomes[max(lo, first + 1) : hi]
                row[2] += clean.count(_ERROR)
                row[3] += len(clean) - clean.count(_SKIPPED)
                row[0] += after.count(_ERROR)
                row[1] += len(after) - after.count(_SKIPPED)
        for b, (ya, ma, yb, mb) in enumerate(counts):
            self.pairs[b].add(ya, ma, yb, mb)

    def result(self) -> SelfConditioning:
        """The bins with an executed step."""
        out = []
        for b, p in enumerate(self.pairs):
            if p.a.n or p.b.n:
                last = min(self.width, 2 ** (b + 1) - 1)
                out.append(Bin(2**b, last, p.a.rate(), p.b.rate(), p.difference()))
        return SelfConditioning(out)


def observed(clusters: Sequence[Sequence[bytes]]) -> SelfConditioning:
    """The measure over clusters (scenarios) of episodes' step outcomes.

    >>> sc = observed([[b"cec"], [b"ccc"], [b"cee"]])
    >>> [(b.first, b.after_error.k, b.after_error.n, b.clean.k, b.clean.n) for b in sc.bins]
    [(1, 0, 0, 0, 3), (2, 1, 2, 2, 4)]
    """
    tally = ObservedTally()
    for c in clusters:
        tally.fold(c)
    return tally.result()
