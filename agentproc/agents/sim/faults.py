"""Simulated agents whose faults are known, so the monitor can be proven against truth.

A simulated agent is a generator: it yields ``(tool name, arguments)`` requests,
is sent back the :class:`~agentproc.workflow.CallRecord` of each, and returns the
list of labels its behaviour must produce (the *truth*). It reads values from
tool results, as a real agent does, so a wrong value it produces is carried into
later arguments.

- ``sim:oracle`` executes the reference trace.
- ``sim:batched`` executes it several steps to a message, faithful under the order policy
  the monitor holds it to (:func:`~agentproc.agents.sim.batches.batched`).
- ``sim:<label>`` injects one fault of that kind at a seeded random place. The
  truth includes what the fault causes downstream: ``wrong_argument`` with
  ``cause: propagated`` on every later argument that carries a wrong produced
  value, and a ``wrong_answer`` with ``cause: propagated`` when the error reaches
  the answer; ``premature_finish`` brings ``skipped_step`` for every step left
  out and a propagated ``wrong_answer`` when the chain's last value is not the
  answer; skipping the last step brings ``premature_finish``; the self-correcting
  variant of ``repeated_step`` and the wrong-first variant of ``answer_revised``
  bring the initial ``wrong_argument`` or ``wrong_answer``.
- ``sim:wrong_branch`` (a branched workflow) takes the other branch at one step with a
  condition; ``sim:ignores_exit`` carries on past the exit that fires
  (:mod:`agentproc.agents.sim.branches`).
- ``sim:unreturned_value`` sends a step and the next one, which reads its output, in
  one message (an ``unreturned_value`` under the ``dependency`` order policy;
  :mod:`agentproc.agents.sim.batches`).
- ``sim:decay`` slips with a probability that grows with step position and
  look-back distance (see :func:`decay`); under prose rendering it also skips
  steps (:data:`PROSE_SKIP`), a known effect for testing comparisons.
- ``sim:selfcond`` slips more once its history holds an error (a wrong pre-filled call or
  its own slip): a known self-conditioning effect
  (:mod:`agentproc.agents.sim.conditioning`).

A simulated agent ends its own episode (it is not stopped at its first answer).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from agentproc.agents.sim.batches import batched, unreturned_value
from agentproc.agents.sim.beliefs import Agent, K, Policy, oracle, pick, place, twins
from agentproc.agents.sim.branches import ignores_exit, wrong_branch
from agentproc.agents.sim.conditioning import self_conditioning
from agentproc.agents.sim.wrong import unsupported, wrong_value
from agentproc.errors import unknown_key
from agentproc.labelling import Label, LabelKind
from agentproc.labelling.order import OrderPolicy
from agentproc.workflow import Workflow

Factory = Callable[[Workflow, random.Random], Policy]


def hallucinated_call(wf: Workflow, rng: random.Random) -> Policy:
    """Call a tool that was not offered, at a random point, then go on."""
    a = Agent(wf)
    n = len(a.path)
    where = pick(rng, n + 1)
    names = [f"step_{wf.n_steps + 1}", "step_0", "compute", "get_value", "calculator", "finish"]
    name = names[pick(rng, len(names))]
    for k, spec in enumerate(a.path):
        if k == where:
            rec = yield (name, {"x": 1})
            a.truth.append(Label(K.HALLUCINATED_CALL, rec.index))
        yield from a.step(spec)
    if where == n:
        rec = yield (name, {"value": a.own_answer()})
        a.truth.append(Label(K.HALLUCINATED_CALL, rec.index))
    yield from a.submit(a.own_answer())
    return a.done()


_BAD_ARGUMENTS: tuple[Callable[[dict[str, Any]], str | dict[str, Any]], ...] = (
    lambda args: "{" + ", ".join(f"{k}: {v}" for k, v in args.items()),  # not JSON
    lambda args: {k: str(v) for k, v in args.items()},  # strings, not numbers
    lambda args: {**args, "extra": 1},  # an argument the schema does not allow
    lambda args: dict(list(args.items())[:-1]),  # a required argument missing
    lambda args: {"value": next(iter(args.values()))},  # a wrong argument name
    lambda args: "[1, 2]",  # JSON, but not an object
)


_TYPED_BAD: dict[int, Callable[[dict[str, Any]], str | dict[str, Any]]] = {
    1: lambda args: {k: [v] for k, v in args.items()},  # lists, of no type a value has
    3: lambda args: {},  # every argument missing
}
"""On a branched workflow, the malformations of :data:`_BAD_ARGUMENTS` that its types could
accept (a string is a category's name; a left-out argument may be optional)."""


def invalid_arguments(wf: Workflow, rng: random.Random) -> Policy:
    """Send malformed arguments once (a step or the answer), then retry correctly."""
    a = Agent(wf)
    n = len(a.path)
    where = pick(rng, n + 1)
    i = pick(rng, len(_BAD_ARGUMENTS))
    bad = _BAD_ARGUMENTS[i]
    if wf.types is not None:  # a category's name is a string, an argument may be optional
        bad = _TYPED_BAD.get(i, bad)
    if where == n and wf.answer_fields and i == 3:  # a field left out is an answer
        bad = _BAD_ARGUMENTS[2]
    for k, spec in enumerate(a.path):
        if k == where:
            call = (spec.name, bad(a.args(spec)))
            rec = yield call
            while rec.refused == "transient":  # a tool fault: the same call is tried again
                rec = yield call
            a.truth.append(Label(K.INVALID_ARGUMENTS, rec.index, spec.step))
        yield from a.step(spec)
    if where == n:
        rec = yield (wf.finish_tool, bad(a.answer_args(a.own_answer())))
        a.truth.append(Label(K.INVALID_ARGUMENTS, rec.index, None))
    yield from a.submit(a.own_answer())
    return a.done()


def repeated_step(wf: Workflow, rng: random.Random) -> Policy:
    """Execute one step twice: the same call again, or a wrong call then a right one."""
    a = Agent(wf)
    if not a.path:
        return (yield from oracle(wf, rng))
    twin = twins(wf)
    k = place(wf, rng, 1, len(a.path), lambda c: not twin[a.path[c - 1].step])
    correcting = rng.random() < 0.5
    for at, spec in enumerate(a.path, 1):
        if at == k and correcting:
            param, value, cause = wrong_value(a, spec, rng, allow_confusion=False)
            yield from a.step(spec, {param: value}, {param: cause})
        yield from a.step(spec)
        if at == k and not correcting:
            yield from a.step(spec)
    yield from a.submit(a.own_answer())
    return a.done()


def reordered(wf: Workflow, rng: random.Random) -> Policy:
    """Swap two adjacent steps: step k+1 runs just before step k."""
    a = Agent(wf)
    path = a.path
    if len(path) < 2:
        return (yield from oracle(wf, rng))
    twin = twins(wf)
    k = place(wf, rng, 1, len(path) - 1, lambda c: path[c].step not in twin[path[c - 1].step])
    first, second = path[k - 1], path[k]
    order = list(path)
    order[k - 1], order[k] = second, first
    for spec in order:
        rec = yield from a.step(spec)
        if spec is second and first.step > wf.given:  # (a pre-filled step ran before it)
            breaks = first.step in spec.depends_on
            a.truth.append(Label(K.REORDERED, rec.index, spec.step, breaks_dependency=breaks))
    yield from a.submit(a.own_answer())
    return a.done()


def wrong_argument(wf: Workflow, rng: random.Random) -> Policy:
    """Pass one wrong argument (an arithmetic slip or another variable's value)."""
    a = Agent(wf)
    k = 1 + pick(rng, len(a.path))
    for at, spec in enumerate(a.path, 1):
        if at == k and wf.param_vars[spec.step - 1]:
            param, value, cause = wrong_value(a, spec, rng)
            yield from a.step(spec, {param: value}, {param: cause})
        else:
            yield from a.step(spec)
    yield from a.submit(a.own_answer())
    return a.done()


def skipped_step(wf: Workflow, rng: random.Random) -> Policy:
    """Leave one step out; later steps use its right value as if computed in the head."""
    a = Agent(wf)
    if not a.path:
        return (yield from oracle(wf, rng))
    twin = twins(wf)
    steps = [s.step for s in a.path]
    k = place(
        wf, rng, 1, len(steps), lambda c: not any(j > steps[c - 1] for j in twin[steps[c - 1]])
    )
    for at, spec in enumerate(a.path, 1):
        if at != k:
            yield from a.step(spec)
    yield from a.submit(a.own_answer())
    return a.done()


def premature_finish(wf: Workflow, rng: random.Random) -> Policy:
    """Stop after step k < N and submit the last value computed."""
    a = Agent(wf)
    if not a.path:  # an exit fires before any step: nothing to finish early
        return (yield from oracle(wf, rng))
    k = pick(rng, len(a.path))  # the path's first k steps run; k may be 0
    for spec in a.path[:k]:
        yield from a.step(spec)
    yield from a.submit(a.last_answer())
    return a.done()


def missing_answer(wf: Workflow, rng: random.Random) -> Policy:
    """Execute every step and never submit an answer."""
    a = Agent(wf)
    for spec in a.path:
        yield from a.step(spec)
    return a.done()


def wrong_answer(wf: Workflow, rng: random.Random) -> Policy:
    """Execute every step right, then submit a number the chain never produced."""
    a = Agent(wf)
    for spec in a.path:
        yield from a.step(spec)
    yield from a.submit(unsupported(a, rng))
    return a.done()


def answer_revised(wf: Workflow, rng: random.Random) -> Policy:
    """Submit twice: right then right, wrong then right, or right then wrong."""
    a = Agent(wf)
    for spec in a.path:
        yield from a.step(spec)
    right = a.own_answer()
    wrong = unsupported(a, rng)
    first, second = [(right, right), (wrong, right), (right, wrong)][pick(rng, 3)]
    yield from a.submit(first)
    yield from a.submit(second)
    return a.done()


DECAY = {"base": 0.004, "growth": 0.0006, "lookback": 0.15}
"""``sim:decay`` slip probability at step k with farthest operand distance d:
``base + growth * (k - 1)``, times ``1 + lookback * (d - 1)``."""

PROSE_SKIP = 0.03
"""``sim:decay`` under a variant with ``rendering = "prose"`` also skips each step that
does not slip with this probability, drawn from a stream of its own: every other draw
is the one it makes under the numbered list, so the two runs differ only by those
skips (a known effect on faithful accuracy; none on first-answer accuracy, as a
skipped step is computed in the head)."""


def decay(wf: Workflow, rng: random.Random) -> Policy:
    """Slip more often late in the procedure and on far look-backs.

    A slip is an arithmetic error (60%), a look-back confusion (20%), a skipped
    step (10%) or a premature answer (10%). Its truth is the full label list, as
    for the single-fault agents.
    """
    a = Agent(wf)
    prose = wf.variant is not None and wf.variant.rendering == "prose"
    extra = random.Random(repr(rng.getstate())) if prose else None
    for spec in a.path[wf.given :]:
        # The farthest operand within the window (a procedure of format 2 read an input
        # there, at any distance: it is in view all along, the prompt states it).
        d = min(spec.target - min(spec.operand_vars), wf.scenario.params.lookback)
        p = (DECAY["base"] + DECAY["growth"] * (spec.step - 1)) * (1 + DECAY["lookback"] * (d - 1))
        u = rng.random()
        if u >= p:
            if extra is None or extra.random() >= PROSE_SKIP:
                yield from a.step(spec)
            continue
        kind = u / p
        if kind < 0.8:
            param, value, cause = wrong_value(a, spec, rng, allow_confusion=kind >= 0.6)
            yield from a.step(spec, {param: value}, {param: cause})
        elif kind < 0.9:
            continue
        else:
            yield from a.submit(a.last_answer())
            return a.done()
    yield from a.submit(a.own_answer())
    return a.done()


SIM_AGENTS: dict[str, Factory] = {
    "sim:oracle": oracle,
    "sim:batched": batched("listed"),
    "sim:hallucinated_call": hallucinated_call,
    "sim:invalid_arguments": invalid_arguments,
    "sim:repeated_step": repeated_step,
    "sim:reordered": reordered,
    "sim:wrong_argument": wrong_argument,
    "sim:skipped_step": skipped_step,
    "sim:premature_finish": premature_finish,
    "sim:missing_answer": missing_answer,
    "sim:wrong_answer": wrong_answer,
    "sim:answer_revised": answer_revised,
    "sim:unreturned_value": unreturned_value,
    "sim:wrong_branch": wrong_branch,
    "sim:ignores_exit": ignores_exit,
    "sim:decay": decay,
    "sim:selfcond": self_conditioning(),
}
"""Every simulated agent by name (under the ``listed`` order policy: :func:`sim_agent`)."""

BY_ORDER: dict[str, Callable[[OrderPolicy], Factory]] = {"sim:batched": batched}
"""The simulated agents that act by the order policy the monitor holds them to: name ->
the factory under a policy."""
FAITHFUL = ("sim:oracle", "sim:batched")
"""The simulated agents that make no mistake: faithful on every episode, under either
order policy (the self-check proves it)."""

INJECTORS = tuple(n for n in SIM_AGENTS if n.removeprefix("sim:") in {k.value for k in LabelKind})
"""The ``sim:<label>`` agents: one per label kind."""
BRANCH_INJECTORS = ("sim:wrong_branch", "sim:ignores_exit")
"""The injectors of a branched workflow's own faults (on any other, the oracle)."""


def sim_agent(name: str, order: OrderPolicy = "listed") -> Factory:
    """The factory of a simulated agent by name, under the ``order`` policy the monitor
    holds its calls to."""
    if name not in SIM_AGENTS:
        raise unknown_key("agent", name, list(SIM_AGENTS))
    return BY_ORDER[name](order) if name in BY_ORDER else SIM_AGENTS[name]
