"""What every simulated agent shares: its beliefs, the truth it keeps, and the
choice of fault values that the monitor can only read one way."""

from __future__ import annotations

import random
from collections.abc import Generator
from typing import Any

from agentproc.arith import Op, apply_units
from agentproc.labelling import Label, LabelKind
from agentproc.workflow import CallRecord, ScenarioStep, Workflow, var_index

K = LabelKind
Request = tuple[str, "str | dict[str, Any]"]
"""A tool call a simulated agent makes: ``(name, arguments)``."""


class Agent:
    """Beliefs and truth bookkeeping shared by every simulated agent."""

    def __init__(self, wf: Workflow) -> None:
        self.wf = wf
        self.belief: dict[int, int] = {v: wf.correct[v] for v in range(1, wf.n_inputs + 1)}
        self.produced: set[int] = set()
        self.last_run: dict[int, int] = {}
        self.truth: list[Label] = []
        self.answers: list[float | int] = []
        self.last_value: int | None = None
        for spec in wf.steps[: wf.given]:  # pre-filled: run, their values as returned
            self.last_run[spec.step] = self.belief[spec.target] = wf.correct[spec.target]
            self.produced.add(spec.target)
            self.last_value = wf.correct[spec.target]

    def num(self, units: int) -> float | int:
        return self.wf.to_number(units)

    def value_of(self, var: int) -> int:
        """What the agent believes ``S{var}`` is (the correct value if never seen)."""
        return self.belief.get(var, self.wf.correct[var])

    def args(self, spec: ScenarioStep, override: dict[str, Any] | None = None) -> dict[str, Any]:
        args = {p: self.num(self.value_of(self.wf.var_of(p))) for p in spec.params}
        args.update(override or {})
        return args

    def step(
        self,
        spec: ScenarioStep,
        override: dict[str, Any] | None = None,
        causes: dict[str, Label] | None = None,
    ) -> Generator[Request, CallRecord, CallRecord]:
        """Call a step tool; record the truth of its arguments and repeat status (a
        pre-filled step is not called: it ran before the agent's first call)."""
        if spec.step <= self.wf.given:
            return CallRecord(-1, spec.name, "", "", spec.step, value=self.last_run[spec.step])
        args = self.args(spec, override)
        rec = yield (spec.name, args)
        while rec.refused == "transient":  # a tool fault: the call is simply tried again
            rec = yield (spec.name, args)
        wf = self.wf
        for p in spec.params:
            var = self.wf.var_of(p)
            if wf.close(args[p], wf.correct[var]):
                continue
            if causes and p in causes:
                self.truth.append(causes[p]._replace(call_index=rec.index, step=spec.step))
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
                    spec, {p: self.num(wf.correct[self.wf.var_of(p)]) for p in spec.params}
                )
            )
        return rec

    def submit(self, answer: float | int) -> Generator[Request, CallRecord, CallRecord]:
        wf = self.wf
        rec = yield (wf.finish_tool, {wf.finish_argument: answer})
        right = wf.close(answer, wf.answer)
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
                cause = "propagated" if own is not None and wf.close(answer, own) else "unsupported"
                self.truth.append(Label(K.WRONG_ANSWER, rec.index, cause=cause))
        else:
            was_right = wf.close(self.answers[-1], wf.answer)
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


def pick(rng: random.Random, n: int) -> int:
    return int(rng.random() * n)


def calculator(wf: Workflow) -> bool:
    """Whether the workflow offers the calculator tool set."""
    return wf.variant is not None and wf.variant.tools == "calculator"


def twins(wf: Workflow) -> dict[int, set[int]]:
    """Step -> the other steps computing the same operation on the same correct values
    (one computation to a calculator)."""
    if wf.var_names:  # a declared workflow (no calculator): no step is a twin
        return {spec.step: set() for spec in wf.steps}
    by: dict[tuple[Op, int, int], set[int]] = {}
    for spec in wf.steps:
        a, b = spec.arguments(wf.correct.__getitem__, wf.scale)
        if spec.operation in (Op.ADD, Op.MUL):
            a, b = min(a, b), max(a, b)
        by.setdefault((spec.operation, a, b), set()).add(spec.step)
    return {k: group - {k} for group in by.values() for k in group}


def placeable(wf: Workflow) -> bool:
    """Calculator mode: whether every injector has a place where its fault reads one way
    by values (a step without a twin to repeat, two adjacent steps that are not twins to
    swap). A procedure of twins alone (``x * x`` over ``[0, 1]`` integers) has none."""
    twin = twins(wf)
    alone = any(not t for t in twin.values())
    swappable = wf.n_steps < 2 or any(k + 1 not in twin[k] for k in range(1, wf.n_steps))
    return alone and swappable


