"""What a declared scenario's steps must be, checked once per structure: each with a
formula over variables defined before it, defining a new one, with a tool name of its
own, the answer the last output. Every instance of a workflow has the same structure,
so a suite's scenarios are checked as fast as they are read. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from agentproc.declared import formula as formulas

DeclaredStructure = tuple[
    tuple[int, str | None, bool, str, tuple[str, ...], str, tuple[int, ...], bool], ...
]
"""What checking a declared scenario's steps reads of each: its number, formula, whether
it has an op, output, operands, tool name, dependencies and whether it is a loop's later
item (which shares its first item's tool)."""


def step_structure(steps: Sequence[Any]) -> DeclaredStructure:
    """The :data:`DeclaredStructure` of a scenario's steps."""
    return tuple(
        (
            *(st.step, st.formula, st.op is not None, st.output, tuple(st.operands), st.name),
            *(tuple(st.depends_on), st.loop is not None and st.loop.item != 0),
        )
        for st in steps
    )


@lru_cache(maxsize=1024)
def declared_index(
    inputs: tuple[str, ...], steps: DeclaredStructure, answer_variable: str
) -> tuple[str | None, Mapping[str, int]]:
    """The first problem of a declared scenario's steps (``None``: none) and its variable
    name -> index (inputs first, from 1), found once per structure (only read)."""
    if not inputs:
        return "inputs: a declared workflow needs at least one input", {}
    index: dict[str, int] = {}
    for name in inputs:
        index[name] = len(index) + 1
    tools: set[str] = set()
    for i, (step, formula, has_op, output, operands, tool, depends_on, shared) in enumerate(steps):
        if step != i + 1 or formula is None or has_op:
            return f"steps[{i}]: expected step {i + 1} with a formula, no op", index
        if output in index:
            return f"steps[{i}].output: {output!r} is defined twice", index
        try:
            reads = _reads(formula)
        except formulas.FormulaError as exc:
            return f"steps[{i}].formula: {exc}", index
        if reads != set(operands) or any(v not in index for v in operands):
            return (
                f"steps[{i}].operands: expected the variables its formula reads, each "
                "defined before it"
            ), index
        if tool in tools and not shared:
            return f"steps[{i}].expected_call.name: {tool!r} is taken twice", index
        tools.add(tool)
        for j, d in enumerate(depends_on):
            if not 1 <= d < step:
                return f"steps[{i}].depends_on[{j}]: {d} is not a step before step {step}", index
        index[output] = len(index) + 1
    if answer_variable != steps[-1][3]:
        return f"answer_variable: {answer_variable!r} is not the last output", index
    return None, index


@lru_cache(maxsize=4096)
def _reads(formula: str) -> frozenset[str]:
    """The variables a declared step's formula reads (kept: a suite's instances share
    their formulas)."""
    return frozenset(formulas.variables(formulas.parse(formula, True)))
