"""A prompt with loops as the demo's profiles read it, as a model does: each list's items
one by one, each step of a loop by its item, and each call of a loop's one tool as the
step of the item it names.

The prompt lists a list as a list (``owners = ["R-14", "R-11"]``) and each expanded step
and variable by its item (``2. owner_share: share[0] = lookup(registry, owners[0],
'share')``); a loop's tool says what it is done for (``For each owner in owners: ...``).
Read here: the items as ``owners__0``, ``owners__1`` (the names a tool's result gives an
expanded variable, ``share__0 = 41``), each step of a loop as ``owner_share[0]``, called
with its tool's item parameter given ``owners__0`` and each other parameter that item's
own value, and a call of a loop's tool made earlier as the step of the item it names.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from agentproc.agents.demo.listing import Listed, condition_after, leading_formula

_FOR_EACH = re.compile(r"^For each ([A-Za-z_]\w*) in ([A-Za-z_]\w*): ")
_ITEM = re.compile(r"\b([A-Za-z_]\w*)\[(\d+)\]")
_LIST = re.compile(r"\b([A-Za-z_]\w*) = (\[[^\[\]\n]*\])")
_EXPANDED = re.compile(r"^([A-Za-z_]\w*?)__(\d+)$")

Loops = dict[str, tuple[str, str]]
"""A loop's tool -> its item parameter and its list."""


def loops_of(descriptions: Mapping[str, str | None]) -> Loops:
    """The offered tools that are loops', by their descriptions."""
    out: Loops = {}
    for name, text in descriptions.items():
        if text and (m := _FOR_EACH.match(text)):
            out[name] = (m[1], m[2])
    return out


def unshown(text: str) -> str:
    """``text`` with each list's items one by one and ``share[0]`` as ``share__0``.

    >>> unshown('Inputs: owners = ["A", "B"], k = 2. share[1] = f(owners[1])')
    'Inputs: owners__0 = "A", owners__1 = "B", k = 2. share__1 = f(owners__1)'
    """

    def items(m: re.Match[str]) -> str:
        try:
            values = json.loads(m[2])
        except ValueError:
            return m[0]
        if not isinstance(values, list):
            return m[0]
        return ", ".join(f"{m[1]}__{i} = {json.dumps(v)}" for i, v in enumerate(values))

    return _ITEM.sub(r"\1__\2", _LIST.sub(items, text))


def step_of(tool: str, output: str, loops: Loops) -> str:
    """A listed step's id: a loop's by its item (``owner_share[0]``), any other its tool."""
    m = _EXPANDED.match(output)
    return f"{tool}[{m[2]}]" if tool in loops and m else tool


def arguments(step: str, tool: str, params: list[str], loops: Loops) -> tuple[tuple[str, str], ...]:
    """How a step of a loop is called: the item parameter given its item of the list,
    each other parameter that item's own value (``share`` -> ``share__0``)."""
    item, over = loops[tool]
    at = step[step.rindex("[") + 1 : -1]
    return tuple((p, f"{over}__{at}" if p == item else f"{p}__{at}") for p in params)


def called_step(tool: str, args: Any, loops: Loops, known: Mapping[str, Any]) -> str:
    """The step a call made earlier was: a loop's tool's, that of the item it names (the
    tool's own name where it names none of the list)."""
    item, over = loops[tool]
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except ValueError:
            return tool
    got = args.get(item) if isinstance(args, dict) else None
    at = next((k for k, v in known.items() if v == got and k.startswith(f"{over}__")), None)
    return tool if at is None else f"{tool}[{at.rpartition('__')[2]}]"


_ROW = re.compile(r"^\s*(\d+)\. ([A-Za-z_][\w-]*): ([A-Za-z_]\w*) = (.+?)\s*$", re.MULTILINE)
_ROUNDED = re.compile(r"^(.+?), rounded to (\d+) decimals(.*)$")


def loop_rows(prompt: str, loops: Loops) -> list[Listed]:
    """The numbered steps of the loops' tools the prompt lists (a step of a loop: its
    output by its item, ``share__0``), each with its formula, rounding and condition."""
    rows = []
    for m in _ROW.finditer(prompt):
        if m[2] not in loops:
            continue
        rest, decimals = m[4], None
        if rounded := _ROUNDED.match(rest):
            head, decimals, rest = rounded[1], int(rounded[2]), rounded[3]
            when = condition_after(rest)
        elif lead := leading_formula(rest):
            head, when = lead[0], condition_after(lead[1])
        else:
            continue
        rows.append(Listed(int(m[1]), m[2], m[3], head, decimals, when, decimals is None))
    return rows
