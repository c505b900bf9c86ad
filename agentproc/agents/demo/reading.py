"""What a chat-completion request tells an agent of agentproc's workflow.

The demo endpoint keeps no state between requests: everything it needs is in the
conversation the client sends. The offered tools name the steps (``step_K``) and their
operands; the ``Inputs:`` line of the user message gives ``S1`` and ``S2``; every
tool result reads ``S<n> = <number>``; a step tool's description holds its expression
(``compute S9 = S8 - S5``), from which an agent that skips a step can still work out its
value. So a reply depends only on the request, and replies are the same whatever the
concurrency or the order in which episodes arrive.

A declared workflow's tools have names of their own: its step tools are those whose
description states a formula (``Step 3 of 12: subtotal = amount_a + amount_b, rounded to
2 decimals``), in the order offered, and its variables have the declared names.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from agentproc.agents.demo.checks import BadRequest, number_text
from agentproc.arith import SYMBOL, Op, apply_units, round_units, to_number, to_units
from agentproc.procedures import formula
from agentproc.runs import text_of

Number = float | int
Reply = dict[str, Any]
"""A planned reply: ``{"tool_call": {"name", "arguments"}}`` or ``{"content": text}``
(see :func:`agentproc.agents.demo.server.completion` for every form)."""

_STEP_TOOL = re.compile(r"^step_(\d+)$")
_ASSIGN = re.compile(r"\b(S\d+)\s*=\s*(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)")
_INPUTS = re.compile(r"^.*Inputs:(.*)$", re.MULTILINE | re.IGNORECASE)
_EXPRESSION = re.compile(r"\b(S\d+) = (S\d+) ([-+*/]) (S\d+)\b")
_OPS: dict[str, Op] = {symbol: op for op, symbol in SYMBOL.items()}
_FORMULA = re.compile(
    r"^Step \d+ of \d+: ([A-Za-z_]\w*) = (.+?), rounded to (\d) decimals", re.DOTALL
)
_NAMED_ASSIGN = re.compile(r"\b([A-Za-z_]\w*)\s*=\s*(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)")


@dataclass(frozen=True)
class Expression:
    """A step's computation as its tool describes it: ``output = a op b``."""

    output: str
    op: Op | None
    a: str
    b: str
    tree: formula.Node | None = None
    """A declared workflow's step: its formula (``op`` is then ``None``)."""
    decimals: int = 3
    """A declared workflow's step: the decimals its output is rounded to."""


@dataclass(frozen=True)
class Turn:
    """The state of an episode, read from one chat-completion request."""

    params: dict[str, list[str]]
    """Offered tool -> its parameter names, in order."""
    steps: list[str]
    """The step tools, in step order."""
    finish: str | None
    """The tool that takes the answer (the one offered tool that is not a step)."""
    known: dict[str, Number]
    """Variable -> the value the conversation gave it (inputs and tool results)."""
    done: frozenset[str]
    """The tools called so far."""
    last_output: Number | None
    """What the last step's tool returned, once it has been called."""
    expressions: dict[str, Expression]
    """Step tool -> its expression, where its description states one."""
    prompt: str
    """The system and first user message: the wording the agent was given."""
    decimal: bool
    """Values are rounded to 3 decimals (else they are integers)."""

    def head_value(self, step: str) -> Number | None:
        """The value of ``step``'s output worked out without its tool (None: cannot)."""
        e = self.expressions.get(step)
        if e is not None and e.tree is not None:
            return self._formula_value(e.tree, e.decimals)
        if e is None or e.op is None or e.a not in self.known or e.b not in self.known:
            return None
        scale = 1000 if self.decimal else 1
        units = apply_units(
            e.op, to_units(self.known[e.a], scale), to_units(self.known[e.b], scale), scale
        )
        return None if units is None else to_number(units, scale)

    def _formula_value(self, tree: formula.Node, decimals: int) -> Number | None:
        names = set(formula.variables(tree))
        if not names <= self.known.keys():
            return None
        exact = formula.evaluate(tree, {n: Fraction(repr(self.known[n])) for n in names})
        if exact is None:
            return None
        shift = 10**decimals
        return to_number(round_units(exact * shift) * (1000 // shift), 1000)


def conversation_key(body: dict[str, Any]) -> str:
    """What tells one conversation from another: its first user message."""
    users = [m for m in body.get("messages", []) if m.get("role") == "user"]
    return text_of(users[0].get("content")) if users else ""


def _number(value: str) -> Number:
    if not any(c in value for c in ".eE"):
        return int(number_text(value))
    number = float(number_text(value))
    if not math.isfinite(number):
        raise BadRequest(400, f"a number too large to read in messages ({value[:20]}...)")
    return number


def read_turn(body: dict[str, Any]) -> Turn:
    """Read the episode's state from a chat-completion request body."""
    params: dict[str, list[str]] = {}
    expressions: dict[str, Expression] = {}
    for tool in body.get("tools") or []:
        fn = tool.get("function", {})
        name = fn.get("name", "")
        params[name] = list(fn.get("parameters", {}).get("properties", {}))
        if m := _EXPRESSION.search(fn.get("description") or ""):
            expressions[name] = Expression(m[1], _OPS[m[3]], m[2], m[4])
        elif (f := _FORMULA.match(fn.get("description") or "")) and (tree := _parsed(f[2])):
            expressions[name] = Expression(f[1], None, "", "", tree, int(f[3]))
    numbered = [(int(m[1]), name) for name in params if (m := _STEP_TOOL.match(name))]
    steps = [name for _, name in sorted(numbered)]
    finish = next((name for name in params if not _STEP_TOOL.match(name)), None)
    assign = _ASSIGN
    if not steps:  # a declared workflow: the tools with a formula, in the order offered
        steps = [name for name, e in expressions.items() if e.tree is not None]
        finish = next((name for name in params if name not in expressions), None)
        assign = _NAMED_ASSIGN

    known: dict[str, Number] = {}
    called: dict[str, str] = {}  # tool_call_id -> tool name
    last_output: Number | None = None
    prompt: list[str] = []
    for msg in body.get("messages", []):
        role, content = msg.get("role"), text_of(msg.get("content"))
        if role in ("system", "user") and len(prompt) < 2:
            prompt.append(content)
        if role == "user" and (line := _INPUTS.search(content)):
            known.update((var, _number(v)) for var, v in assign.findall(line[1]))
        for call in msg.get("tool_calls") or []:
            called[call.get("id", "")] = call.get("function", {}).get("name", "")
        if role == "tool" and (m := assign.search(content)):
            known[m[1]] = _number(m[2])
            if steps and called.get(msg.get("tool_call_id", "")) == steps[-1]:
                last_output = known[m[1]]
    wording = "\n".join(prompt)
    decimal = "decimal" in wording or any(isinstance(v, float) for v in known.values())
    return Turn(
        params=params,
        steps=steps,
        finish=finish,
        known=known,
        done=frozenset(called.values()),
        last_output=last_output,
        expressions=expressions,
        prompt=wording,
        decimal=decimal,
    )


def _parsed(text: str) -> formula.Node | None:
    try:
        return formula.parse(text)
    except formula.FormulaError:
        return None
