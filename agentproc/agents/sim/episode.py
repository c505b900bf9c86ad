"""Run one simulated agent through one scenario in an :class:`EpisodeSession`."""

from __future__ import annotations

from typing import Any

from agentproc.agents.sim.faults import Factory, sim_agent
from agentproc.labelling import Label, LabelKind, shown_label
from agentproc.labelling.labels import DEPENDENCY_ONLY
from agentproc.labelling.order import OrderPolicy
from agentproc.runs import Episode, EpisodeSession, StopReason, episode_seed
from agentproc.workflow import CallRecord, Guard, Scenario
from agentproc.workflow.present import Presented
from agentproc.workflow.variant import Variant

K = LabelKind


def run_sim_episode(
    scenario: Scenario,
    agent: str,
    *,
    seed: int = 0,
    guard: Guard = "observe",
    budget: int | None = None,
    trial: int = 0,
    variant: Variant | None = None,
    order: OrderPolicy = "listed",
    factory: Factory | None = None,
) -> Episode:
    """Run a simulated agent on a scenario and label what it did (``trial`` reseeds it).

    Under a ``variant`` the agent works on the presented workflow (steps in the listed
    order) and speaks the names it is shown: its calls are translated on the way out.
    A policy that yields a list of calls sends them in one message (a batch) and is sent
    back the list of their records, in call order; ``order`` is the order policy the
    monitor holds the calls to (an agent that acts by it, ``sim:batched``, is told it);
    ``factory``: the agent's policy, when it is not the one
    ``agent`` names (a :func:`~agentproc.agents.sim.conditioning.self_conditioning` of
    other parameters, say).
    """
    factory = factory or sim_agent(agent, order)
    session = EpisodeSession(
        scenario, agent, guard=guard, budget=budget, variant=variant, order=order, trial=trial
    )
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
            session.message()
            if isinstance(request, list):  # one message of several calls
                recs = []
                for name, arguments in request:
                    if session.exhausted:
                        break
                    recs.append(session.call(*_spoken(presented, name, arguments)))
                request = policy.send(recs)
                continue
            rec = session.call(*_spoken(presented, *request))
            request = policy.send(rec)
    except StopIteration as end:
        truth = end.value
    if truth is not None and presented is not None:  # the truth, in the names it was shown
        truth = [shown_label(lab, presented.names) for lab in truth]
    if truth is not None and order == "dependency":  # only a broken dependency is out of order
        truth = [t for t in truth if t.kind is not K.REORDERED or t.breaks_dependency]
    elif truth is not None:  # under ``listed`` the agent's messages are not judged
        truth = [t for t in truth if t.kind not in DEPENDENCY_ONLY]
    if stop != "budget":
        stop = session.stop_reason
        session.say("Done.")
    ep = session.finish(stop, injected=truth)
    ep.trial = trial
    return ep


def _spoken(presented: Presented | None, name: str, arguments: Any) -> tuple[str, Any]:
    """A call in canonical names as the agent speaks it (under a variant, translated)."""
    return (name, arguments) if presented is None else presented.outbound(name, arguments)
