"""Run files for the HTML report tests: simulated agents over a small grid, and one
episode whose model output is hostile markup."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentproc.agents.sim import run_sim_episode
from agentproc.procedures import Cell, generate_procedure
from agentproc.runs import episode_record
from agentproc.runs.layout import line_of
from agentproc.workflow import Scenario, build_workflow, scenario_of

AGENTS = ("sim:oracle", "sim:skipped_step", "sim:wrong_argument", "sim:premature_finish")
HOSTILE = (
    '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'
    '<a href="javascript:window.__pwned = 3">click</a>'
)
"""What a model might write: every piece of it must show as text and run never."""
HOSTILE_ID = "n3-L1-hostile-<b>0000</b>"


def sim_records(agents: tuple[str, ...] = AGENTS, per_cell: int = 3) -> list[dict[str, Any]]:
    """Episodes of ``agents`` over 2 lengths x 2 look-backs, ``per_cell`` procedures each."""
    out = []
    for steps in (3, 6):
        for lookback in (1, 3):
            for i in range(per_cell):
                scenario = scenario_of(
                    generate_procedure(Cell(steps=steps, lookback=lookback), 0, i)
                )
                for agent in agents:
                    rec = episode_record(run_sim_episode(scenario, agent))
                    out.append(json.loads(json.dumps(rec)))
    return out


def hostile_record() -> dict[str, Any]:
    """A wrong-argument episode whose ids, arguments, results and model text carry markup."""
    scenario = scenario_of(generate_procedure(Cell(steps=3, lookback=1), 0, 0))
    rec = json.loads(json.dumps(episode_record(run_sim_episode(scenario, "sim:wrong_argument"))))
    rec["scenario_id"] = HOSTILE_ID
    rec["agent"] = "model<i>x</i>"
    rec["calls"][0]["arguments"] = HOSTILE
    rec["calls"][0]["result"] = HOSTILE
    rec["messages"] = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": HOSTILE, "tool_calls": []},
    ]
    rec["model_calls"] = [
        {"latency_s": 0.5, "attempts": 1, "input_tokens": 12, "output_tokens": 34, "error": None}
    ]
    return rec


def scripted_record(
    calls: list[tuple[str, Any]], agent: str = "scripted", scenario: Scenario | None = None
) -> dict[str, Any]:
    """An episode of ``scenario`` (:func:`helpers.tiny_scenario` by default) whose agent
    made exactly ``calls``, labelled by the monitor."""
    from helpers import run, tiny_scenario

    scenario = scenario or tiny_scenario()
    scale = build_workflow(scenario).scale
    rec = json.loads(json.dumps(episode_record(run_sim_episode(scenario, "sim:oracle"))))
    labels, metrics, records = run(calls, scenario)
    rec["agent"] = agent
    rec["calls"] = [r.to_json(scale) for r in records]
    rec["labels"] = [lab.to_json() for lab in labels]
    rec["metrics"] = json.loads(json.dumps(metrics))
    rec["verdict"] = metrics["verdict"]
    rec["messages"] = []
    return rec


def oracle_calls(scenario: Scenario) -> list[tuple[str, Any]]:
    """The calls ``sim:oracle`` makes on ``scenario``, as (tool, arguments)."""
    rec = episode_record(run_sim_episode(scenario, "sim:oracle"))
    return [(c["name"], json.loads(c["arguments"])) for c in rec["calls"]]  # type: ignore[index]


def write_run(path: Path, records: list[dict[str, Any]]) -> Path:
    """Write records as a run file, each line laid out as the runner writes it (version 2)."""
    path.write_text("".join(line_of(r) for r in records))
    return path


def write_plain_run(path: Path, records: list[dict[str, Any]]) -> Path:
    """Write records as plain JSON lines, every field at the top level, in record order."""
    path.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records))
    return path
