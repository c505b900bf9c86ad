"""What a chat-completion request tells an agent of agentproc's workflow.

The demo endpoint keeps no state between requests: everything it needs is in the
conversation the client sends. The offered tools name the steps (``step_K``) and their
operands; the ``Inputs:`` line of the user message gives the inputs' values; every
tool result reads ``<variable> = <number>``; a step tool's description holds its
expression (``compute S9 = S8 - S5``), from which an agent that skips a step can still work
out its value. So a reply depends only on the request, and replies are the same whatever
the concurrency or the order in which episodes arrive.

A declared workflow's tools have names of their own: its step tools are those whose
description states a formula (``Step 3 of 12: subtotal = amount_a + amount_b, rounded to
2 decimals``), and its variables have the declared names. Where the tools say less, the
request is read as a model reads it: step tools with seeded names by the ``Step K of N``
their descriptions start with; tools without descriptions by the prompt's step list
(:mod:`agentproc.agents.demo.listing`), which names each step's tool; the calculator's
``add``/``sub``/``mul``/``div`` by the step list too, each step called with the tool of its
operation; the finish tool, among tools no step names (distractors), by its description or
the prompt; a call that failed transiently (``... try again``) as not made.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from agentproc.agents.demo.checks import BadRequest, number_text
from agentproc.agents.demo.listing import Listed, listed_steps
from agentproc.arith import SYMBOL, Op, apply_units, round_units, to_number, to_units
from agentproc.procedures import formula
from agentproc.runs import text_of

Number = float | int
Reply = dict[str, Any]
"""A planned reply: ``{"tool_call": {"name", "arguments"}}`` or ``{"content": text}``
(see :func:`agentproc.agents.demo.server.completion` for every form)."""

_NAME = r"[A-Za-z_]\w*"
_NUMBER = r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"
_STEP_TOOL = re.compile(r"^step_(\d+)$")
_STAGE = re.compile(r"^Step (\d+) of \d+: ")
_INPUTS = re.compile(r"^.*Inputs:(.*)$", re.MULTILINE | re.IGNORECASE)
_EXPRESSION = re.compile(rf"\b({_NAME}) = ({_NAME}) ([-+*/]) ({_NAME})\b")
_TERMS = re.compile(rf"^(-?\d+(?:\.\d+)?|{_NAME}) ([-+*/]) (-?\d+(?:\.\d+)?|{_NAME})$")
_LITERAL = re.compile(rf"^{_NUMBER}$")
_OPS: dict[str, Op] = {symbol: op for op, symbol in SYMBOL.items()}
_FORMULA = re.compile(rf"^Step \d+ of \d+: ({_NAME}) = (.+?), rounded to (\d) decimals", re.DOTALL)
_ASSIGN = re.compile(rf"\b({_NAME})\s*=\s*({_NUMBER})")
_CALCULATOR = re.compile(r"^Compute a ([-+*/]) b\b")
_CALCULATOR_NAMES = {op.value: op for op in Op}
_TRANSIENT = re.compile(r"^Error:.*\btry again\b", re.DOTALL)
_FINISH_NAMED = re.compile(rf"\bcall ({_NAME}) with the value\b")


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
class Call:
    """How a step is called: its tool, and what each argument is."""

    tool: str
    arguments: tuple[tuple[str, str], ...]
    """``(parameter, source)``: the variable whose value it takes, or a literal number."""
    output: str | None = None
    """The variable the step computes, where the request says (a calculator's result
    names none: the step the call was for is what it computes)."""


@dataclass(frozen=True)
class Turn:
    """The state of an episode, read from one chat-completion request."""

    params: dict[str, list[str]]
    """Offered tool -> its parameter names, in order."""
    steps: list[str]
    """The steps, in step order: each its tool's name (``step_K`` with the calculator)."""
    finish: str | None
    """The tool that takes the answer."""
    known: dict[str, Number]
    """Variable -> the value the conversation gave it (inputs and tool results)."""
    done: frozenset[str]
    """The tools called so far (a call that failed transiently is not counted)."""
    last_output: Number | None
    """What the last step's tool returned, once it has been called."""
    expressions: dict[str, Expression]
    """Step -> its expression, where the request states one."""
    prompt: str
    """The system and first user message: the wording the agent was given."""
    decimal: bool
    """Values are rounded to 3 decimals (else they are integers)."""
    calls: dict[str, Call]
    """Step -> how it is called."""
    answered: tuple[Number | None, ...] | None = None
    """With the calculator: what each call returned, in order (``None``: an error), the
    failed-transiently ones left out; ``None`` without the calculator."""

    def head_value(self, step: str, known: dict[str, Number] | None = None) -> Number | None:
        """The value of ``step``'s output worked out without its tool (None: cannot),
        from ``known`` (default: the values the conversation gave)."""
        known = self.known if known is None else known
        e = self.expressions.get(step)
        if e is not None and e.tree is not None:
            return _formula_value(e.tree, e.decimals, known)
        if e is None or e.op is None or e.a not in known or e.b not in known:
            return None
        scale = 1000 if self.decimal else 1
        units = apply_units(e.op, to_units(known[e.a], scale), to_units(known[e.b], scale), scale)
        return None if units is None else to_number(units, scale)


