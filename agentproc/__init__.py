"""agentproc: does a tool-using agent execute a procedure faithfully?

Arithmetic procedures are compiled into tool-call workflows in which every step
is a stateful mock tool; a monitor labels every call against the expected step
graph. Nothing here imports LangGraph or LangChain: they load when a model runs.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

# Names load on first use, so that ``agentproc --help`` does not pay for pydantic
# models, jsonschema and the generator it does not need.
_EXPORTS: dict[str, str] = {
    "RetryPolicy": "agentproc.agents.retry",
    "arun_agent_episode": "agentproc.agents.custom",
    "arun_model_episode": "agentproc.agents.harness",
    "arun_text_episode": "agentproc.agents.text",
    "make_chat_model": "agentproc.agents.providers",
    "label_text": "agentproc.textmode",
    "parse_text": "agentproc.textmode",
    "aggregate": "agentproc.report",
    "report_json": "agentproc.report",
    "render_report": "agentproc.report",
    "wilson": "agentproc.report",
    "label_record": "agentproc.replay",
    "AgentprocError": "agentproc.errors",
    "Block": "agentproc.suites",
    "CallRecord": "agentproc.types",
    "Cell": "agentproc.procedures",
    "ConfigError": "agentproc.errors",
    "Episode": "agentproc.types",
    "GenerationError": "agentproc.errors",
    "Grid": "agentproc.suites",
    "InputError": "agentproc.errors",
    "Label": "agentproc.types",
    "LabelKind": "agentproc.types",
    "Monitor": "agentproc.monitor",
    "Op": "agentproc.arith",
    "Procedure": "agentproc.procedures",
    "Replay": "agentproc.replay",
    "RunFileError": "agentproc.errors",
    "RunWriter": "agentproc.runs",
    "Scenario": "agentproc.types",
    "Toolkit": "agentproc.toolkit",
    "Workflow": "agentproc.workflow",
    "build_workflow": "agentproc.workflow",
    "compile_procedure": "agentproc.compiler",
    "episode_record": "agentproc.runs",
    "generate_procedure": "agentproc.procedures",
    "label_calls": "agentproc.monitor",
    "load_scenario": "agentproc.suites",
    "load_scenarios": "agentproc.suites",
    "preset": "agentproc.suites",
    "read_run": "agentproc.runs",
    "reference_graph": "agentproc.compiler",
    "replay_calls": "agentproc.replay",
    "replay_messages": "agentproc.replay",
    "run_selfcheck": "agentproc.selfcheck",
    "run_sim_episode": "agentproc.episode",
    "scenario_of": "agentproc.suites",
    "step_graph": "agentproc.compiler",
    "write_suite": "agentproc.suites",
}


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'agentproc' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "AgentprocError",
    "Block",
    "CallRecord",
    "Cell",
    "ConfigError",
    "Episode",
    "GenerationError",
    "Grid",
    "InputError",
    "Label",
    "LabelKind",
    "Monitor",
    "Op",
    "Procedure",
    "Replay",
    "RetryPolicy",
    "RunFileError",
    "RunWriter",
    "Scenario",
    "Toolkit",
    "Workflow",
    "aggregate",
    "arun_model_episode",
    "arun_text_episode",
    "build_workflow",
    "compile_procedure",
    "episode_record",
    "generate_procedure",
    "label_calls",
    "label_record",
    "label_text",
    "load_scenario",
    "load_scenarios",
    "make_chat_model",
    "parse_text",
    "preset",
    "read_run",
    "reference_graph",
    "render_report",
    "replay_calls",
    "replay_messages",
    "report_json",
    "run_selfcheck",
    "run_sim_episode",
    "scenario_of",
    "step_graph",
    "wilson",
    "write_suite",
]
