"""Self-conditioning, induced: the agent's own error rate against the share of wrong
pre-filled steps.

Under a variant's ``[prefill]`` (:mod:`agentproc.workflow.prefill`) an episode opens with
the first ``k`` steps already executed, a share of them wrong, and the agent is judged
against the state they left. Its **own error rate** is the per-step rate of its first
departure from the procedure after the pre-fill: the episodes that departed at one of
their own steps, over the own steps attempted up to and including that departure (a
faithful run of its own part counts all of them and no error). Past its first own error
its history holds its own mistake as well, which is the observational design, so the
count stops there; a departure at the answer, after every step, is no step error. With
per-step error ``p`` this is the maximum-likelihood estimate of ``p`` (a geometric count,
censored at the end of the procedure). Its 95% interval is Wilson's on the effective
number of steps, the design effect taken from the scenarios as clusters
(:func:`~agentproc.analysis.stats.binomial.design_effect`), Student's t on the scenarios.

The **curve** (``agentproc stress SUITE --variants prefill-... --grid``) gives this rate
for each share, and each share's difference from the clean pre-fill (share 0) with
Newcombe's hybrid score interval, the two rates taken as independent samples: the same
scenarios under both make the difference's true variance smaller, so the interval is
conservative.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentproc.analysis.stats.binomial import Rate, design_effect
from agentproc.analysis.stats.clustered import difference_interval

_VERDICT_DIGITS = 4


def own_steps(rec: Mapping[str, Any]) -> tuple[int, int]:
    """``(errors, steps)`` of one stored episode: whether it departed at one of its own
    steps (0 or 1), and its own steps attempted up to and including that departure.

    >>> m = {"total_steps": 6, "longest_correct_prefix": 2,
    ...      "first_divergence": {"call_index": 5, "step": 7, "label": "wrong_argument"}}
    >>> own_steps({"metrics": m})
    (1, 3)
    """
    m = rec["metrics"]
    own = int(m["total_steps"])
    prefix = min(int(m["longest_correct_prefix"]), own)
    div = m.get("first_divergence")
    erred = prefix < own and isinstance(div, Mapping) and div.get("step") is not None
    return int(erred), prefix + int(erred)


def own_error_rate(records: Iterable[Mapping[str, Any]]) -> Rate:
    """The own error rate of stored episodes (see the module docstring), scenarios as
    clusters; episodes an infrastructure failure ended count in no figure."""
    clusters: dict[str, list[int]] = {}
    for rec in records:
        if rec.get("stop_reason") == "error" or "error" in rec:
            continue
        errors, steps = own_steps(rec)
        c = clusters.setdefault(str(rec["scenario_id"]), [0, 0])
        c[0] += errors
        c[1] += steps
    pairs = [(e, n) for e, n in clusters.values()]
    k, n = sum(e for e, _ in pairs), sum(s for _, s in pairs)
    if len(pairs) < 2 or not n:
        return Rate(k, n)
    return Rate(k, n, design_effect(pairs), len(pairs))


@dataclass(frozen=True, slots=True)
class SharePoint:
    """The own error rate under one variant of the curve."""

    variant: str
    wrong_share: float
    """The share of the pre-filled calls that were wrong (0 without a pre-fill)."""
    episodes: int
    rate: Rate
    """Own-step departures over own steps attempted."""
    lift: tuple[float, tuple[float, float]] | None = None
    """The difference from the clean pre-fill and its interval (``None`` for that one)."""

    def to_json(self) -> dict[str, Any]:
        """The JSON form."""
        out: dict[str, Any] = {
            "variant": self.variant,
            "wrong_share": self.wrong_share,
            "episodes": self.episodes,
            "own_error_rate": self.rate.to_json(),
        }
        if self.lift is not None:
            diff, (lo, hi) = self.lift
            out["difference"] = {
                "value": round(diff, _VERDICT_DIGITS),
                "ci": [round(lo, _VERDICT_DIGITS), round(hi, _VERDICT_DIGITS)],
                "verdict": "higher" if lo > 0 else "lower" if hi < 0 else "no difference",
            }
        return out


@dataclass(frozen=True, slots=True)
class ShareCurve:
    """The agent's own error rate against the share of wrong pre-filled steps."""

    agent: str
    points: tuple[SharePoint, ...]
    """In order of share."""
    baseline: str | None
    """The clean pre-fill (share 0) the differences are from (``None``: none ran)."""

    def to_json(self) -> dict[str, Any]:
        """The JSON form (``agentproc stress ... --grid --json`` over pre-fill variants)."""
        return {
            "measure": "own_error_rate",
            "agent": self.agent,
            "baseline": self.baseline,
            "curve": [p.to_json() for p in self.points],
        }


def share_curve(
    agent: str, arms: Sequence[tuple[str, float, Sequence[Mapping[str, Any]]]]
) -> ShareCurve:
    """The curve over ``(variant, wrong share, its records)`` arms, in order of share;
    each share's difference from the first arm of share 0, when there is one."""
    ordered = sorted(arms, key=lambda arm: arm[1])
    rates = [(name, share, len(recs), own_error_rate(recs)) for name, share, recs in ordered]
    base = next((r for r in rates if r[1] == 0), None)
    points = []
    for name, share, n, rate in rates:
        lift = None
        if base is not None and name != base[0] and rate.n and base[3].n:
            lift = (rate.value - base[3].value, difference_interval(rate, base[3]))
        points.append(SharePoint(name, share, n, rate, lift))
    return ShareCurve(agent, tuple(points), None if base is None else base[0])
