"""Run one simulated agent through one scenario in an :class:`EpisodeSession`."""

from __future__ import annotations

from agentproc.agents.sim.faults import sim_agent
from agentproc.labelling import Label, shown_label
from agentproc.runs import Episode, EpisodeSession, StopReason, episode_seed
from agentproc.workflow import CallRecord, Guard, Scenario
from agentproc.workflow.variant import Variant


def run_sim_episode(
    scenario: Scenario,
    agent: str,
    *,
    seed: int = 0,
    guard: Guard = "observe",
    budget: int | None = None,
    trial: int = 0,
    variant: Variant | None = None,
) -> Episode:
    """Run a simulated agent on a scenario and label what it did (``trial`` reseeds it).

    Under a ``variant`` the agent works on the presented workflow (steps in the listed
    order) and speaks the names it is shown: its calls are translated on the way out.
    """
    factory = sim_agent(agent)
    session = EpisodeSession(scenario, agent, guard=guard, budget=budget, variant=variant)
    presented = session.presented
    policy = factory(session.workflow, episode_seed(seed, scenario.id, agent, trial))
    truth: list[Label] | None = None
    stop: StopReason = "no_tool_call"
    rec: CallRecord
    try:
        request = next(policy)
        while True:
            if session.exhausted:
                stop = "budget"
                policy.close()
                break
            name, arguments = request
            if presented is not None:
                name, arguments = presented.outbound(name, arguments)
            rec = session.call(name, arguments)
            request = policy.send(rec)
    except StopIteration as end:
        truth = end.value
    if truth is not None and presented is not None:  # the truth, in the names it was shown
        truth = [shown_label(lab, presented.names) for lab in truth]
    if stop != "budget":
        stop = "answer" if session.answered else "no_tool_call"
        session.say("Done.")
    ep = session.finish(stop, injected=truth)
    ep.trial = trial
    return ep
