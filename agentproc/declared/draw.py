"""Instances of a declared workflow: inputs drawn, every step's value computed. Pure.

Each instance draws its inputs (seeded), evaluates every step's formula exactly and
rounds it to the step's decimals, half away from zero, in thousandths
(:data:`SCALE`), as the mock tools will; a later step reads the rounded value. An
instance that divides by zero, has a value beyond ``|v| <= 1e12``, whose answer does
not move both ways with some input (moved 1% down and up, a choice to its neighbouring
choices: :mod:`agentproc.declared.rules`), or has a step equal to an input
or an earlier step is drawn again; after :data:`ATTEMPTS` draws, one error names the
step that failed most. A step that equals an input or an earlier step on more than
half the :data:`~agentproc.declared.paths.PROBE` probe draws that require it
is refused when the file is read (:func:`check_instance_identities`).

What holds whatever the inputs is checked once, before any draw, by
:func:`agentproc.declared.identities.check_identities`; it reads
:func:`probe_draws` where it cannot prove what it finds.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

from agentproc.arith import BOUND, SCALE, round_units
from agentproc.declared import formula_values
from agentproc.declared.drawn_tables import draw_records, needs_records
from agentproc.declared.file import MAX_DECIMALS, DeclaredWorkflow, InputSpec
from agentproc.declared.paths import (
    PROBE,
    DrawFailure,
    Walk,
    draw_typed,
    path_name,
    walk,
)
from agentproc.declared.rules import (
    MAX_IDENTITY_SHARE,
    answer_of,
    identities,
    identity_shares,
    moves,
)
from agentproc.errors import InputError

UNITS = SCALE["decimal"]
"""Units per whole number of a workflow's values: thousandths."""
ATTEMPTS = 100
"""Draws of one instance before the workflow is declared impossible."""


@dataclass(frozen=True)
class WorkflowInstance:
    """One drawn instance: every variable's correct value, in thousandths."""

    index: int
    inputs: tuple[int, ...]
    """Each input's value, in declared order."""
    values: tuple[int, ...]
    """Each step's value, in listed order."""
    required: tuple[bool, ...] | None = None
    """A branched workflow's: each step, whether this instance requires it (``None``:
    every step is)."""
    exit: int | None = None
    """A branched workflow's: the exit that fires (its index in ``wf.exits``), if any."""
    path: str | None = None
    """A branched workflow's: the path's name
    (:func:`~agentproc.declared.paths.path_name`)."""


def single_value(spec: InputSpec) -> Fraction | None:
    """The one value an input can take, or ``None`` when it can take several (or when
    it is not a number)."""
    if spec.kind != "number":
        return None
    if spec.choices is not None:
        distinct = {Fraction(repr(c)) for c in spec.choices}
        return distinct.pop() if len(distinct) == 1 else None
    lo, hi = _grid(spec)
    return Fraction(lo, 10**spec.decimals if spec.range else 1) if lo == hi else None


