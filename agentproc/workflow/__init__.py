"""Compile a procedure into a tool-call workflow: the scenario, its tools, its step graph,
the runtime index the mock tools and the monitor share, and the mock tools themselves."""

from agentproc.workflow.calls import REFUSALS, CallRecord, parse_arguments
from agentproc.workflow.compile import (
    StepGraph,
    compile_procedure,
    complete,
    make_tools,
    step_graph,
)
from agentproc.workflow.load import (
    load_scenario,
    load_scenarios,
    parse_scenario,
    per_cell,
    scenario_of,
    suite_size,
)
from agentproc.workflow.prompts import opening_messages, render_prompt, text_messages, text_prompt
from agentproc.workflow.runtime import Workflow, build_workflow
from agentproc.workflow.scenario import (
    FINISH_ARGUMENT,
    FINISH_TOOL,
    SCHEMA_VERSION,
    ExpectedCall,
    FinishSpec,
    Scenario,
    ScenarioParams,
    ScenarioStep,
    step_tool_name,
    var_index,
)
from agentproc.workflow.toolkit import GUARDS, Guard, Toolkit

__all__ = [
    "FINISH_ARGUMENT",
    "FINISH_TOOL",
    "GUARDS",
    "REFUSALS",
    "SCHEMA_VERSION",
    "CallRecord",
    "ExpectedCall",
    "FinishSpec",
    "Guard",
    "Scenario",
    "ScenarioParams",
    "ScenarioStep",
    "StepGraph",
    "Toolkit",
    "Workflow",
    "build_workflow",
    "compile_procedure",
    "complete",
    "load_scenario",
    "load_scenarios",
    "make_tools",
    "opening_messages",
    "parse_arguments",
    "parse_scenario",
    "per_cell",
    "render_prompt",
    "scenario_of",
    "step_graph",
    "step_tool_name",
    "suite_size",
    "text_messages",
    "text_prompt",
    "var_index",
]
