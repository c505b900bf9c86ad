"""The machine-readable report (``agentproc report --json``): every group, every rate
with its interval, floats rounded to 4 decimals."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from agentproc.analysis.cell_stats import HEADLINE_RATES, STUDY_RATES, CellStats, ratio
from agentproc.analysis.compare_result import round4
from agentproc.analysis.report import KNOBS, Report
from agentproc.analysis.tokens import Price, tokens_json


def stats_json(s: CellStats) -> dict[str, Any]:
    """The JSON form of one group, floats rounded to 4 decimals."""
    some = s.n > 0  # with no scored episode there is no figure: null, never 0

    def r(x: float) -> float | None:
        return round4(x) if some else None

    def ci(x: tuple[float, float]) -> list[float] | None:
        return [round4(v) for v in x] if some else None

    def rates(names: Iterable[str]) -> None:
        for name in names:  # accuracy, accuracy_ci, ..., exact_step_rate, exact_step_ci, ...
            value, interval = s.rate(name)
            out[name] = r(value)
            out[name.removesuffix("_rate") + "_ci"] = ci(interval)

    out: dict[str, Any] = {"n": s.n}
    rates(HEADLINE_RATES)
    out["final_accuracy"] = r(s.final_accuracy)
    if s.scenarios:
        out["scenarios"] = s.scenarios
        out["trials"] = round4(s.trials)
    if s.design_effects:
        out["design_effects"] = {k: round4(v) for k, v in s.design_effects.items()}
    rates(STUDY_RATES)
    out.update(
        {
            "verdicts": s.verdicts,
            "label_counts": {k.value: v for k, v in s.label_counts.items()},
            "episodes_with_label": {k.value: v for k, v in s.episodes_with_label.items()},
            "progress_rate": r(s.progress_rate),
            "prefix_rate": r(s.prefix_rate),
            "wrong_argument_causes": s.wrong_argument_causes,
            "first_divergence": {
                "episodes": s.diverged,
                "rate": r(ratio(s.diverged, s.n)),
                "rate_ci": ci(s.diverged_ci),
                "labels": s.divergence_labels,
                "steps": {str(k): v for k, v in s.divergence_steps.items()},
                "median_step": s.divergence_median_step,
                "mean_position": round4(s.divergence_position),
            },
        }
    )
    return out


def realised_json(s: CellStats) -> dict[str, Any] | None:
    """The realised look-back of a group's procedures beside its ``L``: the farthest and
    the mean over its episodes; ``null`` when none records it (older run files)."""
    top, mean = s.realised_max, s.realised_mean
    if top is None or mean is None:
        return None
    return {"max": top, "mean": round4(mean)}


def _group(keys: dict[str, Any], s: CellStats, realised: bool = True) -> dict[str, Any]:
    """One group's entry: its keys, its realised look-back (if asked), its statistics."""
    return {**keys, **({"realised": realised_json(s)} if realised else {}), **stats_json(s)}


_JSON_KEYS = {"length": "steps", "lookback": "lookback", "range": "range", "ops": "ops"}


def report_json(report: Report, price: Price | None = None) -> dict[str, Any]:
    """The report as JSON-ready data (``agentproc report --json``); an agent's ``tokens``
    is ``null`` when its episodes recorded no usage, and holds ``cost_usd`` with a price."""
    return {
        "episodes": report.episodes,
        "errored": report.errored,
        "agents": {
            name: {
                "overall": stats_json(a.overall),
                "errors": {"total": a.errored, "by_kind": a.errors},
                **(
                    {}
                    if a.cache is None
                    else {"cache": {"model_calls": a.cache[0], "cache_hits": a.cache[1]}}
                ),
                "tokens": tokens_json(a.tokens, price),
                **(
                    {}
                    if a.horizon is None
                    else {
                        "horizon": {
                            **a.horizon.to_json(),
                            "by_lookback": [
                                {"lookback": lb, **h.to_json()}
                                for lb, h in a.horizon_by_lookback.items()
                            ],
                        }
                    }
                ),
                **{
                    f"by_{knob}": [
                        _group({_JSON_KEYS.get(knob, knob): k}, s, knob == "lookback")
                        for k, s in groups.items()
                    ]
                    for knob, groups in a.by_knob.items()
                },
                "by_cell": [
                    _group({"cell": k.cell, "steps": k.steps, "lookback": k.lookback}, s)
                    for k, s in a.by_cell.items()
                ],
                "by_sweep": {
                    sweep: [
                        _group({_JSON_KEYS.get(n, n): v for n, v in zip(KNOBS, k, strict=True)}, s)
                        for k, s in groups.items()
                    ]
                    for sweep, groups in a.by_sweep.items()
                },
                **(
                    {"by_path": [_group({"path": k}, s, False) for k, s in a.by_path.items()]}
                    if a.by_path
                    else {}
                ),
                "per_step": None if a.per_step is None else a.per_step.to_json(),
                "self_conditioning": None
                if a.per_step is None
                else {"observed": a.per_step.self_conditioning.to_json()},
            }
            for name, a in report.agents.items()
        },
    }
