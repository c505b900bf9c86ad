"""agentproc: does a tool-using agent execute a procedure faithfully?

Arithmetic procedures are compiled into tool-call workflows in which every step
is a stateful mock tool; a monitor labels every call against the expected step
graph. The pipeline, top to bottom: :mod:`~agentproc.procedures` (seeded
generation, suites) -> :mod:`~agentproc.workflow` (scenarios, mock tools) ->
:mod:`~agentproc.labelling` (the taxonomy) -> :mod:`~agentproc.runs` (episodes,
the runner, run files) -> :mod:`~agentproc.agents` and :mod:`~agentproc.analysis`
-> :mod:`~agentproc.cli`.

The core (procedures, workflow, labelling, runs) and analysis are imported with the
package; the agents and the LangGraph reference execution are imported on first use
of one of their names (:data:`ON_FIRST_USE`), so that ``import agentproc`` and
``agentproc --help`` load no LangChain, LangGraph or model client. The
``TYPE_CHECKING`` block shows IDEs and type checkers those names too (a test keeps the
two in step).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from agentproc.analysis import (
    CompareResult,
    Replay,
    aggregate,
    compare_files,
    compare_records,
    label_record,
    mcnemar,
    pass_hat_k,
    replay_calls,
    replay_messages,
    report_json,
    wilson,
)
from agentproc.analysis.render import render_report
from agentproc.arith import Op
from agentproc.errors import AgentprocError, ConfigError, GenerationError, InputError, RunFileError
from agentproc.labelling import Label, LabelKind, Monitor, label_calls, label_text, parse_text
from agentproc.procedures import (
    Block,
    Cell,
    Grid,
    Procedure,
    generate_procedure,
    preset,
    write_suite,
)
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
from agentproc.workflow.present import present
from agentproc.workflow.variant import Variant, load_variant

__version__ = "0.1.0"

if (
    TYPE_CHECKING
):  # the names imported on first use, for IDEs and type checkers (``X as X`` re-exports)
    from agentproc.agents.custom import arun_agent_episode as arun_agent_episode
    from agentproc.agents.harness import arun_model_episode as arun_model_episode
    from agentproc.agents.providers import make_chat_model as make_chat_model
    from agentproc.agents.retry import RetryPolicy as RetryPolicy
    from agentproc.agents.sim import run_sim_episode as run_sim_episode
    from agentproc.agents.sim.selfcheck import run_selfcheck as run_selfcheck
    from agentproc.agents.text import arun_text_episode as arun_text_episode
    from agentproc.workflow.reference import reference_graph as reference_graph

ON_FIRST_USE: dict[str, str] = {
    "RetryPolicy": "agentproc.agents.retry",
    "arun_agent_episode": "agentproc.agents.custom",
    "arun_model_episode": "agentproc.agents.harness",
    "arun_text_episode": "agentproc.agents.text",
    "make_chat_model": "agentproc.agents.providers",
    "run_selfcheck": "agentproc.agents.sim.selfcheck",
    "run_sim_episode": "agentproc.agents.sim",
    "reference_graph": "agentproc.workflow.reference",
}
"""Names imported on first use -> the module that defines each: the agents, and the
reference execution (both LangGraph)."""

__all__ = [
    "AgentprocError",
    "Block",
    "CallRecord",
    "Cell",
    "CompareResult",
    "ConfigError",
    "Episode",
    "EpisodeSession",
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
    "Variant",
    "Workflow",
    "aggregate",
    "arun_agent_episode",
    "arun_model_episode",
    "arun_suite",
    "arun_text_episode",
    "build_workflow",
    "compare_files",
    "compare_records",
    "compile_procedure",
    "episode_record",
    "generate_procedure",
    "label_calls",
    "label_record",
    "label_text",
    "load_scenario",
    "load_scenarios",
    "load_variant",
    "make_chat_model",
    "mcnemar",
    "parse_text",
    "pass_hat_k",
    "present",
    "preset",
    "read_run",
    "reference_graph",
    "render_report",
    "replay_calls",
    "replay_messages",
    "report_json",
    "run_selfcheck",
    "run_sim_episode",
    "run_suite",
    "scenario_of",
    "step_graph",
    "wilson",
    "write_suite",
]


def __getattr__(name: str) -> Any:
    module = ON_FIRST_USE.get(name)
    if module is None:
        raise AttributeError(f"module 'agentproc' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later look-ups skip this function
    return value
