"""What every simulated agent shares: its beliefs, the truth it keeps, and the
choice of fault values that the monitor can only read one way."""

from __future__ import annotations

import random
from collections.abc import Generator
from typing import Any

from agentproc.arith import UNDEFINED, Op, apply_units, is_symbol, symbol_units
from agentproc.labelling import Label, LabelKind
from agentproc.workflow import CallRecord, ScenarioStep, Workflow, var_index
from agentproc.workflow.branching import env_of

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
        right = b is not None and fired is not None and self.wf.close(answer, b.exits[fired].answer)
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
        elif rec.refused in ("division_by_zero", "out_of_range"):
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
            p: self.value_of(wf.var_of(p))
            for p in spec.params
            if p not in args and self.value_of(wf.var_of(p)) != UNDEFINED
        }
        if not extra:
            return rec
        filled = {**(override or {}), **{p: self.num(v) for p, v in extra.items()}}
        return (yield from self.step(spec, filled, causes))

    def submit(self, answer: float | int) -> Generator[Request, CallRecord, CallRecord]:
        wf = self.wf
        b = wf.branching
        rec = yield (wf.finish_tool, {wf.finish_argument: answer})
        right = wf.close(answer, wf.answer)
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
            if not right:
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
            was_right = wf.close(self.answers[-1], wf.answer)
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
            return b.exits[b.fired].shown
        return self.num(self.value_of(self.wf.answer_index))

    def last_answer(self) -> Any:
        """An early answer: the last value computed (before any, the second input); on a
        branched workflow, the last one of the answer's type (before any, the correct
        value of the first variable of that type)."""
        wf = self.wf
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
        env = self.env() if b is not None else {}
        for spec in self.path:
            if spec.step not in self.last_run:
                cause = None
                if b is not None and b.conditional(spec.step):
                    own = b.required_on(spec.step, env)
                    cause = "propagated" if own is False else "unsupported"
                label = Label(K.SKIPPED_STEP, None, spec.step, cause=cause, live=spec.live)
                self.truth.append(label)
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
    if wf.branching is None and wf.types is None:
        param = spec.params[pick(rng, len(spec.params))]
    else:  # a branched workflow's: an argument the path gives, a number if there is one
        given = wf.param_vars[spec.step - 1]
        numbers = [p for p, v in given if not is_symbol(wf.correct[v])] or [p for p, _ in given]
        param = numbers[pick(rng, len(numbers))]
    var = wf.var_of(param)
    if is_symbol(wf.correct[var]):
        return _wrong_symbol(a, spec, param, var, rng)
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
            usable = (
                value not in (wf.correct[var], a.value_of(var), 0)
                and not clashes
                and not is_symbol(value)
            )
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


def _wrong_symbol(
    a: Agent, spec: ScenarioStep, param: str, var: int, rng: random.Random
) -> tuple[str, Any, Label]:
    """A wrong category or boolean for one argument, labelled as the monitor reads it: a
    boolean flipped is ``other`` (two values: no confusion); a category no variable holds
    is ``other``, else the nearest variable holding it explains it."""
    wf = a.wf
    right = wf.correct[var]
    label = Label(K.WRONG_ARGUMENT, cause="other", argument=param)
    t = (wf.types or {}).get(wf.var_name(var))
    if t is None or t.type == "boolean":
        return param, not wf.expected[var], label
    names = [n for n in t.choices or () if symbol_units(n) not in (right, a.value_of(var))]
    held = {
        u
        for u in range(1, wf.answer_index + 1)
        for v in (wf.correct[u], a.belief.get(u))
        if v is not None and u != var
    }
    free = [n for n in names if all(symbol_units(n) not in _values(a, u) for u in held)]
    if free:
        return param, free[pick(rng, len(free))], label
    name = names[pick(rng, len(names))]
    code = symbol_units(name)
    u = min((w for w in held if code in _values(a, w)), key=lambda w: (abs(w - var), w))
    cause = "lookback_confusion" if u < spec.target else "stale_output"
    return param, name, label._replace(cause=cause, confused_with=wf.var_name(u))


def _values(a: Agent, var: int) -> set[int]:
    """The values ``var`` holds: its correct one and the agent's."""
    return {a.wf.correct[var], *((a.belief[var],) if var in a.belief else ())}


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


def unsupported(a: Agent, rng: random.Random) -> Any:
    """An answer the agent's chain never produced (nor an exit gives)."""
    wf = a.wf
    if is_symbol(wf.answer):
        t = (wf.types or {}).get(wf.var_name(wf.answer_index))
        if t is None or t.type == "boolean":
            return not wf.to_number(wf.answer)
        exits = {e.answer for e in wf.branching.exits} if wf.branching else set()
        own = a.value_of(wf.answer_index)
        names = [
            n
            for n in t.choices or ()
            if symbol_units(n) not in (wf.answer, own) and symbol_units(n) not in exits
        ]
        return names[pick(rng, len(names))]
    taken = set(wf.correct) | {a.value_of(wf.answer_index)}
    if wf.branching is not None:
        taken |= {e.answer for e in wf.branching.exits}
    while True:
        value = wf.answer + (1 + pick(rng, 50)) * (1 if rng.random() < 0.5 else -1)
        if value not in taken:
            return a.num(value)
