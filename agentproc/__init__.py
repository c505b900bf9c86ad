"""agentproc: does a tool-using agent execute a procedure faithfully?

Arithmetic procedures are compiled into tool-call workflows in which every step
is a stateful mock tool; a monitor labels every call against the expected step
graph. The pipeline, top to bottom: :mod:`~agentproc.procedures` (seeded
generation, suites) -> :mod:`~agentproc.workflow` (scenarios, mock tools) ->
:mod:`~agentproc.labelling` (the taxonomy) -> :mod:`~agentproc.runs` (episodes,
the runner, run files) -> :mod:`~agentproc.agents` and :mod:`~agentproc.analysis`
-> :mod:`~agentproc.cli`.

The names below are imported on first use, so that ``agentproc --help`` does not
pay for pydantic models and jsonschema; the ``TYPE_CHECKING`` block shows IDEs
and type checkers exactly the same names (a test keeps the two in step).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from agentproc.agents.custom import arun_agent_episode
    from agentproc.agents.harness import arun_model_episode
    from agentproc.agents.providers import make_chat_model
    from agentproc.agents.retry import RetryPolicy
    from agentproc.agents.sim import run_sim_episode
    from agentproc.agents.sim.selfcheck import run_selfcheck
    from agentproc.agents.text import arun_text_episode
    from agentproc.analysis import (
        Replay,
        aggregate,
        label_record,
        replay_calls,
        replay_messages,
        report_json,
        wilson,
    )
    from agentproc.analysis.render import render_report
    from agentproc.arith import Op
    from agentproc.errors import (
        AgentprocError,
        ConfigError,
        GenerationError,
        InputError,
        RunFileError,
    )
    from agentproc.labelling import Label, LabelKind, Monitor, label_calls, label_text, parse_text
    from agentproc.procedures import Block, Cell, Grid, Procedure, generate_procedure, preset, write_suite
    from agentproc.runs import (
        CallRecord,
        Episode,
        EpisodeSession,
        RunWriter,
        arun_suite,
        episode_record,
        read_run,
        run_suite,
    )
    from agentproc.workflow import (
        Scenario,
        Toolkit,
        Workflow,
        build_workflow,
        compile_procedure,
        load_scenario,
        load_scenarios,
        scenario_of,
        step_graph,
    )
    from agentproc.workflow.reference import reference_graph

_EXPORTS: dict[str, str] = {
    # procedures
    "Block": "agentproc.procedures",
    "Cell": "agentproc.procedures",
    "Grid": "agentproc.procedures",
    "Op": "agentproc.arith",
    "Procedure": "agentproc.procedures",
    "generate_procedure": "agentproc.procedures",
    "preset": "agentproc.procedures",
    "write_suite": "agentproc.procedures",
    # workflow
    "Scenario": "agentproc.workflow",
    "Toolkit": "agentproc.workflow",
    "Workflow": "agentproc.workflow",
    "build_workflow": "agentproc.workflow",
    "compile_procedure": "agentproc.workflow",
    "load_scenario": "agentproc.workflow",
    "load_scenarios": "agentproc.workflow",
    "reference_graph": "agentproc.workflow.reference",
    "scenario_of": "agentproc.workflow",
    "step_graph": "agentproc.workflow",
    # labelling
    "Label": "agentproc.labelling",
    "LabelKind": "agentproc.labelling",
    "Monitor": "agentproc.labelling",
    "label_calls": "agentproc.labelling",
    "label_text": "agentproc.labelling",
    "parse_text": "agentproc.labelling",
    # runs
    "CallRecord": "agentproc.runs",
    "Episode": "agentproc.runs",
    "EpisodeSession": "agentproc.runs",
    "RunWriter": "agentproc.runs",
    "arun_suite": "agentproc.runs",
    "episode_record": "agentproc.runs",
    "read_run": "agentproc.runs",
    "run_suite": "agentproc.runs",
    # agents
    "RetryPolicy": "agentproc.agents.retry",
    "arun_agent_episode": "agentproc.agents.custom",
    "arun_model_episode": "agentproc.agents.harness",
    "arun_text_episode": "agentproc.agents.text",
    "make_chat_model": "agentproc.agents.providers",
    "run_selfcheck": "agentproc.agents.sim.selfcheck",
    "run_sim_episode": "agentproc.agents.sim",
    # analysis
    "Replay": "agentproc.analysis",
    "aggregate": "agentproc.analysis",
    "label_record": "agentproc.analysis",
    "render_report": "agentproc.analysis.render",
    "replay_calls": "agentproc.analysis",
    "replay_messages": "agentproc.analysis",
    "report_json": "agentproc.analysis",
    "wilson": "agentproc.analysis",
    # errors
    "AgentprocError": "agentproc.errors",
    "ConfigError": "agentproc.errors",
    "GenerationError": "agentproc.errors",
    "InputError": "agentproc.errors",
    "RunFileError": "agentproc.errors",
}
"""Public name -> the module that defines it."""

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
        globals()[name] = value  # later look-ups skip this function
        return value
    raise AttributeError(f"module 'agentproc' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*__all__, "__version__"])