def _formula_value(tree: formula.Node, decimals: int, known: dict[str, Number]) -> Number | None:
    names = set(formula.variables(tree))
    if not names <= known.keys():
        return None
    exact = formula.evaluate(tree, {n: Fraction(repr(known[n])) for n in names})
    if exact is None:
        return None
    shift = 10**decimals
    return to_number(round_units(exact * shift) * (1000 // shift), 1000)


def literal(source: str) -> Number | None:
    """``source`` as the number it spells (``None``: a variable's name)."""
    return _number(source) if _LITERAL.match(source) else None


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


@dataclass(frozen=True)
class _Plan:
    """The steps as the offered tools and the prompt give them."""

    steps: list[str]
    expressions: dict[str, Expression]
    calls: dict[str, Call]
    calculator: frozenset[str] = frozenset()
    """The calculator's tools the steps are called with (empty: none)."""


Tools = dict[str, tuple[str | None, list[str]]]
"""Offered tool -> its description (``None``: none) and its parameter names."""


def _plan(tools: Tools, prompt: str) -> _Plan:
    """The steps: ``step_K`` tools; else tools described as ``Step K of N``; else the
    prompt's step list (naming each step's tool, or with the calculator, its operation)."""
    expressions: dict[str, Expression] = {}
    staged: list[tuple[int, str]] = []
    for name, (description, _) in tools.items():
        text = description or ""
        if (f := _FORMULA.match(text)) and (tree := _parsed(f[2])):
            expressions[name] = Expression(f[1], None, "", "", tree, int(f[3]))
        elif m := _EXPRESSION.search(text):
            expressions[name] = Expression(m[1], _OPS[m[3]], m[2], m[4])
        if stage := _STAGE.match(text):
            staged.append((int(stage[1]), name))
    numbered = sorted((int(m[1]), name) for name in tools if (m := _STEP_TOOL.match(name)))
    pairs: list[tuple[str, Listed]] = []
    if numbered:  # a procedure's step_K
        steps = [name for _, name in numbered]
        if any(tools[s][0] is None for s in steps):  # no descriptions: the prompt says
            rows = {f"step_{row.number}": row for row in listed_steps(prompt)}
            pairs = [(s, rows[s]) for s in steps if s in rows and tools[s][0] is None]
    elif staged:  # each step tool described, whatever its name
        steps = [name for _, name in sorted(staged, key=lambda pair: pair[0])]
    else:
        rows_listed = listed_steps(prompt)
        pairs = [(row.tool, row) for row in rows_listed if row.tool in tools]
        if not pairs:
            return _calculator_plan(tools, rows_listed)
        steps = [step for step, _ in pairs]
    for step, row in pairs:
        if step not in expressions and (e := _listed_expression(row)) is not None:
            expressions[step] = e
    calls = {step: Call(step, tuple((p, p) for p in tools[step][1])) for step in steps}
    return _Plan(steps, expressions, calls)


def _calculator_plan(tools: Tools, rows: list[Listed]) -> _Plan:
    """Each listed step called with the calculator tool of its operation (no steps: a
    step whose operation no tool offered computes)."""
    by_op = {op: name for name, (d, p) in tools.items() if (op := _operation(name, d, p))}
    steps: list[str] = []
    expressions: dict[str, Expression] = {}
    calls: dict[str, Call] = {}
    for row in rows:
        terms = _TERMS.match(row.formula) if row.decimals is None else None
        if terms is None or _OPS[terms[2]] not in by_op:
            return _Plan([], {}, {})
        step, tool = f"step_{row.number}", by_op[_OPS[terms[2]]]
        steps.append(step)
        arguments = tuple(zip(tools[tool][1], (terms[1], terms[3]), strict=True))
        calls[step] = Call(tool, arguments, row.output)
        if (e := _listed_expression(row)) is not None:
            expressions[step] = e
    return _Plan(steps, expressions, calls, frozenset(by_op.values()) if steps else frozenset())


def _operation(name: str, description: str | None, params: list[str]) -> Op | None:
    """The operation of a calculator tool (``None``: not one): ``Compute a * b``, or
    without a description, its name."""
    if len(params) != 2:
        return None
    if description is None:
        return _CALCULATOR_NAMES.get(name)
    m = _CALCULATOR.match(description)
    return _OPS[m[1]] if m else None


def _listed_expression(row: Listed) -> Expression | None:
    """A listed step's expression as a step tool's description would state it: a
    formula, or two variables and an operation (a step with a constant has none, as its
    tool's description gives none)."""
    if row.decimals is not None:
        tree = _parsed(row.formula)
        return None if tree is None else Expression(row.output, None, "", "", tree, row.decimals)
    terms = _TERMS.match(row.formula)
    if terms is None or _LITERAL.match(terms[1]) or _LITERAL.match(terms[3]):
        return None
    return Expression(row.output, _OPS[terms[2]], terms[1], terms[3])


def _finish(tools: Tools, taken: set[str], prompt: str) -> str | None:
    """The tool that takes the answer: the one tool no step takes; among several (with
    distractors), the one described as taking the final answer, else the one the prompt
    says to call with the value, else the last."""
    others = [name for name in tools if name not in taken]
    if len(others) <= 1:
        return others[0] if others else None
    described = [n for n in others if "final answer" in (tools[n][0] or "").lower()]
    if described:
        return described[0]
    named = [n for n in _FINISH_NAMED.findall(prompt) if n in others]
    return named[-1] if named else others[-1]


def _opening(messages: list[Any]) -> str:
    """The system and first user message (the first two of either)."""
    prompt: list[str] = []
    for msg in messages:
        if msg.get("role") in ("system", "user") and len(prompt) < 2:
            prompt.append(text_of(msg.get("content")))
    return "\n".join(prompt)


def read_turn(body: dict[str, Any]) -> Turn:
    """Read the episode's state from a chat-completion request body."""
    tools: Tools = {}
    for tool in body.get("tools") or []:
        fn = tool.get("function", {})
        properties = fn.get("parameters", {}).get("properties", {})
        tools[fn.get("name", "")] = (fn.get("description"), list(properties))
    messages = body.get("messages", [])
    wording = _opening(messages)
    plan = _plan(tools, wording)
    steps = plan.steps

    known: dict[str, Number] = {}
    called: dict[str, str] = {}  # tool_call_id -> tool name
    failed: set[str] = set()  # the calls that failed transiently
    answered: list[Number | None] = []
    last_output: Number | None = None
    for msg in messages:
        role, content = msg.get("role"), text_of(msg.get("content"))
        if role == "user" and (line := _INPUTS.search(content)):
            known.update((var, _number(v)) for var, v in _ASSIGN.findall(line[1]))
        for call in msg.get("tool_calls") or []:
            called[call.get("id", "")] = call.get("function", {}).get("name", "")
        if role != "tool":
            continue
        name = called.get(msg.get("tool_call_id", ""))
        if _TRANSIENT.match(content):  # a model tries again: the call was not made
            failed.add(msg.get("tool_call_id", ""))
        elif name in plan.calculator:
            answered.append(_number(content.strip()) if _LITERAL.match(content.strip()) else None)
        elif m := _ASSIGN.search(content):
            known[m[1]] = _number(m[2])
            if steps and name == steps[-1]:
                last_output = known[m[1]]
    decimal = "decimal" in wording or any(isinstance(v, float) for v in known.values())
    return Turn(
        params={name: params for name, (_, params) in tools.items()},
        steps=steps,
        finish=_finish(tools, set(steps) | plan.calculator, wording),
        known=known,
        done=frozenset(name for i, name in called.items() if i not in failed),
        last_output=last_output,
        expressions=plan.expressions,
        prompt=wording,
        decimal=decimal,
        calls=plan.calls,
        answered=tuple(answered) if plan.calculator else None,
    )


def _parsed(text: str) -> formula.Node | None:
    try:
        return formula.parse(text)
    except formula.FormulaError:
        return None
