"""agentproc: does a tool-using agent execute a procedure faithfully?

Arithmetic procedures are compiled into tool-call workflows in which every step
is a stateful mock tool; a monitor labels every call against the expected step
graph. The pipeline, top to bottom: :mod:`~agentproc.procedures` (seeded
generation, suites) -> :mod:`~agentproc.workflow` (scenarios, mock tools) ->
:mod:`~agentproc.labelling` (the taxonomy) -> :mod:`~agentproc.runs` (episodes,
the runner, run files) -> :mod:`~agentproc.agents` and :mod:`~agentproc.analysis`
-> :mod:`~agentproc.cli`.

The core packages import each other eagerly; this front door alone imports its names
on first use (:data:`_EXPORTS`), because every start of the command imports it:
``agentproc --help`` would otherwise pay about 0.25 s for the core's pydantic models,
and LangChain and LangGraph for the agents. The ``TYPE_CHECKING`` block shows IDEs and
type checkers exactly the same names (a test keeps the two in step).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:  # the same names, for IDEs and type checkers (``X as X`` re-exports)
    from agentproc.agents.custom import arun_agent_episode as arun_agent_episode
    from agentproc.agents.harness import arun_model_episode as arun_model_episode
    from agentproc.agents.providers import make_chat_model as make_chat_model
    from agentproc.agents.retry import RetryPolicy as RetryPolicy
    from agentproc.agents.sim import run_sim_episode as run_sim_episode
    from agentproc.agents.sim.selfcheck import run_selfcheck as run_selfcheck
    from agentproc.agents.text import arun_text_episode as arun_text_episode
    from agentproc.analysis import CompareResult as CompareResult
    from agentproc.analysis import Replay as Replay
    from agentproc.analysis import aggregate as aggregate
    from agentproc.analysis import compare_files as compare_files
    from agentproc.analysis import compare_records as compare_records
    from agentproc.analysis import label_record as label_record
    from agentproc.analysis import mcnemar as mcnemar
    from agentproc.analysis import pass_hat_k as pass_hat_k
    from agentproc.analysis import replay_calls as replay_calls
    from agentproc.analysis import replay_messages as replay_messages
    from agentproc.analysis import report_json as report_json
    from agentproc.analysis import wilson as wilson
    from agentproc.analysis.render.report_text import render_report as render_report
    from agentproc.arith import Op as Op
    from agentproc.errors import AgentprocError as AgentprocError
    from agentproc.errors import ConfigError as ConfigError
    from agentproc.errors import GenerationError as GenerationError
    from agentproc.errors import InputError as InputError
    from agentproc.errors import RunFileError as RunFileError
    from agentproc.labelling import Label as Label
    from agentproc.labelling import LabelKind as LabelKind
    from agentproc.labelling import Monitor as Monitor
    from agentproc.labelling import label_calls as label_calls
    from agentproc.labelling import label_text as label_text
    from agentproc.labelling import parse_text as parse_text
    from agentproc.procedures import Block as Block
    from agentproc.procedures import Cell as Cell
    from agentproc.procedures import Grid as Grid
    from agentproc.procedures import Procedure as Procedure
    from agentproc.procedures import generate_procedure as generate_procedure
    from agentproc.procedures import preset as preset
    from agentproc.procedures import write_suite as write_suite
    from agentproc.runs import CallRecord as CallRecord
    from agentproc.runs import Episode as Episode
    from agentproc.runs import EpisodeSession as EpisodeSession
    from agentproc.runs import RunWriter as RunWriter
    from agentproc.runs import arun_suite as arun_suite
    from agentproc.runs import episode_record as episode_record
    from agentproc.runs import read_run as read_run
    from agentproc.runs import run_suite as run_suite
    from agentproc.workflow import Scenario as Scenario
    from agentproc.workflow import Toolkit as Toolkit
    from agentproc.workflow import Workflow as Workflow
    from agentproc.workflow import build_workflow as build_workflow
    from agentproc.workflow import compile_procedure as compile_procedure
    from agentproc.workflow import load_scenario as load_scenario
    from agentproc.workflow import load_scenarios as load_scenarios
    from agentproc.workflow import scenario_of as scenario_of
    from agentproc.workflow import step_graph as step_graph
    from agentproc.workflow.present import present as present
    from agentproc.workflow.reference import reference_graph as reference_graph
    from agentproc.workflow.variant import Variant as Variant
    from agentproc.workflow.variant import load_variant as load_variant

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
    "Variant": "agentproc.workflow.variant",
    "load_variant": "agentproc.workflow.variant",
    "present": "agentproc.workflow.present",
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
    "CompareResult": "agentproc.analysis",
    "compare_files": "agentproc.analysis",
    "compare_records": "agentproc.analysis",
    "mcnemar": "agentproc.analysis",
    "pass_hat_k": "agentproc.analysis",
    "label_record": "agentproc.analysis",
    "render_report": "agentproc.analysis.render.report_text",
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


# Written out here, not taken from agentproc.lazy: importing the package loads no other
# module of it (a pytest session that never uses the plugin pays for nothing more).
def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'agentproc' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted([*_EXPORTS, "__version__"])
