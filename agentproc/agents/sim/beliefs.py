"""What every simulated agent shares: its beliefs, the truth it keeps, the oracle every
injector falls back on, and the choice of a fault's place that the monitor can only read
one way (the wrong values themselves are in :mod:`agentproc.agents.sim.wrong`)."""

from __future__ import annotations

import random
from collections.abc import Generator
from typing import Any

from agentproc.arith import UNDEFINED, Op
from agentproc.labelling import Label, LabelKind
from agentproc.workflow import CallRecord, ScenarioStep, Workflow
from agentproc.workflow.declared.branching import env_of

K = LabelKind
Request = tuple[str, "str | dict[str, Any]"]
"""A tool call a simulated agent makes: ``(name, arguments)``."""
Policy = Generator[Request, CallRecord, list[Label]]
"""A simulated agent: yields requests, receives records, returns its truth."""


class Agent:
    """Beliefs and truth bookkeeping shared by every simulated agent."""

    def __init__(self, wf: Workflow) -> None:
        self.wf = wf
        self.belief: dict[int, int] = {v: wf.correct[v] for v in range(1, wf.n_inputs + 1)}
        self.produced: set[int] = set()
        self.last_run: dict[int, int] = {}
        self.truth: list[Label] = []
        self.answers: list[Any] = []
        self.last_value: int | None = None
        skip = wf.skip
        self.path = [s for s in wf.steps if s.step not in skip]
        """The steps the instance requires, in listed order (every step but on a
        branched workflow)."""
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
        """The arguments of a step: the value of each variable it reads that the path
        computes (a branch not taken passes nothing on), then ``override``."""
        args = {p: self.num(self.value_of(var)) for p, var in self.wf.param_vars[spec.step - 1]}
        args.update(override or {})
        return args

    def env(self) -> dict[str, Any]:
        """Every variable's value as the agent holds it (a branched workflow's
        conditions read it, as the monitor does)."""
        wf = self.wf
        return env_of(wf.var_names, self.value_of, wf.scale)

    def exit_cause(self, answer: Any) -> str:
        """``propagated`` when an exit firing on the agent's own values gives ``answer``."""
        b = self.wf.branching
        fired = None if b is None else b.exit_on(self.env())
        right = (
            b is not None
            and fired is not None
            and self.wf.answer_is(answer, self.wf.exit_answer(b.exits[fired]))
        )
        return "propagated" if right else "unsupported"

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
        wf = self.wf
        b = wf.branching
        unneeded = b is not None and spec.step in b.skip and spec.step not in self.last_run
        cause = "propagated" if unneeded and b and b.required_on(spec.step, self.env()) else None
        rec = yield (spec.name, args)
        while rec.refused == "transient":  # a tool fault: the call is simply tried again
            rec = yield (spec.name, args)
        if rec.refused == "invalid_arguments" and b is not None:
            return (yield from self._fill(spec, rec, args, override, causes))
        for p, var in wf.param_vars[spec.step - 1]:
            if wf.close(args[p], wf.correct[var]):
                continue
            if causes and p in causes:
                self.truth.append(causes[p]._replace(call_index=rec.index, step=spec.step))
            else:
                self.truth.append(
                    Label(K.WRONG_ARGUMENT, rec.index, spec.step, cause="propagated", argument=p)
                )
        if rec.value is not None and unneeded and b is not None:
            self.truth.append(
                Label(
                    K.UNNEEDED_STEP,
                    rec.index,
                    spec.step,
                    cause=cause or "unsupported",
                    reason=b.reason(spec.step),
                )
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
        elif rec.refused in ("division_by_zero", "out_of_range", "unknown_key"):
            # A carried error divided by zero or blew up: retry with the procedure's values.
            return (
                yield from self.step(
                    spec, {p: self.num(wf.correct[v]) for p, v in wf.param_vars[spec.step - 1]}
                )
            )
        return rec

    def _fill(
        self,
        spec: ScenarioStep,
        rec: CallRecord,
        args: dict[str, Any],
        override: dict[str, Any] | None,
        causes: dict[str, Label] | None,
    ) -> Generator[Request, CallRecord, CallRecord]:
        """A branched workflow's step refused for an optional argument its own values make
        it read (a branch its mistake chose): ``invalid_arguments``, then the call again
        with every variable it reads that has a value (none left: the step is given up)."""
        self.truth.append(Label(K.INVALID_ARGUMENTS, rec.index, spec.step))
        wf = self.wf
        extra = {
            p: self.value_of(wf.param_var(spec.step, p))
            for p in spec.params
            if p not in args and self.value_of(wf.param_var(spec.step, p)) != UNDEFINED
        }
        if not extra:
            return rec
        filled = {**(override or {}), **{p: self.num(v) for p, v in extra.items()}}
        return (yield from self.step(spec, filled, causes))

    def answer_args(self, answer: Any) -> dict[str, Any]:
        """The finish call's arguments: the answer, or a multi-field answer's fields."""
        return dict(answer) if self.wf.answer_fields else {self.wf.finish_argument: answer}

    def submit(self, answer: Any) -> Generator[Request, CallRecord, CallRecord]:
        wf = self.wf
        b = wf.branching
        rec = yield (wf.finish_tool, self.answer_args(answer))
        right = wf.answer_is(answer, wf.expected_answer)
        last = wf.last_step
        if last is not None and last not in self.last_run:
            if b is None:
                missing, cause = wf.n_steps - len(self.last_run), None
            else:
                missing = sum(s not in self.last_run for s in b.steps)
                cause = self.exit_cause(answer)
            self.truth.append(
                Label(K.PREMATURE_FINISH, rec.index, cause=cause, missing_steps=missing)
            )
        if not self.answers:
            if not right and wf.answer_fields:
                self.truth += field_truth(self, rec.index, answer)
            elif not right:
                own = (
                    self.belief.get(wf.answer_index)
                    if wf.answer_index in self.produced
                    else self.last_value
                )
                cause = "propagated" if own is not None and wf.close(answer, own) else "unsupported"
                if b is not None and cause == "unsupported":
                    cause = self.exit_cause(answer)
                self.truth.append(Label(K.WRONG_ANSWER, rec.index, cause=cause))
        else:
            was_right = wf.answer_is(self.answers[-1], wf.expected_answer)
            self.truth.append(
                Label(K.ANSWER_REVISED, rec.index, self_correction=(not was_right) and right)
            )
        self.answers.append(answer)
        return rec

    def own_answer(self) -> Any:
        """The answer as the agent holds it: its value of the answer variable, or the
        answer of the exit that fires on the instance."""
        b = self.wf.branching
        if b is not None and b.fired is not None:
            shown = b.exits[b.fired].shown
            return dict(shown) if self.wf.answer_fields else shown
        return self.chain_answer()

    def chain_answer(self) -> Any:
        """Its own value of the answer variable (a multi-field answer's: of each field
        that has one)."""
        if self.wf.answer_fields:
            given = {f: self.num(self.value_of(v)) for f, v in self.wf.answer_fields}
            return {f: v for f, v in given.items() if v is not None}
        return self.num(self.value_of(self.wf.answer_index))

    def last_answer(self) -> Any:
        """An early answer: the last value computed (before any, the second input); on a
        branched workflow, the last one of the answer's type (before any, the correct
        value of the first variable of that type)."""
        wf = self.wf
        if wf.answer_fields:  # the fields it has computed so far
            produced = {f: v for f, v in wf.answer_fields if v in self.produced}
            return {f: self.num(self.belief[v]) for f, v in produced.items()}
        if wf.types is None:
            last = self.last_value if self.last_value is not None else wf.correct[2]
            return self.num(last)
        t = wf.types.get(wf.var_name(wf.answer_index))
        shown = [self.num(v) for v in reversed(self.last_run.values())]
        shown += [self.num(u) for u in wf.correct[1:]]
        for value in shown:
            if t is None and not isinstance(value, bool | str | None):
                return value
            if t is not None and t.type == "boolean" and isinstance(value, bool):
                return value
            if t is not None and t.type == "category" and value in (t.choices or ()):
                return value
        return self.own_answer()

    def done(self) -> list[Label]:
        """Add the episode-level truth and return it all."""
        b = self.wf.branching
        env: dict[str, Any] | None = None  # read only for a conditional step not run
        for spec in self.path:
            if spec.step not in self.last_run:
                cause = None
                if b is not None and b.conditional(spec.step):
                    env = self.env() if env is None else env
                    own = b.required_on(spec.step, env)
                    cause = "propagated" if own is False else "unsupported"
                label = Label(K.SKIPPED_STEP, None, spec.step, cause=cause, live=spec.live)
                self.truth.append(label)
        if not self.answers:
            self.truth.append(Label(K.MISSING_ANSWER))
        return self.truth


def field_truth(a: Agent, index: int, answer: Any) -> list[Label]:
    """A multi-field first answer's truth: a ``wrong_answer`` per wrong field, its cause
    from the agent's own values (its value of the field's variable, or an exit that fires
    on them), as for a single answer."""
    wf = a.wf
    b = wf.branching
    fired = None if b is None else b.exit_on(a.env())
    own_exit = None if fired is None else wf.exit_answer(b.exits[fired])  # type: ignore[union-attr]
    out = []
    for k, ((field, var), right) in enumerate(zip(wf.answer_fields, wf.field_answers, strict=True)):
        got = answer.get(field)
        if got is not None and wf.close(got, right):
            continue
        fallback = a.last_value if var == wf.answer_index else None
        own = a.belief.get(var) if var in a.produced else fallback
        carried = got is not None and (
            (own is not None and wf.close(got, own))
            or (isinstance(own_exit, tuple) and wf.close(got, own_exit[k]))
        )
        cause = "propagated" if carried else "unsupported"
        out.append(Label(K.WRONG_ANSWER, index, cause=cause, field=field))
    return out


def oracle(wf: Workflow, rng: random.Random) -> Policy:
    """Execute every step in order with the right values, then submit the answer."""
    a = Agent(wf)
    for spec in a.path:
        yield from a.step(spec)
    yield from a.submit(a.own_answer())
    return a.done()


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
