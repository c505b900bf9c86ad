"""``sim:batched`` is faithful under the order policy it is held to, and batches as it may."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest

from agentproc import Cell, generate_procedure, run_sim_episode, scenario_of
from agentproc.agents.sim import sim_agent
from agentproc.labelling.order import OrderPolicy
from agentproc.resources import folder
from agentproc.workflow import Scenario, Workflow, build_workflow
from agentproc.workflow.declared.suite import load_workflow, workflow_scenarios
from agentproc.workflow.variant import load_variant


def procedures(n: int = 20) -> list[Scenario]:
    cells = [Cell(steps=10, lookback=3), Cell(steps=25, lookback=7), Cell(steps=5, lookback=1)]
    return [scenario_of(generate_procedure(c, 0, i)) for c in cells for i in range(n)]


def recording(order: OrderPolicy, messages: list[list[str]]) -> Callable[..., Any]:
    """``sim:batched`` under ``order``, noting the step tools each of its messages called."""
    inner = sim_agent("sim:batched", order)

    def policy(wf: Workflow, rng: random.Random) -> Any:
        gen = inner(wf, rng)
        try:
            request = next(gen)
            while True:
                if isinstance(request, list):
                    messages.append([name for name, _ in request])
                request = gen.send((yield request))
        except StopIteration as end:
            return end.value

    return policy


@pytest.mark.parametrize("order", ["listed", "dependency"])
def test_batched_is_faithful_on_every_procedure_under_either_order_policy(order: OrderPolicy):
    for s in procedures():
        ep = run_sim_episode(s, "sim:batched", order=order)
        assert ep.labels == [] and ep.metrics["verdict"] == "faithful", (s.id, ep.labels)


def test_under_listed_batched_sends_several_steps_a_message_in_listed_order():
    batched_some = False
    for s in procedures(5):
        messages: list[list[str]] = []
        run_sim_episode(s, "sim:batched", order="listed", factory=recording("listed", messages))
        wf = build_workflow(s)
        sent = [int(name.removeprefix("step_")) for m in messages for name in m]
        assert sent == list(range(1, wf.n_steps + 1)), s.id  # each step once, in listed order
        for m in messages:  # no step reads a value sent in its own message
            steps = {int(name.removeprefix("step_")) for name in m}
            assert all(not steps & set(wf.depends_on[k - 1]) for k in steps), (s.id, m)
        batched_some |= any(len(m) > 1 for m in messages)
    assert batched_some


def test_under_dependency_batched_sends_every_ready_step_in_each_message():
    for s in procedures(5):
        messages: list[list[str]] = []
        factory = recording("dependency", messages)
        ep = run_sim_episode(s, "sim:batched", order="dependency", factory=factory)
        assert ep.labels == [] and ep.metrics["batching_maximal"] is True
        assert len(messages) + 1 == ep.metrics["fewest_messages"]


@pytest.mark.parametrize("order", ["listed", "dependency"])
def test_batched_is_faithful_when_the_tools_fail_transiently(order: OrderPolicy):
    flaky = load_variant("flaky-tools")
    refused = 0
    for s in procedures(10):
        ep = run_sim_episode(s, "sim:batched", order=order, variant=flaky)
        assert ep.labels == [] and ep.metrics["verdict"] == "faithful", (s.id, ep.labels)
        refused += sum(c.refused == "transient" for c in ep.calls)
    assert refused > 0  # the faults did strike


@pytest.mark.parametrize("order", ["listed", "dependency"])
@pytest.mark.parametrize("name", ["refund_approval", "hazard_class", "payroll"])
def test_batched_is_faithful_on_declared_workflows(name: str, order: OrderPolicy):
    path = folder("workflows") / f"{name}.toml"
    for s in workflow_scenarios(load_workflow(path), name, 20, 0):
        ep = run_sim_episode(s, "sim:batched", order=order)
        assert ep.labels == [] and ep.metrics["verdict"] == "faithful", (s.id, ep.labels)
