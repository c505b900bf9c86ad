"""Under the ``dependency`` order policy every input of a declared workflow counts as
given: an argument equal to an input's value is no ``unreturned_value``, even when a call
of the same message produced that value too."""

from __future__ import annotations

from typing import Any

from agentproc.declared.draw import WorkflowInstance, draw_instance, evaluate_steps
from agentproc.resources import folder
from agentproc.runs.session import EpisodeSession
from agentproc.workflow.declared.compile import compile_instance
from agentproc.workflow.declared.suite import load_workflow, workflow_scenarios

WF = load_workflow(folder("workflows") / "invoice_approval.toml")
SCENARIOS = list(workflow_scenarios(WF, "invoice_approval", count=200, seed=0))


def value_of(scenario: Any) -> dict[str, Any]:
    return {**scenario.inputs, **{s.output: s.value for s in scenario.steps}}


def batch_line_b_with_subtotal(scenario: Any) -> list[Any]:
    """Line A, then line B and the subtotal in one message (the subtotal passing line B's
    amount before its result came back)."""
    value, step = value_of(scenario), {s.name: s for s in scenario.steps}
    session = EpisodeSession(scenario, "hand", order="dependency")

    def call(tool: str) -> None:
        session.call(tool, {v: value[v] for v in step[tool].operands})

    session.message()
    call("line_amount_a")
    session.message()
    call("line_amount_b")
    call("subtotal")
    return [(lab.kind.value, lab.argument) for lab in session.finish("answer").labels]


def one_unit_on_line_b() -> Any:
    """An instance with one unit on line B, so that its amount is its unit price (drawn
    again since no step may equal an input; a suite drawn before holds such instances)."""
    drawn = draw_instance(WF, 0, 0)
    pairs = zip(WF.input_names, drawn.inputs, strict=True)
    inputs = tuple(1000 if name == "quantity_b" else units for name, units in pairs)
    inst = WorkflowInstance(0, inputs, evaluate_steps(WF, inputs))
    return compile_instance(WF, inst, "invoice_approval", 0)


def test_a_value_that_is_also_an_input_is_not_unreturned():
    # One unit on line B: its amount is its unit price, an input the agent was given.
    scenario = one_unit_on_line_b()
    assert value_of(scenario)["amount_b"] == scenario.inputs["unit_price_b"]
    assert ("unreturned_value", "amount_b") not in batch_line_b_with_subtotal(scenario)


def test_a_value_only_the_same_message_produced_is_unreturned():
    scenario = next(s for s in SCENARIOS if s.inputs["quantity_b"] > 1)
    assert ("unreturned_value", "amount_b") in batch_line_b_with_subtotal(scenario)
