"""The injectors of a branched workflow's own faults: ``sim:wrong_branch`` takes the branch
the conditions do not support at one step with a condition, ``sim:ignores_exit`` carries
on past the exit that fires. On a workflow without branches (or without a place for the
fault) each runs as ``sim:oracle``."""

from __future__ import annotations

import random

from agentproc.agents.sim.beliefs import Agent, Policy, oracle, pick
from agentproc.arith import UNDEFINED
from agentproc.workflow import Workflow
from agentproc.workflow.declared.branching import holds


def wrong_branch(wf: Workflow, rng: random.Random) -> Policy:
    """A branched workflow: take the branch the conditions do not support at one step with
    a ``when`` (before any exit that fires): skip it where it is required, run it where
    it is not (an ``unneeded_step``, ``unsupported``). Elsewhere it runs as the oracle."""
    a = Agent(wf)
    b = wf.branching
    fired = None if b is None or b.fired is None else b.exits[b.fired].after
    choices = [
        s
        for s in wf.steps
        if b is not None
        and b.conditions[s.step - 1] is not None
        and (fired is None or s.step <= fired)
        and (s.step not in b.skip or wf.correct[s.target] != UNDEFINED)
    ]
    if not choices:
        return (yield from oracle(wf, rng))
    flip = choices[pick(rng, len(choices))]
    for spec in wf.steps:
        if (spec.step == flip.step) != (spec in a.path):
            yield from a.step(spec)
    yield from a.submit(a.own_answer())
    return a.done()


def ignores_exit(wf: Workflow, rng: random.Random) -> Policy:
    """A branched workflow: carry on past the exit that fires, running every later step
    whose condition holds and that has a value, then answer its own value of the answer
    (an ``unneeded_step`` for each step past the exit). Without an exit that fires it runs
    as the oracle."""
    a = Agent(wf)
    b = wf.branching
    if b is None or b.fired is None:
        return (yield from oracle(wf, rng))
    env = a.env()
    for spec in wf.steps:
        cond = b.conditions[spec.step - 1]
        if spec in a.path or (
            spec.step > b.exits[b.fired].after
            and wf.correct[spec.target] != UNDEFINED
            and (cond is None or holds(cond, env))
        ):
            yield from a.step(spec)
    yield from a.submit(a.chain_answer())
    return a.done()
