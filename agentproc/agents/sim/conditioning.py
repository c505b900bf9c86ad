"""``sim:selfcond``: a simulated agent that errs more once its history holds an error.

Sinha et al. (arXiv 2509.09677) find that a model errs more when its context holds its
own earlier errors (self-conditioning). This agent has that effect with known size: at
each step it slips (one wrong argument, carried forward) with probability ``base`` while
its history is clean, and ``base + lift`` once the history holds an error: a pre-filled
call with a slip of its own (a variant's ``[prefill]``, :mod:`agentproc.workflow.prefill`)
or a slip of its own. The induced measure (:mod:`agentproc.analysis.measures.induced`) reads
``base`` back from clean pre-fills and ``base + lift`` from wrong ones.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Generator

from agentproc.agents.sim.beliefs import Agent, Request
from agentproc.agents.sim.wrong import wrong_value
from agentproc.labelling import Label
from agentproc.workflow import CallRecord, Workflow

SELFCOND = {"base": 0.05, "lift": 0.15}
"""``sim:selfcond``: the slip probability of a step with a clean history, and what it
gains once the history holds an error."""

Policy = Generator[Request, CallRecord, list[Label]]


def self_conditioning(
    base: float = SELFCOND["base"], lift: float = SELFCOND["lift"]
) -> Callable[[Workflow, random.Random], Policy]:
    """The factory of an agent that slips with probability ``base`` a step, ``base + lift``
    once its history holds an error (see the module docstring).

    >>> factory = self_conditioning(0.1, 0.3)
    """
    if not (0.0 <= base <= 1.0 and 0.0 <= base + lift <= 1.0):
        raise ValueError(f"base {base:g} and base + lift {base + lift:g} must lie in [0, 1]")

    def policy(wf: Workflow, rng: random.Random) -> Policy:
        a = Agent(wf)
        erred = bool(wf.given_wrong)
        for spec in wf.steps[wf.given :]:
            if rng.random() < (base + lift if erred else base):
                param, value, cause = wrong_value(a, spec, rng, allow_confusion=False)
                yield from a.step(spec, {param: value}, {param: cause})
                erred = True
            else:
                yield from a.step(spec)
        yield from a.submit(a.own_answer())
        return a.done()

    return policy
