"""The wrong values a simulated agent's faults put in, each one the monitor can only read
one way: a wrong argument (:func:`wrong_value`: a look-back confusion, a stale output or a
slip; a category or a boolean on a branched workflow) and an answer the agent's chain never
produced (:func:`unsupported`)."""

from __future__ import annotations

import random
from typing import Any

from agentproc.agents.sim.beliefs import Agent, K, calculator, pick
from agentproc.agents.sim.wrong_text import wrong_text
from agentproc.arith import Op, apply_units, is_symbol, symbol_units
from agentproc.labelling import Label
from agentproc.workflow import ScenarioStep, var_index


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
    var = wf.param_var(spec.step, param)
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
    if t.type in ("string", "date"):
        return param, wrong_text(a, spec, param, var, t.type, rng), label
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
    """An answer the agent's chain never produced (nor an exit gives); a multi-field
    answer's: its own answer with one field, drawn, made so (half right)."""
    wf = a.wf
    if wf.answer_fields:
        return _one_field_wrong(a, rng)
    exits = {e.answer for e in wf.branching.exits} if wf.branching else set()
    return _unsupported_value(a, rng, wf.answer_index, wf.answer, exits)


def _unsupported_value(a: Agent, rng: random.Random, var: int, right: int, exits: set[int]) -> Any:
    """A value of variable ``var``'s type that is neither ``right``, the agent's own value
    of it, nor one of ``exits`` (a number: nor any correct value); ``None``: a category
    with no such name."""
    wf = a.wf
    if is_symbol(right):
        t = (wf.types or {}).get(wf.var_name(var))
        if t is None or t.type == "boolean":
            return not wf.to_number(right)
        own = a.value_of(var)
        names = [
            n
            for n in t.choices or ()
            if symbol_units(n) not in (right, own) and symbol_units(n) not in exits
        ]
        return names[pick(rng, len(names))] if names else None
    taken = set(wf.correct) | {a.value_of(var)} | exits
    while True:
        value = right + (1 + pick(rng, 50)) * (1 if rng.random() < 0.5 else -1)
        if value not in taken:
            return a.num(value)


def _one_field_wrong(a: Agent, rng: random.Random) -> dict[str, Any]:
    """The agent's own multi-field answer with one field, drawn, given a value nothing
    it holds supports (the next field when a category's names leave none)."""
    wf = a.wf
    answer = dict(a.own_answer())
    fields = wf.answer_fields
    start = pick(rng, len(fields))
    exits = wf.branching.exits if wf.branching else ()
    for k in range(len(fields)):
        at = (start + k) % len(fields)
        field, var = fields[at]
        others = {e.fields[at] for e in exits if e.fields is not None}
        value = _unsupported_value(a, rng, var, wf.field_answers[at], others)
        if value is not None:
            answer[field] = value
            return answer
    answer.pop(fields[start][0], None)  # no field can be wrong by value: one left out
    return answer
