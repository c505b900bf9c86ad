"""The steps as the prompt lists them, in any rendering a variant writes.

A model that is offered tools without descriptions (or generic calculator tools) still has
the prompt's step list: it reads each step's number, its tool where the prompt names one,
its output variable and what it computes. The four renderings are read here: a numbered
list (``3. subtotal: subtotal = amount_a + amount_b, rounded to 2 decimals (...)``, or
``3. S5 = S4 * S2``), prose (``Then, compute S5 as S4 times S2 (step 3).``), pseudo-code
(``S5 <- S4 * S2    # step 3``) and JSON (one object a line). Whichever rendering reads
the most steps is taken, so a prompt template of one's own may put the list anywhere.

>>> [s.formula for s in listed_steps("Steps:\\n1. S3 = S1 * S2\\n2. S4 = S3 - 2.5")]
['S1 * S2', 'S3 - 2.5']
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass

_NAME = r"[A-Za-z_]\w*"
_TERM = rf"-?\d+(?:\.\d+)?|{_NAME}"
_ROUNDED = r"(.+?), rounded to (\d+) decimals"
_NUMBERED = re.compile(rf"^\s*(\d+)\. (?:({_NAME}): )?({_NAME}) = {_ROUNDED}", re.MULTILINE)
_NUMBERED_OP = re.compile(
    rf"^\s*(\d+)\. ({_NAME}) = ({_TERM}) ([-+*/]) ({_TERM})\s*$", re.MULTILINE
)
_PROSE = re.compile(
    rf"(?:First|Then|Finally), (?:call ({_NAME}) to )?compute ({_NAME}) = {_ROUNDED}"
    r".*?\(step (\d+)\)\.",
    re.DOTALL,
)
_PROSE_OP = re.compile(
    rf"(?:First|Then|Finally), compute ({_NAME}) as ({_TERM}) "
    rf"(plus|minus|times|divided by) ({_TERM}) \(step (\d+)\)\."
)
_PSEUDO = re.compile(rf"^\s+({_NAME}) <- (.+?)\s+# step (\d+)(?:: ({_NAME}))?\s*$", re.MULTILINE)
_ROUND_CALL = re.compile(r"^round\((.+), (\d+)\)$")
_JSON_ROW = re.compile(r"^\s*(\{.*\})\s*$", re.MULTILINE)
_WORDS = {"plus": "+", "minus": "-", "times": "*", "divided by": "/"}
_OPS = {"add": "+", "sub": "-", "mul": "*", "div": "/"}


@dataclass(frozen=True)
class Listed:
    """One step as the prompt lists it."""

    number: int
    """Its number in the list (1 first)."""
    tool: str | None
    """The tool the prompt names for it (``None``: it names none)."""
    output: str
    """The variable it computes."""
    formula: str
    """What it computes, as written: ``S4 * S2``, ``S3 - 2.5``, ``net * tax_rate``."""
    decimals: int | None
    """A declared step's rounding (``None``: a procedure's step, rounded as its mode is)."""


def listed_steps(prompt: str) -> list[Listed]:
    """The steps the prompt lists, by number (empty: it lists none that can be read)."""
    best: list[Listed] = []
    for read in _READERS:
        found = {s.number: s for s in read(prompt)}
        if len(found) > len(best):
            best = [found[n] for n in sorted(found)]
    return best


def _numbered(prompt: str) -> list[Listed]:
    rows = [Listed(int(m[1]), m[2], m[3], m[4], int(m[5])) for m in _NUMBERED.finditer(prompt)]
    rows += [
        Listed(int(m[1]), None, m[2], f"{m[3]} {m[4]} {m[5]}", None)
        for m in _NUMBERED_OP.finditer(prompt)
    ]
    return rows


def _prose(prompt: str) -> list[Listed]:
    rows = [Listed(int(m[5]), m[1], m[2], m[3], int(m[4])) for m in _PROSE.finditer(prompt)]
    rows += [
        Listed(int(m[5]), None, m[1], f"{m[2]} {_WORDS[m[3]]} {m[4]}", None)
        for m in _PROSE_OP.finditer(prompt)
    ]
    return rows


def _pseudocode(prompt: str) -> list[Listed]:
    rows = []
    for m in _PSEUDO.finditer(prompt):
        if rounded := _ROUND_CALL.match(m[2]):
            rows.append(Listed(int(m[3]), m[4], m[1], rounded[1], int(rounded[2])))
        else:
            rows.append(Listed(int(m[3]), m[4], m[1], m[2], None))
    return rows


def _json(prompt: str) -> list[Listed]:
    rows = []
    for m in _JSON_ROW.finditer(prompt):
        try:
            row = json.loads(m[1])
        except ValueError:
            continue
        if isinstance(row, dict) and (step := _json_step(row)) is not None:
            rows.append(step)
    return rows


def _json_step(row: dict[str, object]) -> Listed | None:
    number, output, tool = row.get("step"), row.get("output"), row.get("tool")
    if not isinstance(number, int) or not isinstance(output, str):
        return None
    tool = tool if isinstance(tool, str) else None
    formula, decimals = row.get("formula"), row.get("decimals")
    if isinstance(formula, str) and isinstance(decimals, int):
        return Listed(number, tool, output, formula, decimals)
    op, left, right = row.get("op"), row.get("left"), row.get("right")
    terms = (left, right)
    if isinstance(op, str) and op in _OPS and all(isinstance(t, str | int | float) for t in terms):
        return Listed(number, tool, output, f"{left} {_OPS[op]} {right}", None)
    return None


_READERS: tuple[Callable[[str], list[Listed]], ...] = (_numbered, _prose, _pseudocode, _json)
"""Each rendering's reader; ties go to the earlier."""