def _grid(spec: InputSpec) -> tuple[int, int]:
    """A range's or integer range's bounds in grid steps (``10**-decimals`` or ones)."""
    if spec.integers is not None:
        return spec.integers
    step = 10**spec.decimals
    lo, hi = (Fraction(repr(v)) * step for v in spec.range or (0, 0))
    return -((-lo.numerator) // lo.denominator), hi.numerator // hi.denominator


def _draw_input(spec: InputSpec, rng: random.Random) -> int:
    typed = draw_typed(spec, rng)
    if typed is not None:
        return typed
    if spec.choices is not None:
        return round(Fraction(repr(rng.choice(spec.choices))) * UNITS)
    lo, hi = _grid(spec)
    per = 10 ** (MAX_DECIMALS - spec.decimals) if spec.range is not None else UNITS
    return rng.randint(lo, hi) * per


_Failure = DrawFailure


def draw_inputs(wf: DeclaredWorkflow, rng: random.Random) -> tuple[int, ...]:
    """Every input's value in units, hidden ones included (a workflow without drawn
    records or ``key_of`` draws each in turn, as it always has)."""
    if wf.types is not None and needs_records(wf.spec):
        return draw_records(wf, rng, _draw_input)
    return tuple(_draw_input(spec, rng) for spec in wf.input_specs)


def evaluate_steps(wf: DeclaredWorkflow, inputs: tuple[int, ...]) -> tuple[int, ...]:
    """Every step's value in thousandths from these inputs (raises ``DrawFailure``)."""
    return _walk(wf, inputs).values


def _walk(wf: DeclaredWorkflow, inputs: tuple[int, ...]) -> Walk:
    """The values of every step (and, for a workflow of format 2, its path)."""
    if wf.types is not None:
        return walk(wf, inputs)
    env = {n: Fraction(v, UNITS) for n, v in zip(wf.input_names, inputs, strict=True)}
    values = []
    for i, (s, tree) in enumerate(zip(wf.steps, wf.trees, strict=True)):
        exact = formula_values.evaluate(tree, env)
        if exact is None:
            raise _Failure(i, "divides by zero")
        shift = 10**s.decimals
        units = round_units(exact * shift) * (UNITS // shift)
        if abs(units) > BOUND * UNITS:
            raise _Failure(i, "exceeds the bound |value| <= 1e12")
        values.append(units)
        env[s.output] = Fraction(units, UNITS)
    return Walk(tuple(values), (), None)


def _answer_moves(wf: DeclaredWorkflow, inputs: tuple[int, ...], w: Walk) -> bool:
    """Whether some input, moved down and moved up
    (:func:`~agentproc.declared.rules.moves`), changes the answer both ways.
    A category or boolean answer, and an exit's fixed one, are not asked to (a
    threshold's outcome stays put under a small move)."""
    if w.exit is not None or (
        wf.types is not None and wf.types[wf.spec.answer_variable].kind != "number"
    ):
        return True
    answer = answer_of(wf, w)
    for k, spec in enumerate(wf.input_specs):
        moved = list(inputs)
        changed = 0
        for units in (targets := moves(spec, inputs[k])):
            moved[k] = units
            try:
                changed += answer_of(wf, _walk(wf, tuple(moved))) != answer
            except (_Failure, InputError):  # a move past a range may reach an untaken path
                break
        if targets and changed == len(targets):
            return True
    return False


def draw_instance(
    wf: DeclaredWorkflow,
    seed: int,
    index: int,
    path: str | None = None,
    kind: Callable[[str], str] | None = None,
) -> WorkflowInstance:
    """One instance; the same arguments give the same instance anywhere. ``path``: draw
    until the instance takes that path (``--balance paths``; up to ``ATTEMPTS`` times as
    many draws), or one that ``kind`` reads as it (a workflow with loops: the path
    whatever the items, :func:`~agentproc.declared.loops.path_kind`).

    Raises:
        InputError: no valid draw in :data:`ATTEMPTS` (naming the step that failed most).
    """
    failures: dict[tuple[int, str], int] = {}
    wrong_path = 0
    attempts = ATTEMPTS if path is None else ATTEMPTS * ATTEMPTS
    for attempt in range(attempts):
        rng = random.Random(f"agentproc:workflow:{seed}:{index}:{attempt}")
        inputs = draw_inputs(wf, rng)
        try:
            w = _walk(wf, inputs)
        except _Failure as f:
            failures[f.step, f.reason] = failures.get((f.step, f.reason), 0) + 1
            continue
        name = None if wf.types is None else path_name(wf, w)
        if path is not None and (name if kind is None or name is None else kind(name)) != path:
            wrong_path += 1
            continue
        if not _answer_moves(wf, inputs, w):
            key = (len(w.values) - 1, "gives an answer that changes with none of the inputs")
            failures[key] = failures.get(key, 0) + 1
            continue
        same = next(identities(wf, inputs, w), None)
        if same is not None:
            key = (same[0], f"equals {same[1]}")
            failures[key] = failures.get(key, 0) + 1
            continue
        if wf.types is None:
            return WorkflowInstance(index, inputs, w.values)
        return WorkflowInstance(index, inputs, w.values, w.required, w.exit, name)
    if not failures:
        raise InputError(
            wf.where,
            f"path {path!r} was not taken in {wrong_path} draws of instance {index}",
        )
    (step, reason), count = max(failures.items(), key=lambda kv: kv[1])
    raise InputError(
        wf.where,
        f"{wf.steps[step].formula!r} {reason} in {count} of {attempts} draws of "
        f"instance {index}: no instance can be drawn (narrow the input ranges)",
        wf.field(step, "formula"),
    )


def probe_draws(
    wf: DeclaredWorkflow, count: int = PROBE
) -> list[tuple[tuple[int, ...], Walk | DrawFailure]]:
    """The first ``count`` seeded probe draws: each one's inputs, and its walk or why it
    would be replaced."""
    draws: list[tuple[tuple[int, ...], Walk | DrawFailure]] = []
    for attempt in range(count):
        rng = random.Random(f"agentproc:workflow:probe:{attempt}")
        inputs = draw_inputs(wf, rng)
        try:
            draws.append((inputs, _walk(wf, inputs)))
        except _Failure as failure:
            draws.append((inputs, failure))
    return draws


def _probe(wf: DeclaredWorkflow) -> list[Walk]:
    """The walks of :data:`PROBE` seeded draws (those that would be replaced left out)."""
    return [w for _, w in probe_draws(wf) if isinstance(w, Walk)]


def check_instance_identities(wf: DeclaredWorkflow) -> None:
    """Refuse a step that equals an input or an earlier step
    (:func:`~agentproc.declared.rules.identities`) on more than
    :data:`~agentproc.declared.rules.MAX_IDENTITY_SHARE` of the probe draws
    that require it: one :class:`InputError` naming the step (its instances would be
    drawn again until the suite held only the rest, or none could be)."""
    for k, (count, need, name) in sorted(identity_shares(wf, probe_draws(wf)).items()):
        if count > need * MAX_IDENTITY_SHARE:
            raise InputError(
                wf.where,
                f"{wf.steps[k].formula!r} equals {name} (or another input or earlier "
                f"step) on {count} of the {need} draws that require it: it would hide "
                "the mistakes made before it (compute a new value, or narrow the inputs)",
                wf.field(k, "formula"),
            )


def probe_paths(wf: DeclaredWorkflow) -> dict[str, int]:
    """Path name -> how many of :data:`PROBE` seeded draws take it (a branched workflow)."""
    seen: dict[str, int] = {}
    for w in _probe(wf):
        name = path_name(wf, w)
        seen[name] = seen.get(name, 0) + 1
    return dict(sorted(seen.items()))


def check_conditions(wf: DeclaredWorkflow) -> None:
    """Refuse a condition that holds on every one of :data:`PROBE` draws or on none (its
    branch would never, or always, be taken: nothing would be measured): one
    :class:`InputError` naming the step."""
    if not wf.branched:
        return
    counts = {k: [0, 0] for k in range(len(wf.steps))}
    fires = [0] * len(wf.exits)
    reached = [0] * len(wf.exits)
    for w in _probe(wf):
        for j in range(len(wf.exits)):
            if w.exit is None or w.exit >= j:
                reached[j] += 1
                fires[j] += w.exit == j
        for k, need in enumerate(w.required):
            before = w.exit is None or wf.exits[w.exit].after > k
            if wf.conditions[k] is not None and before:
                counts[k][need] += 1
    for j, e in enumerate(wf.exits):
        if reached[j] and fires[j] in (0, reached[j]):
            how = "on none" if fires[j] == 0 else "on every one"
            raise InputError(
                wf.where,
                f"{wf.spec.steps[e.position].when!r} holds {how} of the {reached[j]} draws "
                "that reach it: the exit would never be measured both ways",
                f"steps[{e.position}] ({e.name}).when",
            )
    for k, (no, yes) in counts.items():
        if no + yes and 0 in (no, yes):
            how = "on none" if yes == 0 else "on every one"
            raise InputError(
                wf.where,
                f"{wf.steps[k].when!r} holds {how} of the {no + yes} draws that reach it: "
                "its branch would never be measured both ways",
                wf.field(k, "when"),
            )
