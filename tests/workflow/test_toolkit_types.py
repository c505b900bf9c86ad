"""The mock tools check a branched workflow's arguments by their types, which are found
once for all the instances of a workflow: never shared with a workflow that has other
types or conditions on the same steps."""

from __future__ import annotations

from typing import Any

from agentproc.workflow.runtime import build_workflow
from agentproc.workflow.scenario import Scenario
from agentproc.workflow.scenario_types import VariableType
from agentproc.workflow.toolkit import Toolkit
from tests.workflow.hand_traces import Instance


def _refused(scenario: Scenario, tool: str, args: dict[str, Any]) -> str | None:
    return Toolkit(build_workflow(scenario)).call(tool, args).refused


def test_a_category_of_other_names_on_the_same_steps_is_checked_by_its_own_names():
    inst = Instance("refund_approval")
    args = {"item_condition": "used", "order_total": 10.0, "restocking_rate": 0.1}
    assert _refused(inst.scenario, "restocking_fee", args) == "invalid_arguments"
    other = inst.scenario.model_copy(deep=True)
    assert other.types is not None
    other.types["item_condition"] = VariableType(type="category", choices=["new", "used"])
    assert _refused(other, "restocking_fee", args) is None  # executed
    assert _refused(inst.scenario, "restocking_fee", args) == "invalid_arguments"


def test_a_step_without_its_condition_makes_its_output_a_required_argument():
    inst = Instance("refund_approval")
    args = {"order_total": 100.0, "fee": 15.0, "item_condition": "opened"}  # no credit
    assert _refused(inst.scenario, "refund_amount", args) is None  # credit: optional
    other = inst.scenario.model_copy(deep=True)
    other.steps[1].when = None  # damage_credit, whose output is credit: always required
    assert _refused(other, "refund_amount", args) == "invalid_arguments"
    assert _refused(inst.scenario, "refund_amount", args) is None
