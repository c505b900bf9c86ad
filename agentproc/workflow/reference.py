"""The reference execution of a scenario as a LangGraph ``StateGraph``.

One node per step, named after its tool (``step_1`` ... ``step_N``), chained in
the listed order, then a finish node (``submit_answer``). Each node reads its
operands from the graph state, calls the mock tools with them and writes the
value the tool produced back into the state, so the graph is a faithful agent
written as a workflow: invoking it yields the expected trace.

LangGraph is imported here only, and nothing imports this module but the
callers of :func:`reference_graph`, so the CLI starts fast.

>>> from agentproc.procedures import Cell, generate_procedure
>>> from agentproc.workflow.compile import compile_procedure
>>> s = compile_procedure(generate_procedure(Cell(steps=2, lookback=2), seed=0, index=0))
>>> [c["name"] for c in run_reference_state(s)["calls"]]
['step_1', 'step_2', 'submit_answer']
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Annotated, Any, TypedDict

from langgraph.graph import END, START, StateGraph

from agentproc.errors import InputError
from agentproc.workflow.runtime import build_workflow
from agentproc.workflow.scenario import Scenario, ScenarioStep
from agentproc.workflow.toolkit import Guard, Toolkit


class ReferenceState(TypedDict):
    """What flows between the nodes of the reference graph."""

    values: Annotated[dict[str, Any], operator.or_]
    """Variable name (``S1``, ``S2``, ...) to the value produced so far."""
    calls: Annotated[list[dict[str, Any]], operator.add]
    """The calls made so far, as ``{"name", "arguments"}`` dicts."""


Node = Callable[..., dict[str, Any]]
"""A node function: the state in, the update out (LangGraph types nodes as protocols)."""


def _refused(scenario: Scenario, name: str, result: str) -> InputError:
    # The reference arguments come from the scenario itself, so a refusal means
    # the scenario is inconsistent (for instance edited by hand), not an agent mistake.
    return InputError(f"scenario {scenario.id}", f"the reference call {name} was refused: {result}")


def _step_node(scenario: Scenario, toolkit: Toolkit, spec: ScenarioStep) -> Node:
    wf = toolkit.workflow

    def run_step(state: ReferenceState) -> dict[str, Any]:
        arguments = {p: state["values"][p] for p in spec.params}
        rec = toolkit.call(spec.name, arguments)
        if rec.value is None:
            raise _refused(scenario, spec.name, rec.result)
        return {
            "values": {f"S{spec.target}": wf.to_number(rec.value)},
            "calls": [{"name": spec.name, "arguments": arguments}],
        }

    return run_step


def _finish_node(scenario: Scenario, toolkit: Toolkit) -> Node:
    wf = toolkit.workflow
    answer_variable = f"S{wf.answer_index}"

    def submit(state: ReferenceState) -> dict[str, Any]:
        arguments = {wf.finish_argument: state["values"][answer_variable]}
        if wf.answer_fields:  # a multi-field answer: each field's value
            arguments = {f: state["values"][f"S{v}"] for f, v in wf.answer_fields}
        rec = toolkit.call(wf.finish_tool, arguments)
        if rec.refused is not None:
            raise _refused(scenario, wf.finish_tool, rec.result)
        return {"calls": [{"name": wf.finish_tool, "arguments": arguments}]}

    return submit


def reference_graph(scenario: Scenario, toolkit: Toolkit | None = None) -> Any:
    """The reference execution as a compiled LangGraph ``StateGraph``.

    One node per step, chained in the listed order, then a finish node. Each node
    calls the mock tools with the values the state holds; invoking the graph with
    :func:`initial_state` (``{"values": scenario.inputs, "calls": []}``) and a
    recursion limit above the number of steps (:func:`recursion_limit`) yields the
    expected trace.

    Args:
        scenario: A complete scenario (with its tools).
        toolkit: The mock tools the nodes call; fresh ``observe`` tools by default.
            The graph keeps them, so build one graph per execution to inspect them.
    """
    if toolkit is None:
        toolkit = Toolkit(build_workflow(scenario))
    wf = toolkit.workflow
    graph = StateGraph(ReferenceState)
    previous = START
    for spec in wf.steps:
        graph.add_node(spec.name, _step_node(scenario, toolkit, spec))
        graph.add_edge(previous, spec.name)
        previous = spec.name
    graph.add_node(wf.finish_tool, _finish_node(scenario, toolkit))
    graph.add_edge(previous, wf.finish_tool)
    graph.add_edge(wf.finish_tool, END)
    return graph.compile()


def initial_state(scenario: Scenario) -> ReferenceState:
    """The state the reference graph starts from: the inputs and no calls."""
    return {"values": dict(scenario.inputs), "calls": []}


def recursion_limit(scenario: Scenario) -> int:
    """A LangGraph recursion limit that lets every node of the scenario run."""
    return len(scenario.steps) + 10


def run_reference_state(scenario: Scenario, guard: Guard = "enforce") -> ReferenceState:
    """Invoke the reference graph on fresh mock tools; the final state.

    The default ``enforce`` guard makes the mock tools refuse any call that
    breaks a dependency, so a reference that runs through is also in order.
    """
    graph = reference_graph(scenario, Toolkit(build_workflow(scenario), guard))
    state: ReferenceState = graph.invoke(
        initial_state(scenario), config={"recursion_limit": recursion_limit(scenario)}
    )
    return state