def place(wf: Workflow, rng: random.Random, first: int, count: int, ok: Any) -> int:
    """A seeded place ``first .. first + count - 1`` for a fault. In calculator mode,
    the first place from the drawn one on (cyclically) where ``ok(k)`` holds, so the
    fault reads one way by values; the draw is the same either way."""
    k = first + pick(rng, count)
    if not calculator(wf):
        return k
    for d in range(count):
        c = first + (k - first + d) % count
        if ok(c):
            return c
    return k


def wrong_value(
    a: Agent, spec: ScenarioStep, rng: random.Random, allow_confusion: bool = True
) -> tuple[str, float | int, Label]:
    """A wrong value for one argument of a step that the monitor can only read one way.

    A confusion takes the correct value of another variable: one defined before
    the step (``lookback_confusion``) or the step's own output or a later one
    (``stale_output``), and only a value no other variable holds. A slip is a value
    no variable holds, with all the mode's decimals (so it is no shortened copy).
    """
    wf = a.wf
    param = spec.params[pick(rng, len(spec.params))]
    var = wf.var_of(param)
    everyone = range(1, wf.answer_index + 1)
    taken = set(wf.correct[1:]) | {a.belief[u] for u in a.produced}
    if allow_confusion and rng.random() < 0.5:
        choices = []
        for u in everyone:
            if u == var:
                continue
            value = wf.correct[u]
            clashes = [
                w
                for w in everyone
                if w != u and w != var and (wf.correct[w] == value or a.belief.get(w) == value)
            ]
            usable = value not in (wf.correct[var], a.value_of(var), 0) and not clashes
            if usable and not _computes_another(a, spec, param, value):
                choices.append(u)
        if choices:
            u = choices[pick(rng, len(choices))]
            cause = "lookback_confusion" if u < spec.target else "stale_output"
            return (
                param,
                a.num(wf.correct[u]),
                Label(K.WRONG_ARGUMENT, cause=cause, argument=param, confused_with=wf.var_name(u)),
            )
    base = a.value_of(var)
    for tries in range(200):
        delta = (1 + pick(rng, 9)) * (1 if rng.random() < 0.5 else -1) * max(1, abs(base) // 7 or 1)
        value = base + delta
        if wf.scale > 1 and value % 10 == 0:  # fewer decimals could read as a cut copy
            value += 1 if delta > 0 else -1
        # Calculator mode asks for a value whose call and result read one way; past
        # 100 tries (tiny integer ranges) any distinct value will do.
        clear = tries >= 100 or not _computes_another(a, spec, param, value)
        if value not in taken and value != 0 and clear:
            return param, a.num(value), Label(K.WRONG_ARGUMENT, cause="other", argument=param)
    raise RuntimeError("no distinct wrong value found")  # pragma: no cover - values are sparse


def _computes_another(a: Agent, spec: ScenarioStep, param: str, value: int) -> bool:
    """Calculator mode: whether the call with ``param`` replaced by ``value`` would read
    as a right computation of another step, or produce a value another variable holds
    (then the truth of the call or of a later one could not be told by values)."""
    wf = a.wf
    if not calculator(wf):
        return False
    x, y = spec.arguments(lambda v: value if f"S{v}" == param else a.value_of(v), wf.scale)
    result = apply_units(spec.operation, x, y, wf.scale)
    if result is not None and result in set(wf.correct[1:]) | set(a.belief.values()):
        return True  # its result would pass for another variable's value downstream
    for other in wf.steps:
        if other.step == spec.step or other.op is not spec.op:
            continue
        left = var_index(other.operands[0])
        pairs = [(x, y), (y, x)] if other.op in (Op.ADD, Op.MUL) else [(x, y)]
        for p, q in pairs:
            if other.constant is None:
                right_holds = _holds(a, var_index(other.operands[-1]), q)
            else:
                right_holds = q == other.arguments(wf.correct.__getitem__, wf.scale)[1]
            if _holds(a, left, p) and right_holds:
                return True
    return False


def _holds(a: Agent, var: int, units: int) -> bool:
    return units in (a.wf.correct[var], a.belief.get(var))


def unsupported(a: Agent, rng: random.Random) -> float | int:
    wf = a.wf
    taken = set(wf.correct) | {a.value_of(wf.answer_index)}
    while True:
        value = wf.answer + (1 + pick(rng, 50)) * (1 if rng.random() < 0.5 else -1)
        if value not in taken:
            return a.num(value)
