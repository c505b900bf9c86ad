"""The wrong ids and dates a simulated agent's faults put in: plausible, and readable one
way only (``other``: a value no variable holds). A wrong date is the right one a day or
a few off; a wrong id is another record's key on the instance (its tool then returns that
record's values), or, where no other record will do, the right id with one character
changed, which is no record (its tool refuses it)."""

from __future__ import annotations

import random

from agentproc.agents.sim.beliefs import Agent, pick
from agentproc.arith import symbol_units
from agentproc.declared import formula
from agentproc.declared.dates import shift
from agentproc.workflow import ScenarioStep


def wrong_text(
    a: Agent, spec: ScenarioStep, param: str, var: int, kind: str, rng: random.Random
) -> str:
    """A wrong ``string`` or ``date`` for ``param`` (variable ``var``) that no variable
    holds, as the agent could see them."""
    wf = a.wf
    right = str(wf.expected[var])
    held = {v for u in range(1, wf.answer_index + 1) for v in _values(a, u)}

    def free(text: str) -> bool:
        return symbol_units(text) not in held

    if kind == "date":
        offsets = [d for d in (1, -1, 2, -2, 3, -3, 7, -7) if free(shift(right, d))]
        offsets = offsets or [d for d in range(8, 400) if free(shift(right, d))]
        return shift(right, offsets[pick(rng, min(len(offsets), 4))])
    others = [k for k in _record_keys(spec, param) if k != right and free(k)]
    if others:
        return others[pick(rng, len(others))]
    for _ in range(100):
        at = pick(rng, len(right))
        c = right[at]
        pool = "0123456789" if c.isdigit() else "ABCDEFGHIJKLMNOPQRSTUVWXYZ" if c.isupper() else ""
        if pool:
            text = right[:at] + pool[pick(rng, len(pool))] + right[at + 1 :]
            if text != right and free(text):
                return text
    return right + "-X"


def _record_keys(spec: ScenarioStep, param: str) -> list[str]:
    """The keys of the records a look-up of ``spec`` reads by ``param``, on the instance."""
    tree = spec.tree
    if tree is None:
        return []
    return [
        str(k)
        for look in formula.lookups(tree)
        if look.key == formula.Var(param) and look.rows is not None
        for k, _ in look.rows
    ]


def _values(a: Agent, var: int) -> set[int]:
    """The values ``var`` holds: its correct one and the agent's."""
    return {a.wf.correct[var], *((a.belief[var],) if var in a.belief else ())}
