"""The machine-readable report (``agentproc report --json``): every group, every rate
with its interval, floats rounded to 4 decimals.

On a declared workflow's episodes, every numbered step stays a number and gains its
name beside it (:mod:`~agentproc.analysis.measures.step_names`): ``"step": 4`` with
``"step_tool"`` and ``"step_output"``, ``"median_step"`` with ``"median_step_tool"`` and
``"median_step_output"``, and each agent lists its steps' names as ``step_names``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from agentproc.analysis.measures.cells import HEADLINE_RATES, STUDY_RATES, CellStats
from agentproc.analysis.measures.report import KNOBS, AgentReport, Report
from agentproc.analysis.measures.step_names import NO_NAMES, StepNames, name_json, names_json
from agentproc.analysis.measures.tokens import Price, tokens_json
from agentproc.analysis.render.formats import round4
from agentproc.analysis.stats.binomial import ratio


def stats_json(s: CellStats, names: StepNames = NO_NAMES) -> dict[str, Any]:
    """The JSON form of one group, floats rounded to 4 decimals (``names``: its steps'
    names by position, where they are a declared workflow's)."""
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
    if s.answer_fields:
        out["answer_fields"] = {f: {"correct": c, "n": n} for f, (c, n) in s.answer_fields.items()}
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
                **name_json(s.divergence_median_step, names, "median_step"),
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


def _group(
    keys: dict[str, Any], s: CellStats, realised: bool = True, names: StepNames = NO_NAMES
) -> dict[str, Any]:
    """One group's entry: its keys, its realised look-back (if asked), its statistics."""
    stats = stats_json(s, names)
    return {**keys, **({"realised": realised_json(s)} if realised else {}), **stats}


def per_step_json(a: AgentReport) -> dict[str, Any] | None:
    """An agent's ``per_step``, each step named where it is a declared workflow's."""
    if a.per_step is None:
        return None
    out = a.per_step.to_json()
    names = a.step_names
    if names:
        for key in ("accuracy_by_position", "survival", "hazard"):
            out[key] = [{**p, **name_json(p["step"], names)} for p in out[key]]
        median = out["median_survival_step"]
        out["median_survival_step"] = {**median, **name_json(median["step"], names)}
    return out


def _workflow_json(a: AgentReport) -> dict[str, Any]:
    """A declared workflow's agent: its steps' names, its groups by workflow and by path
    (nothing for a procedure's)."""
    out: dict[str, Any] = {}
    if a.step_names:
        out["step_names"] = names_json(a.step_names)
    if a.by_workflow:
        out["by_workflow"] = [
            _group({"workflow": w}, s, False, a.workflow_steps.get(w, NO_NAMES))
            for w, s in a.by_workflow.items()
        ]
    if a.by_path:
        several = len({w for w, _ in a.by_path}) > 1  # then a path is WORKFLOW: PATH
        out["by_path"] = [
            _group(
                {"path": f"{w}: {p}" if several else p, "workflow": w},
                s,
                False,
                a.workflow_steps.get(w, NO_NAMES),
            )
            for (w, p), s in a.by_path.items()
        ]
    return out


_JSON_KEYS = {"length": "steps", "lookback": "lookback", "range": "range", "ops": "ops"}


def report_json(report: Report, price: Price | None = None) -> dict[str, Any]:
    """The report as JSON-ready data (``agentproc report --json``); an agent's ``tokens``
    is ``null`` when its episodes recorded no usage, and holds ``cost_usd`` with a price."""
    return {
        "episodes": report.episodes,
        "errored": report.errored,
        "agents": {
            name: {
                "overall": stats_json(a.overall, a.step_names),
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
                        _group({_JSON_KEYS.get(knob, knob): k}, s, knob == "lookback", a.step_names)
                        for k, s in groups.items()
                    ]
                    for knob, groups in a.by_knob.items()
                },
                "by_cell": [
                    _group(
                        {"cell": k.cell, "steps": k.steps, "lookback": k.lookback},
                        s,
                        names=a.workflow_steps.get(k.cell, NO_NAMES),
                    )
                    for k, s in a.by_cell.items()
                ],
                "by_sweep": {
                    sweep: [
                        _group({_JSON_KEYS.get(n, n): v for n, v in zip(KNOBS, k, strict=True)}, s)
                        for k, s in groups.items()
                    ]
                    for sweep, groups in a.by_sweep.items()
                },
                **_workflow_json(a),
                "per_step": per_step_json(a),
                "self_conditioning": None
                if a.per_step is None
                else {"observed": a.per_step.self_conditioning.to_json()},
            }
            for name, a in report.agents.items()
        },
    }
