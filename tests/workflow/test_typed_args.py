"""A branched workflow's parameter kinds: found once for all the instances of a workflow
shown in its own names, and never shared by a workflow that differs in what they read."""

from __future__ import annotations

from agentproc.workflow.runtime import build_workflow
from agentproc.workflow.scenario_types import VariableType
from agentproc.workflow.typed_args import fits, tool_kinds
from tests.workflow.hand_traces import Instance


def _own(var: str) -> str:
    return var


def test_the_instances_of_a_workflow_share_their_kinds_and_another_type_gets_its_own():
    inst = Instance("refund_approval")
    first = tool_kinds(build_workflow(inst.scenario), None, _own)
    again = tool_kinds(build_workflow(inst.scenario.model_copy(deep=True)), None, _own)
    assert again is first  # found once, kept
    # The same steps with item_condition a category of other names: a call naming one
    # of them fits that workflow's tool, not the first one's.
    other = inst.scenario.model_copy(deep=True)
    assert other.types is not None
    other.types["item_condition"] = VariableType(type="category", choices=["new", "used"])
    kinds = tool_kinds(build_workflow(other), None, _own)
    args = {"item_condition": "used", "order_total": 10.0, "restocking_rate": 0.1}
    assert fits(kinds["restocking_fee"], args)
    assert not fits(first["restocking_fee"], args)


def test_a_condition_taken_off_a_step_makes_its_output_a_required_argument():
    inst = Instance("refund_approval")
    base = tool_kinds(build_workflow(inst.scenario), None, _own)
    other = inst.scenario.model_copy(deep=True)
    other.steps[1].when = None  # damage_credit: no longer conditional
    kinds = tool_kinds(build_workflow(other), None, _own)
    assert base["refund_amount"]["credit"] == (None, True)
    assert kinds["refund_amount"]["credit"] == (None, False)
