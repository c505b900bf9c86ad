"""A branched workflow's instance as the monitor and the mock tools read it: the path its
correct values take, and the same conditions evaluated on any other values (the agent's
own, to tell a branch its own mistake chose from one nothing supports).

Built once per episode from the scenario (or its JSON, when a run is relabelled); the
conditions are parsed once per text (:func:`~agentproc.declared.formula.parse` keeps
them).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any

from agentproc.arith import SYMBOL_BASE, from_number, is_symbol, to_number
from agentproc.declared import formula, formula_values
from agentproc.workflow.scenario_types import grammar_value

UNNEEDED_CONDITION = "condition"
"""``unneeded_step`` reason: the step's ``when`` is false on the instance."""
UNNEEDED_AFTER_EXIT = "after_exit"
"""``unneeded_step`` reason: the step lies past the exit that fired."""


@dataclass(frozen=True)
class BranchExit:
    """An exit as the monitor reads it."""

    name: str
    after: int
    """Steps listed before it: it is checked before step ``after + 1``."""
    condition: formula.Node
    answer: int
    """Its answer in units."""
    shown: Any
    """Its answer as the agent would give it (a multi-field answer's: field -> value)."""
    fields: tuple[int, ...] | None = None
    """A multi-field answer's: each field's value in units, in the fields' order."""


@dataclass(frozen=True)
class Branching:
    """The required path of one instance and its conditions."""

    required: tuple[bool, ...]
    """Each step (by number less one): whether the instance requires it."""
    conditions: tuple[formula.Node | None, ...]
    """Each step's ``when`` (``None``: none)."""
    exits: tuple[BranchExit, ...]
    fired: int | None
    """The exit that fires on the correct values (its index), if any."""
    path: str
    """The path's name."""

    @cached_property
    def steps(self) -> tuple[int, ...]:
        """The required steps' numbers, in listed order."""
        return tuple(k + 1 for k, r in enumerate(self.required) if r)

    @cached_property
    def skip(self) -> frozenset[int]:
        """The steps the instance does not require."""
        return frozenset(k + 1 for k, r in enumerate(self.required) if not r)

    @property
    def last(self) -> int | None:
        """The last required step (``None``: an exit fires before any step)."""
        return self.steps[-1] if self.steps else None

    def conditional(self, step: int) -> bool:
        """Whether ``step``'s requirement depends on the values (a ``when``, or an
        exit listed before it)."""
        return self.conditions[step - 1] is not None or any(e.after < step for e in self.exits)

    def reason(self, step: int) -> str:
        """Why an unrequired step is not needed: ``after_exit`` or ``condition``."""
        if self.fired is not None and self.exits[self.fired].after < step:
            return UNNEEDED_AFTER_EXIT
        return UNNEEDED_CONDITION

    def required_on(self, step: int, env: Mapping[str, Any]) -> bool | None:
        """Whether ``step`` would be required on the values ``env`` (by variable name; a
        value missing from it: ``None``, unknown): no exit before it fires and its
        ``when`` holds."""
        for e in self.exits:
            if e.after >= step:
                break
            fires = holds(e.condition, env)
            if fires is None or fires:
                return None if fires is None else False
        cond = self.conditions[step - 1]
        return True if cond is None else holds(cond, env)

    def exit_on(self, env: Mapping[str, Any], before: int | None = None) -> int | None:
        """The first exit (checked before step ``before``, or any) that fires on ``env``."""
        for j, e in enumerate(self.exits):
            if before is not None and e.after >= before:
                break
            if holds(e.condition, env):
                return j
        return None


def holds(tree: formula.Node, env: Mapping[str, Any]) -> bool | None:
    """A condition on ``env`` (``None`` where it reads a value ``env`` lacks, or divides
    by zero)."""
    try:
        v = formula_values.evaluate(tree, env)
    except KeyError:
        return None
    return None if v is None else bool(v)


def env_of(names: Sequence[str], units: Callable[[int], int | None], scale: int) -> dict[str, Any]:
    """Variable name -> value, ``units(var)`` giving each variable's units by index
    (``None`` or an undefined value: left out)."""
    env: dict[str, Any] = {}
    for var in range(1, len(names)):
        u = units(var)
        if u is None or (is_symbol(u) and grammar_value(u, scale) is None):
            continue
        env[names[var]] = grammar_value(u, scale)
    return env


def branching(
    data: Mapping[str, Any], steps: Sequence[Mapping[str, Any]], scale: int
) -> Branching | None:
    """The branching of a scenario's JSON (or model dump): ``None`` for a scenario without
    a path (every step required)."""
    path = data.get("path")
    if not path:
        return None
    exits = tuple(
        BranchExit(
            e["name"],
            e["after"],
            formula.parse(e["when"], True),
            from_number(e["answer"], scale),
            e["answer"] if not e.get("fields") else e["fields"],
            None
            if not e.get("fields")
            else tuple(from_number(v, scale) for v in e["fields"].values()),
        )
        for e in data.get("exits") or ()
    )
    fired = next((j for j, e in enumerate(exits) if e.name == path.get("exit")), None)
    return Branching(
        tuple(s.get("required") is not False for s in steps),
        conditions_of(tuple(s.get("when") for s in steps)),
        exits,
        fired,
        path["name"],
    )


@lru_cache(maxsize=256)
def conditions_of(whens: tuple[str | None, ...]) -> tuple[formula.Node | None, ...]:
    """Each step's ``when`` parsed (``None``: none), found once per process for all the
    instances of a workflow (kept by the texts themselves)."""
    return tuple(None if not w else formula.parse(w, True) for w in whens)


def path_fields(
    correct: Sequence[int],
    expected: Sequence[Any],
    numbers: Sequence[Any],
    scale: int,
    paths: Branching | None,
    param_vars: tuple[tuple[tuple[str, int], ...], ...],
) -> dict[str, Any]:
    """A branched instance's own fields of its indexed workflow: each category's and
    boolean's value as the agent writes it (its name, ``true`` or ``false``) among the
    ``expected`` values and the ``numbers`` of the fast check, and each step's arguments
    only the variables the path computes (an input, or a step it requires): a branch not
    taken gives nothing to pass on."""
    shown, fast = list(expected), list(numbers)
    for i, u in enumerate(correct):
        if u <= -SYMBOL_BASE:
            shown[i] = fast[i] = to_number(u, scale)
    if paths is not None:
        n_inputs = len(correct) - 1 - len(paths.required)
        param_vars = _on_path(param_vars, n_inputs, paths.steps)
    return {
        "expected": tuple(shown),
        "numbers": tuple(fast),
        "branching": paths,
        "param_vars": param_vars,
    }


@lru_cache(maxsize=1024)
def _on_path(
    param_vars: tuple[tuple[tuple[str, int], ...], ...], n_inputs: int, steps: tuple[int, ...]
) -> tuple[tuple[tuple[str, int], ...], ...]:
    """Each step's arguments limited to the variables a path computes: the inputs (the
    first ``n_inputs``) and the outputs of its ``steps`` (kept: a workflow has few paths)."""
    available = set(range(1, n_inputs + 1))
    available.update(s + n_inputs for s in steps)
    return tuple(tuple(pv for pv in pvs if pv[1] in available) for pvs in param_vars)
