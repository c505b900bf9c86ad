"""Simulated agents whose faults are known, so the monitor can be proven against truth.

A simulated agent is a generator: it yields ``(tool name, arguments)`` requests,
is sent back the :class:`~agentproc.types.CallRecord` of each, and returns the
list of labels its behaviour must produce (the *truth*). It reads values from
tool results, as a real agent does, so a wrong value it produces is carried into
later arguments.

- ``sim:oracle`` executes the reference trace.
- ``sim:<label>`` injects one fault of that kind at a seeded random place. The
  truth includes what the fault causes downstream: ``wrong_argument`` with
  ``cause: propagated`` on every later argument that carries a wrong produced
  value, and a ``wrong_answer`` with ``cause: propagated`` when the error reaches
  the answer; ``premature_finish`` brings ``skipped_step`` for every step left
  out and a propagated ``wrong_answer`` when the chain's last value is not the
  answer; skipping the last step brings ``premature_finish``; the self-correcting
  variant of ``repeated_step`` and the wrong-first variant of ``answer_revised``
  bring the initial ``wrong_argument`` or ``wrong_answer``.
- ``sim:decay`` slips with a probability that grows with step position and
  look-back distance (see :func:`decay`).

A simulated agent ends its own episode (it is not stopped at its first answer).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Generator
from typing import Any

from agentproc.arith import close, to_units
from agentproc.errors import unknown_key
from agentproc.types import CallRecord, Label, LabelKind
from agentproc.workflow import StepSpec, Workflow, var_index

K = LabelKind
Request = tuple[str, "str | dict[str, Any]"]
Policy = Generator[Request, CallRecord, list[Label]]
"""A simulated agent: yields requests, receives records, returns its truth."""
Factory = Callable[[Workflow, random.Random], Policy]


class _Agent:
    """Beliefs and truth bookkeeping shared by every simulated agent."""

    def __init__(self, wf: Workflow) -> None:
        self.wf = wf
        self.belief: dict[int, int] = {1: wf.correct[1], 2: wf.correct[2]}
        self.produced: set[int] = set()
        self.last_run: dict[int, int] = {}
        self.truth: list[Label] = []
        self.answers: list[float | int] = []
        self.last_value: int | None = None

    def num(self, units: int) -> float | int:
        return self.wf.to_number(units)

    def value_of(self, var: int) -> int:
        """What the agent believes ``S{var}`` is (the correct value if never seen)."""
        return self.belief.get(var, self.wf.correct[var])

    def args(self, spec: StepSpec, override: dict[str, Any] | None = None) -> dict[str, Any]:
        args = {p: self.num(self.value_of(var_index(p))) for p in spec.params}
        args.update(override or {})
        return args

    def step(
        self,
        spec: StepSpec,
        override: dict[str, Any] | None = None,
        causes: dict[str, Label] | None = None,
    ) -> Generator[Request, CallRecord, CallRecord]:
        """Call a step tool; record the truth of its arguments and repeat status."""
        args = self.args(spec, override)
        rec = yield (spec.name, args)
        wf = self.wf
        for p in spec.params:
            var = var_index(p)
            if close(args[p], wf.correct[var], wf.scale):
                continue
            if causes and p in causes:
                self.truth.append(_at(causes[p], rec.index, spec.step))
            else:
                self.truth.append(
                    Label(K.WRONG_ARGUMENT, rec.index, spec.step, cause="propagated", argument=p)
                )
        if rec.value is not None:
            right = wf.correct[spec.target]
            if spec.step in self.last_run:
                fixed = self.last_run[spec.step] != right and rec.value == right
                self.truth.append(
                    Label(K.REPEATED_STEP, rec.index, spec.step, self_correction=fixed)
                )
            self.last_run[spec.step] = rec.value
            self.belief[spec.target] = rec.value
            self.produced.add(spec.target)
            self.last_value = rec.value
        elif rec.refused in ("division_by_zero", "out_of_range"):
            # A carried error divided by zero or blew up: retry with the procedure's values.
            return (
                yield from self.step(
                    spec, {p: self.num(wf.correct[var_index(p)]) for p in spec.params}
                )
            )
        return rec

    def submit(self, answer: float | int) -> Generator[Request, CallRecord, CallRecord]:
        wf = self.wf
        rec = yield (wf.finish_tool, {wf.finish_argument: answer})
        right = close(answer, wf.answer, wf.scale)
        if wf.n_steps not in self.last_run:
            missing = wf.n_steps - len(self.last_run)
            self.truth.append(Label(K.PREMATURE_FINISH, rec.index, missing_steps=missing))
        if not self.answers:
            if not right:
                own = (
                    self.belief.get(wf.answer_index)
                    if wf.answer_index in self.produced
                    else self.last_value
                )
                cause = (
                    "propagated"
                    if own is not None and close(answer, own, wf.scale)
                    else "unsupported"
                )
                self.truth.append(Label(K.WRONG_ANSWER, rec.index, cause=cause))
        else:
            was_right = close(self.answers[-1], wf.answer, wf.scale)
            self.truth.append(
                Label(K.ANSWER_REVISED, rec.index, self_correction=(not was_right) and right)
            )
        self.answers.append(answer)
        return rec

    def own_answer(self) -> float | int:
        return self.num(self.value_of(self.wf.answer_index))

    def done(self) -> list[Label]:
        """Add the episode-level truth and return it all."""
        for spec in self.wf.steps:
            if spec.step not in self.last_run:
                self.truth.append(Label(K.SKIPPED_STEP, None, spec.step, live=spec.live))
        if not self.answers:
            self.truth.append(Label(K.MISSING_ANSWER))
        return self.truth


def _at(label: Label, index: int, step: int | None) -> Label:
    return Label(
        label.kind,
        index,
        step,
        cause=label.cause,
        argument=label.argument,
        confused_with=label.confused_with,
        self_correction=label.self_correction,
    )


def oracle(wf: Workflow, rng: random.Random) -> Policy:
    """Execute every step in order with the right values, then submit the answer."""
    a = _Agent(wf)
    for spec in wf.steps:
        yield from a.step(spec)
    yield from a.submit(a.own_answer())
    return a.done()


def _pick(rng: random.Random, n: int) -> int:
    return int(rng.random() * n)


def hallucinated_call(wf: Workflow, rng: random.Random) -> Policy:
    """Call a tool that was not offered, at a random point, then go on."""
    a = _Agent(wf)
    where = _pick(rng, wf.n_steps + 1)
    names = [f"step_{wf.n_steps + 1}", "step_0", "compute", "get_value", "calculator", "finish"]
    name = names[_pick(rng, len(names))]
    for spec in wf.steps:
        if spec.step - 1 == where:
            rec = yield (name, {"x": 1})
            a.truth.append(Label(K.HALLUCINATED_CALL, rec.index))
        yield from a.step(spec)
    if where == wf.n_steps:
        rec = yield (name, {"value": a.own_answer()})
        a.truth.append(Label(K.HALLUCINATED_CALL, rec.index))
    yield from a.submit(a.own_answer())
    return a.done()


_BAD_ARGUMENTS: tuple[Callable[[dict[str, Any]], str | dict[str, Any]], ...] = (
    lambda args: "{" + ", ".join(f"{k}: {v}" for k, v in args.items()),  # not JSON
    lambda args: {k: str(v) for k, v in args.items()},  # strings, not numbers
    lambda args: {**args, "extra": 1},  # an argument the schema does not allow
    lambda args: dict(list(args.items())[:-1]),  # a required argument missing
    lambda args: {"value": list(args.values())[0]},  # a wrong argument name
    lambda args: "[1, 2]",  # JSON, but not an object
)


def invalid_arguments(wf: Workflow, rng: random.Random) -> Policy:
    """Send malformed arguments once (a step or the answer), then retry correctly."""
    a = _Agent(wf)
    where = _pick(rng, wf.n_steps + 1)
    bad = _BAD_ARGUMENTS[_pick(rng, len(_BAD_ARGUMENTS))]
    for spec in wf.steps:
        if spec.step - 1 == where:
            rec = yield (spec.name, bad(a.args(spec)))
            a.truth.append(Label(K.INVALID_ARGUMENTS, rec.index, spec.step))
        yield from a.step(spec)
    if where == wf.n_steps:
        rec = yield (wf.finish_tool, bad({wf.finish_argument: a.own_answer()}))
        a.truth.append(Label(K.INVALID_ARGUMENTS, rec.index, None))
    yield from a.submit(a.own_answer())
    return a.done()


def repeated_step(wf: Workflow, rng: random.Random) -> Policy:
    """Execute one step twice: the same call again, or a wrong call then a right one."""
    a = _Agent(wf)
    k = 1 + _pick(rng, wf.n_steps)
    correcting = rng.random() < 0.5
    for spec in wf.steps:
        if spec.step == k and correcting:
            param, value, cause = _wrong_value(a, spec, rng, allow_confusion=False)
            yield from a.step(spec, {param: value}, {param: cause})
        yield from a.step(spec)
        if spec.step == k and not correcting:
            yield from a.step(spec)
    yield from a.submit(a.own_answer())
    return a.done()


def reordered(wf: Workflow, rng: random.Random) -> Policy:
    """Swap two adjacent steps: step k+1 runs just before step k."""
    a = _Agent(wf)
    if wf.n_steps < 2:
        return (yield from oracle(wf, rng))
    k = 1 + _pick(rng, wf.n_steps - 1)
    order = [s for s in wf.steps]
    order[k - 1], order[k] = order[k], order[k - 1]
    for spec in order:
        rec = yield from a.step(spec)
        if spec.step == k + 1:
            a.truth.append(
                Label(K.REORDERED, rec.index, k + 1, breaks_dependency=k in spec.depends_on)
            )
    yield from a.submit(a.own_answer())
    return a.done()


def _wrong_value(
    a: _Agent, spec: StepSpec, rng: random.Random, allow_confusion: bool = True
) -> tuple[str, float | int, Label]:
    """A wrong value for one argument of a step that the monitor can only read one way."""
    wf = a.wf
    param = spec.params[_pick(rng, len(spec.params))]
    var = var_index(param)
    taken = {wf.correct[u] for u in range(1, spec.target)} | {
        a.belief[u] for u in a.produced if u < spec.target
    }
    if allow_confusion and rng.random() < 0.5:
        choices = []
        for u in range(1, spec.target):
            if u == var:
                continue
            value = wf.correct[u]
            clashes = [
                w
                for w in range(1, spec.target)
                if w != u and w != var and (wf.correct[w] == value or a.belief.get(w) == value)
            ]
            if value not in (wf.correct[var], a.value_of(var), 0) and not clashes:
                choices.append(u)
        if choices:
            u = choices[_pick(rng, len(choices))]
            return (
                param,
                a.num(wf.correct[u]),
                Label(
                    K.WRONG_ARGUMENT,
                    cause="lookback_confusion",
                    argument=param,
                    confused_with=f"S{u}",
                ),
            )
    base = a.value_of(var)
    for _ in range(100):
        delta = (
            (1 + _pick(rng, 9)) * (1 if rng.random() < 0.5 else -1) * max(1, abs(base) // 7 or 1)
        )
        value = base + delta
        if value not in taken and value != 0:
            return param, a.num(value), Label(K.WRONG_ARGUMENT, cause="other", argument=param)
    raise RuntimeError("no distinct wrong value found")  # pragma: no cover - values are sparse


def wrong_argument(wf: Workflow, rng: random.Random) -> Policy:
    """Pass one wrong argument (an arithmetic slip or another variable's value)."""
    a = _Agent(wf)
    k = 1 + _pick(rng, wf.n_steps)
    for spec in wf.steps:
        if spec.step == k:
            param, value, cause = _wrong_value(a, spec, rng)
            yield from a.step(spec, {param: value}, {param: cause})
        else:
            yield from a.step(spec)
    yield from a.submit(a.own_answer())
    return a.done()


def skipped_step(wf: Workflow, rng: random.Random) -> Policy:
    """Leave one step out; later steps use its right value as if computed in the head."""
    a = _Agent(wf)
    k = 1 + _pick(rng, wf.n_steps)
    for spec in wf.steps:
        if spec.step != k:
            yield from a.step(spec)
    yield from a.submit(a.own_answer())
    return a.done()


def premature_finish(wf: Workflow, rng: random.Random) -> Policy:
    """Stop after step k < N and submit the last value computed."""
    a = _Agent(wf)
    k = _pick(rng, wf.n_steps)  # steps 1..k run; k may be 0
    for spec in wf.steps[:k]:
        yield from a.step(spec)
    last = a.num(a.last_value) if a.last_value is not None else a.num(wf.correct[2])
    yield from a.submit(last)
    return a.done()


def missing_answer(wf: Workflow, rng: random.Random) -> Policy:
    """Execute every step and never submit an answer."""
    a = _Agent(wf)
    for spec in wf.steps:
        yield from a.step(spec)
    return a.done()


def _unsupported(a: _Agent, rng: random.Random) -> float | int:
    wf = a.wf
    taken = set(wf.correct) | {a.value_of(wf.answer_index)}
    while True:
        value = wf.answer + (1 + _pick(rng, 50)) * (1 if rng.random() < 0.5 else -1)
        if value not in taken:
            return a.num(value)


def wrong_answer(wf: Workflow, rng: random.Random) -> Policy:
    """Execute every step right, then submit a number the chain never produced."""
    a = _Agent(wf)
    for spec in wf.steps:
        yield from a.step(spec)
    yield from a.submit(_unsupported(a, rng))
    return a.done()


def answer_revised(wf: Workflow, rng: random.Random) -> Policy:
    """Submit twice: right then right, wrong then right, or right then wrong."""
    a = _Agent(wf)
    for spec in wf.steps:
        yield from a.step(spec)
    right = a.own_answer()
    wrong = _unsupported(a, rng)
    first, second = [(right, right), (wrong, right), (right, wrong)][_pick(rng, 3)]
    yield from a.submit(first)
    yield from a.submit(second)
    return a.done()


DECAY = {"base": 0.004, "growth": 0.0006, "lookback": 0.15}
"""``sim:decay`` slip probability at step k with farthest operand distance d:
``base + growth * (k - 1)``, times ``1 + lookback * (d - 1)``."""


def decay(wf: Workflow, rng: random.Random) -> Policy:
    """Slip more often late in the procedure and on far look-backs.

    A slip is an arithmetic error (60%), a look-back confusion (20%), a skipped
    step (10%) or a premature answer (10%). Its truth is the full label list, as
    for the single-fault agents.
    """
    a = _Agent(wf)
    for spec in wf.steps:
        d = spec.target - min(spec.operands)
        p = (DECAY["base"] + DECAY["growth"] * (spec.step - 1)) * (1 + DECAY["lookback"] * (d - 1))
        u = rng.random()
        if u >= p:
            yield from a.step(spec)
            continue
        kind = u / p
        if kind < 0.8:
            param, value, cause = _wrong_value(a, spec, rng, allow_confusion=kind >= 0.6)
            yield from a.step(spec, {param: value}, {param: cause})
        elif kind < 0.9:
            continue
        else:
            last = a.num(a.last_value) if a.last_value is not None else a.num(wf.correct[2])
            yield from a.submit(last)
            return a.done()
    yield from a.submit(a.own_answer())
    return a.done()


SIM_AGENTS: dict[str, Factory] = {
    "sim:oracle": oracle,
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
    "sim:decay": decay,
}
"""Every simulated agent by name."""

INJECTORS = tuple(n for n in SIM_AGENTS if n.removeprefix("sim:") in {k.value for k in LabelKind})
"""The ``sim:<label>`` agents: one per label kind."""


def sim_agent(name: str) -> Factory:
    """The factory of a simulated agent by name."""
    if name not in SIM_AGENTS:
        raise unknown_key("agent", name, list(SIM_AGENTS))
    return SIM_AGENTS[name]


__all__ = ["INJECTORS", "SIM_AGENTS", "Policy", "sim_agent", "to_units"]
