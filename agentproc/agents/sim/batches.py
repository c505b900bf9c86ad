"""Simulated agents that send several tool calls in one message (parallel tool calls).

A policy here yields a list of requests for one message and is sent back the list of
their records, in call order (:func:`~agentproc.agents.sim.episode.run_sim_episode`).

- ``sim:batched`` is faithful under the order policy the monitor holds it to
  (:func:`batched`): under ``listed``, each message holds the next steps in listed order
  whose inputs have come back (the first runs stay in listed order); under
  ``dependency``, every step whose inputs have come back (maximal batching).
- ``sim:unreturned_value`` sends a step and the next one, which reads its output, in one
  message (:func:`unreturned_value`).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Generator
from itertools import takewhile
from typing import Any

from agentproc.agents.sim.beliefs import Agent, K, oracle, pick
from agentproc.labelling import Label
from agentproc.labelling.order import OrderPolicy
from agentproc.workflow import CallRecord, ScenarioStep, Workflow

Batches = Generator[Any, Any, list[Label]]
"""A policy that yields a request or a list of them (one message) and returns its truth."""


def _ready(a: Agent, done: set[int]) -> list[ScenarioStep]:
    """The required steps not yet run whose inputs have all come back, in listed order."""
    skip = a.wf.skip
    return [s for s in a.path if s.step not in done and set(s.depends_on) - skip <= done]


def _listed(a: Agent, done: set[int], rng: random.Random) -> list[ScenarioStep]:
    """The next message under ``listed``: the steps not yet run, from the first on in
    listed order, as long as their inputs have come back (the first always has: it reads
    only earlier steps). Under tools that can fail transiently, the first alone: a refused
    call sent again after a later one of its message ran would run out of listed order."""
    rest = [s for s in a.path if s.step not in done]
    ready = {s.step for s in _ready(a, done)}
    run = list(takewhile(lambda s: s.step in ready, rest)) or rest[:1]
    variant = a.wf.variant
    return run[:1] if variant is not None and variant.faults.transient else run


def _dependency(a: Agent, done: set[int], rng: random.Random) -> list[ScenarioStep]:
    """The next message under ``dependency``: every step whose inputs have come back, in a
    seeded order (any order is in order)."""
    ready = _ready(a, done)
    rng.shuffle(ready)
    return ready


_MESSAGE: dict[OrderPolicy, Callable[[Agent, set[int], random.Random], list[ScenarioStep]]] = {
    "listed": _listed,
    "dependency": _dependency,
}
"""Order policy -> the steps ``sim:batched`` sends in its next message."""


def batched(order: OrderPolicy = "listed") -> Callable[[Workflow, random.Random], Batches]:
    """The factory of ``sim:batched`` under the ``order`` policy: every step with the right
    values, several in one message, each reading only values that came back in earlier
    messages, then the answer; faithful under ``order`` (see the module docstring).

    >>> factory = batched("dependency")
    """
    message = _MESSAGE[order]

    def policy(wf: Workflow, rng: random.Random) -> Batches:
        a = Agent(wf)
        done: set[int] = set(a.last_run)  # the pre-filled steps, if any
        while len(done) < len(a.path):
            batch = message(a, done, rng)
            recs: list[CallRecord] = yield [(s.name, a.args(s)) for s in batch]
            for spec, rec in zip(batch, recs, strict=False):
                if rec.value is None:  # a transient fault: sent again in the next message
                    continue
                a.last_run[spec.step] = a.last_value = a.belief[spec.target] = rec.value
                a.produced.add(spec.target)
                done.add(spec.step)
            if len(recs) < len(batch):  # the budget ran out
                return a.done()
        yield from a.submit(a.own_answer())
        return a.done()

    return policy


def unreturned_value(wf: Workflow, rng: random.Random) -> Batches:
    """Send a step and the next one, which reads its output, in one message: the second's
    argument is the right value, worked out without the first's result (under the
    ``dependency`` policy an ``unreturned_value``; under ``listed`` messages are not
    judged, and :func:`~agentproc.agents.sim.episode.run_sim_episode` drops that truth).
    Without such a pair it runs as ``sim:oracle``."""
    a = Agent(wf)
    path = a.path
    pairs = [
        k
        for k in range(1, len(path))
        if path[k - 1].step in path[k].depends_on and path[k - 1].step > wf.given
    ]
    if not pairs:
        return (yield from oracle(wf, rng))
    k = pairs[pick(rng, len(pairs))]  # the path's steps k and k + 1 go together
    for spec in path[: k - 1]:
        yield from a.step(spec)
    first, second = path[k - 1], path[k]
    # The numbers the agent has been given: a value among them is no unreturned one.
    inputs = (wf.correct[v] for v in range(1, wf.n_inputs + 1))
    given = {*inputs, *(a.belief[v] for v in a.produced)}
    recs: list[CallRecord] = yield [(first.name, a.args(first)), (second.name, a.args(second))]
    if len(recs) < 2:  # the budget ran out
        return a.done()
    if recs[0].value is None and recs[1].value is not None:  # the second ran first
        a.truth.append(Label(K.REORDERED, recs[1].index, second.step, breaks_dependency=True))
    elif recs[1].value is not None and recs[0].value not in given:
        a.truth += [
            Label(K.UNRETURNED_VALUE, recs[1].index, second.step, argument=p)
            for p in second.params
            if wf.param_var(second.step, p) == first.target
        ]
    for spec, rec in zip((first, second), recs, strict=True):
        if rec.value is not None:
            a.last_run[spec.step] = a.last_value = a.belief[spec.target] = rec.value
            a.produced.add(spec.target)
    for spec in path[k - 1 :]:
        if spec.step not in a.last_run:  # a call a transient fault refused: sent again
            yield from a.step(spec)
    yield from a.submit(a.own_answer())
    return a.done()
