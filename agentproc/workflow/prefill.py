"""Pre-filled steps: the first ``k`` steps already executed, a chosen share of them wrong.

A variant's ``[prefill]`` table (:class:`Prefill`) opens every episode with the first
``k`` steps of the procedure already called and answered, as if the agent had made those
calls itself: the induced self-conditioning design of Sinha et al., "The Illusion of
Diminishing Returns" (arXiv 2509.09677), who pre-fill a model's history with a
controlled share of errors and measure how often it errs from there on.

:func:`plan_prefill` draws the calls (seeded by the variant's seed, the scenario and the
trial). A wrong call holds a slip of its own: one argument off the value the state holds
(a value no variable holds), so the step's output is wrong; later pre-filled calls read
the values the earlier ones returned, so a wrong value is carried forward as the agent's
own mistake would be, and the mock tools' state after the pre-fill is exactly what those
calls produce. :func:`conditioned` is the workflow the agent is judged against from then
on: the pre-filled steps' values stand as their variables' correct values, and every
later step's correct value is computed from them (carrying a given wrong value forward is
correct execution, not the agent's mistake).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from agentproc.arith import BOUND, close
from agentproc.errors import StoredCallError
from agentproc.workflow.calls import read_stored
from agentproc.workflow.runtime import NO_NUMBER, READS_BACK, Workflow
from agentproc.workflow.variant import Variant
from agentproc.workflow.variant_prefill import Prefill

_SLIP_TRIES = 200
"""Draws of a slipped argument before a step is left right (values too few to slip to)."""


@dataclass(frozen=True, slots=True)
class GivenCall:
    """One pre-filled call: the step, its arguments and the value it returned (units)."""

    step: int
    args: dict[str, int]
    """Canonical parameter -> the value passed, in units."""
    value: int
    wrong: bool
    """Whether the call holds a slip of its own (one argument off the state's value)."""


@dataclass(frozen=True, slots=True)
class Plan:
    """The pre-filled calls of one episode, in step order."""

    calls: tuple[GivenCall, ...]

    @property
    def values(self) -> dict[int, int]:
        """Step -> the value its pre-filled call returned."""
        return {c.step: c.value for c in self.calls}

    @property
    def wrong_steps(self) -> tuple[int, ...]:
        """The steps whose call holds a slip of its own."""
        return tuple(c.step for c in self.calls if c.wrong)


def prefill_seed(seed: int, scenario_id: str, trial: int = 0) -> str:
    """The key of an episode's draw (trial 0 draws what a run without trials draws)."""
    tail = f":{trial}" if trial else ""
    return f"agentproc-prefill:{seed}:{scenario_id}{tail}"


def plan_prefill(wf: Workflow, prefill: Prefill, key: str) -> Plan:
    """The pre-filled calls of ``wf`` (seeded by ``key``): the first
    :meth:`Prefill.count` steps, :meth:`Prefill.wrong` of them, drawn at random, with a
    slip of their own. A step where no slip changes the output (a product with a zero)
    stays right, so a plan may hold fewer wrong calls than asked for."""
    rng = random.Random(key)
    k = prefill.count(wf.n_steps)
    order = list(range(1, k + 1))
    rng.shuffle(order)
    chosen = set(order[: prefill.wrong(k)])
    state = list(wf.correct)
    calls = []
    for spec in wf.steps[:k]:
        args = {p: state[wf.param_var(spec.step, p)] for p in spec.params}
        wrong = False
        if spec.step in chosen:
            slipped = _slip(wf, spec.step, state, args, rng)
            wrong = slipped is not None
            args = slipped if slipped is not None else args
        value = spec.compute(args, wf.scale)
        if value is None:  # pragma: no cover - a right call of a valid procedure computes
            raise ValueError(f"step {spec.step} of the pre-fill computes nothing")
        state[spec.target] = value
        calls.append(GivenCall(spec.step, args, value, wrong))
    return Plan(tuple(calls))


def _slip(
    wf: Workflow, step: int, state: list[int], args: dict[str, int], rng: random.Random
) -> dict[str, int] | None:
    """``args`` with one argument slipped: a value no variable holds, whose output differs
    from the right one and leaves every later step computable (``None``: none found)."""
    spec = wf.steps[step - 1]
    right = spec.compute(args, wf.scale)
    taken = set(state[1:]) | set(wf.correct[1:])
    params = list(spec.params)
    for _ in range(_SLIP_TRIES):
        param = params[int(rng.random() * len(params))]
        base = args[param]
        sign = 1 if rng.random() < 0.5 else -1
        value = base + (1 + int(rng.random() * 9)) * sign * max(1, abs(base) // 7)
        if wf.scale > 1 and value % 10 == 0:  # fewer decimals could read as a cut copy
            value += sign
        if value in taken or value == 0:
            continue
        slipped = {**args, param: value}
        out = spec.compute(slipped, wf.scale)
        if out is None or out == right or out in taken or abs(out) > BOUND * wf.scale:
            continue
        after = list(state)
        after[spec.target] = out
        if _downstream(wf, step, after) is not None:
            return slipped
    return None


def _downstream(wf: Workflow, last: int, values: list[int]) -> list[int] | None:
    """``values`` with every step after ``last`` computed from them, or ``None`` when a
    step cannot be (a division by zero, a value out of range)."""
    out = list(values)
    changed = {s.target for s in wf.steps[:last] if out[s.target] != wf.correct[s.target]}
    for spec in wf.steps[last:]:
        if not changed.intersection(spec.operand_vars):
            continue
        value = spec.compute({p: out[wf.param_var(spec.step, p)] for p in spec.params}, wf.scale)
        if value is None or abs(value) > BOUND * wf.scale:
            return None
        if value != wf.correct[spec.target]:
            changed.add(spec.target)
        out[spec.target] = value
    return out


def conditioned(wf: Workflow, given: Mapping[int, int], wrong: tuple[int, ...] = ()) -> Workflow:
    """The workflow an agent is judged against after the pre-fill: steps ``1 .. k`` (the
    keys of ``given``, their returned values) are given, their values the correct ones,
    and every later step's correct value is computed from them.

    Raises:
        ValueError: the given steps are not the first ones, or a later step cannot be
            computed from them (a division by zero).
    """
    k = len(given)
    if sorted(given) != list(range(1, k + 1)) or k >= wf.n_steps:
        raise ValueError("the pre-filled steps must be the first ones, and not all of them")
    values = list(wf.correct)
    for step, value in given.items():
        values[wf.steps[step - 1].target] = value
    correct = _downstream(wf, k, values)
    if correct is None:
        raise ValueError("a step after the pre-fill cannot be computed from its values")
    return replace(wf, **_indexed_values(wf, correct), given=k, given_wrong=wrong)


def _indexed_values(wf: Workflow, correct: list[int]) -> dict[str, Any]:
    """The fields of :class:`Workflow` that follow from the correct values (as
    :func:`~agentproc.workflow.runtime.build_workflow` makes them)."""
    scale, tolerance = wf.scale, wf.tolerance
    expected = tuple(correct) if scale == 1 else tuple(u / scale for u in correct)
    numbers: tuple[Any, ...]
    if scale == 1 or (tolerance == 0.5 and -READS_BACK < min(correct) <= max(correct) < READS_BACK):
        numbers = expected
    else:
        numbers = tuple(
            x if close(x, u, scale, tolerance) else NO_NUMBER
            for x, u in zip(expected, correct, strict=True)
        )
    return {"correct": tuple(correct), "expected": expected, "numbers": numbers}


def given_steps(wf: Workflow, variant: Variant | None) -> int:
    """How many steps an episode of ``wf`` under ``variant`` opens with, pre-filled."""
    if variant is None or variant.prefill is None:
        return 0
    return variant.prefill.count(wf.n_steps)


def stored_prefill(
    wf: Workflow, variant: Variant | None, calls: Sequence[Any]
) -> tuple[Workflow, int]:
    """The workflow a stored episode's agent was judged against (:func:`conditioned` on
    the values its pre-filled calls returned), and how many of its calls were pre-filled:
    the first :func:`given_steps`, one per step in order.

    Raises:
        StoredCallError: a pre-filled call is missing or is not that step's executed call.
    """
    k = given_steps(wf, variant)
    if not k:
        return wf, 0
    if len(calls) < k:
        raise StoredCallError(len(calls), None, f"the episode's {k} pre-filled calls are missing")
    values = {}
    for i, call in enumerate(calls[:k]):
        step, _, refused, _, value, _ = read_stored(call, i, wf.scale, wf.finish_tool)
        if step != i + 1 or value is None or refused is not None:
            raise StoredCallError(i, None, f"not the pre-filled call of step {i + 1}")
        values[i + 1] = value
    try:
        return conditioned(wf, values), k
    except ValueError as exc:
        raise StoredCallError(k - 1, "value", str(exc)) from None
