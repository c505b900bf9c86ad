"""A simulated writer for text mode, for the tests: faithful work with injected faults,
to prove the parser and the labeller against known truth."""

from __future__ import annotations

import itertools
from functools import partial
from typing import Any

from agentproc.arith import BOUND, SYMBOL, apply_units, render
from agentproc.errors import ConfigError, unknown_key
from agentproc.workflow import Scenario, ScenarioStep, Workflow, build_workflow

FAULTS: dict[str, str] = {
    "skip": "step k is not written (later steps use its right value)",
    "stop": "only the first k steps are written, then their last value is the answer",
    "slip": "step k has an arithmetic slip; later steps build on it",
    "confuse": "step k reads another variable in place of its farthest operand",
    "retry": "step k is written with a slip, then again with the right value",
    "repeat": "step k is written twice",
    "reorder": "steps k and k+1 are written in swapped order",
    "extra": "a line for a variable past the last one, after the first k step lines",
    "inputs": "S1 and S2 are restated first (any true value)",
    "answer": "'wrong'; 'none' (no answer line, and the last step's line left out, so "
    "nothing states the answer); 'implicit' (no answer line: the last step's line is read "
    "as the answer); 'twice'; 'fix' (wrong, then right) or 'break' (right, then wrong)",
}
"""The faults :func:`write_text` injects, keyed by a step number k unless noted."""

STYLES: dict[str, tuple[str, str]] = {
    "plain": ("S{var} = {value}", "Answer: {value}"),
    "markdown": ("- **S{var}** = `{value}`", "**Answer:** {value}"),
    "verbose": ("Step {step}: S{var} = {expr} = {value}", "So the answer is $\\boxed{{{value}}}$."),
}
"""How :func:`write_text` spells step and answer lines. Markdown numbers carry
thousands separators; verbose ones a unicode minus."""


def _num(units: int, scale: int, style: str) -> str:
    text = render(units, scale)
    if style == "markdown":
        sign, digits = ("-", text[1:]) if text.startswith("-") else ("", text)
        whole, dot, frac = digits.partition(".")
        return f"{sign}{int(whole):,}{dot}{frac}"
    return text.replace("-", "\u2212") if style == "verbose" else text


def _swaps(wf: Workflow, spec: ScenarioStep, held: dict[int, int]) -> dict[int, set[int]]:
    """Values of the step with one operand replaced, and the variables whose values give it."""
    out: dict[int, set[int]] = {}
    for pos, var in enumerate(spec.operand_vars):  # a constant is never read wrong
        for u in range(1, wf.answer_index + 1):  # every variable the labeller searches
            for value in (wf.correct[u], held[u]) if u != var else ():
                args = list(spec.arguments(held.__getitem__, wf.scale))
                args[pos] = value
                r = apply_units(spec.op, args[0], args[1], wf.scale)
                if r is not None:
                    out.setdefault(r, set()).add(u)
    return out


def _slip(wf: Workflow, spec: ScenarioStep, held: dict[int, int], right: int) -> int:
    """A wrong value that neither the operands nor a confused operand explain."""
    taken, size = set(_swaps(wf, spec, held)) | {right, 0}, max(1, abs(right) // 7)
    steps = (right + sign * d * size for d in itertools.count(1) for sign in (1, -1))
    return next(v for v in steps if v not in taken)


def _confused(wf: Workflow, spec: ScenarioStep, held: dict[int, int], right: int) -> int:
    """The farthest operand replaced by the nearest variable whose value only it explains.

    Raises ConfigError when there is none (e.g. ``S3 = S1 / S2``: either swap gives 1).
    """
    swaps, pos = _swaps(wf, spec, held), spec.operand_vars.index(min(spec.operand_vars))
    var = spec.operand_vars[pos]
    for u in sorted(range(1, spec.target), key=lambda u: (abs(u - var), u)):
        args = list(spec.arguments(held.__getitem__, wf.scale))
        args[pos] = wf.correct[u]
        r = apply_units(spec.op, args[0], args[1], wf.scale) if u != var else None
        if r is not None and r not in (right, 0) and swaps[r] == {u}:
            return r
    raise ConfigError(f"no look-back confusion at step {spec.step} is told apart from the others")


def write_text(
    scenario: Scenario, faults: dict[str, Any] | None = None, style: str = "plain"
) -> str:
    """The work of a scenario as a faithful model writes it, with faults from :data:`FAULTS`.

    Values are carried as the writer holds them, so a slip or a confusion reaches
    later steps and the answer; a variable not yet written is taken at its right value.
    """
    faults = faults or {}
    for kind, key, valid in [("fault", k, FAULTS) for k in faults] + [("style", style, STYLES)]:
        if key not in valid:
            raise unknown_key(kind, key, list(valid))
    wf = build_workflow(scenario)
    n, scale, (step_line, answer_line) = wf.n_steps, wf.scale, STYLES[style]
    held = dict(enumerate(wf.correct))
    show = partial(_num, scale=scale, style=style)
    out = [f"S{v} = {show(held[v])}" for v in (1, 2)] if faults.get("inputs") else []
    extra = f"S{wf.answer_index + 1} = {show(wf.answer)}"
    order = list(range(1, n + 1))
    if "reorder" in faults:
        k = faults["reorder"]
        order[k - 1], order[k] = order[k], order[k - 1]
    written = order[: faults.get("stop", n)]
    last: int | None = None
    for pos, k in enumerate(written):
        out += [extra] if faults.get("extra") == pos else []
        if faults.get("skip") == k:
            continue
        spec = wf.steps[k - 1]
        (a, b), sym = spec.arguments(held.__getitem__, scale), SYMBOL[spec.op]
        right = apply_units(spec.op, a, b, scale)
        if right is None or abs(right) > BOUND * scale:  # a carried error gone wild: recover
            right = wf.correct[spec.target]
        values = [right] * (2 if faults.get("repeat") == k else 1)
        if k in (faults.get("slip"), faults.get("retry")):
            values = [_slip(wf, spec, held, right)] + ([right] if faults.get("retry") == k else [])
        elif faults.get("confuse") == k:
            values = [_confused(wf, spec, held, right)]
        left, right_term = spec.terms()
        expr = f"{left} {sym} {right_term} = {show(a)} {sym} {show(b)}"
        unstated = faults.get("answer") == "none" and spec.target == wf.answer_index
        for value in values:
            held[spec.target] = last = value
            if not unstated:  # 'none': nothing states the answer, not even its step
                out.append(step_line.format(step=k, var=spec.target, expr=expr, value=show(value)))
    out += [extra] if faults.get("extra") == len(written) else []
    own = held[wf.answer_index] if len(written) == n else wf.correct[2] if last is None else last
    taken = set(wf.correct) | set(held.values()) | {own}
    near = (wf.answer + sign * d for d in itertools.count(1) for sign in (1, -1))
    bad = next(v for v in near if v not in taken)
    plans = {
        "wrong": [bad],
        "none": [],
        "implicit": [],
        "twice": [own] * 2,
        "fix": [bad, own],
        "break": [own, bad],
    }
    plan = faults.get("answer")
    if plan is not None and plan not in plans:
        raise unknown_key("answer fault", str(plan), list(plans))
    out += [answer_line.format(value=show(v)) for v in (plans[plan] if plan else [own])]
    return "\n".join(out) + "\n"
