"""Run one simulated agent through one scenario: calls go through the mock tools,
the monitor labels each as it happens, and the episode is assembled.
"""

from __future__ import annotations

import random
from typing import Any

from agentproc.agents.sim import sim_agent
from agentproc.monitor import Monitor
from agentproc.toolkit import Guard, Toolkit
from agentproc.types import CallRecord, Episode, Scenario
from agentproc.workflow import Workflow, build_workflow

SYSTEM_PROMPT = (
    "You are a careful assistant that executes procedures with tools. "
    "Call exactly one tool at a time and use the values the tools return."
)


def default_budget(workflow: Workflow) -> int:
    """The call budget of an episode: twice what a faithful agent needs, plus five."""
    return 2 * (workflow.n_steps + 1) + 5


def opening_messages(scenario: Scenario) -> list[dict[str, Any]]:
    """The system and user messages an agent starts from."""
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": scenario.prompt},
    ]


def call_messages(rec: CallRecord) -> list[dict[str, Any]]:
    """One call as an assistant tool call and its tool result (OpenAI chat format)."""
    call_id = f"call_{rec.index}"
    return [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": rec.name, "arguments": rec.arguments},
                }
            ],
        },
        {"role": "tool", "tool_call_id": call_id, "content": rec.result},
    ]


def text_of(content: Any) -> str:
    """The text of a chat message's content (a string, or a list of content parts)."""
    if isinstance(content, list):
        return "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
    return str(content or "")


def episode_seed(seed: int, scenario_id: str, agent: str) -> random.Random:
    """The random source of one episode: fixed by the run seed, scenario and agent."""
    return random.Random(f"agentproc-episode:{seed}:{scenario_id}:{agent}")


def run_sim_episode(
    scenario: Scenario,
    agent: str,
    *,
    seed: int = 0,
    guard: Guard = "observe",
    budget: int | None = None,
) -> Episode:
    """Run a simulated agent on a scenario and label what it did."""
    factory = sim_agent(agent)
    wf = build_workflow(scenario)
    toolkit = Toolkit(wf, guard)
    monitor = Monitor(wf)
    policy = factory(wf, episode_seed(seed, scenario.id, agent))
    messages = opening_messages(scenario)
    limit = budget if budget is not None else default_budget(wf)
    truth = None
    stop = "no_tool_call"
    rec: CallRecord | None = None
    try:
        request = next(policy)
        while True:
            if len(toolkit.calls) >= limit:
                stop = "budget"
                policy.close()
                break
            name, arguments = request
            rec = toolkit.call(name, arguments)
            monitor.observe(rec)
            messages.extend(call_messages(rec))
            request = policy.send(rec)
    except StopIteration as end:
        truth = end.value
    if stop != "budget":
        stop = "answer" if toolkit.answers else "no_tool_call"
        messages.append({"role": "assistant", "content": "Done."})
    labels, metrics = monitor.finish()
    return Episode(
        scenario=scenario,
        agent=agent,
        calls=toolkit.calls,
        labels=labels,
        metrics=metrics,
        messages=messages,
        stop_reason=stop,
        guard=guard,
        injected=truth,
    )
