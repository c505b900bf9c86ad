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

A branched workflow (format 2) says more, and is read the same way: a step's condition
(``...; only when needs_manager``) from its tool's description or the step list; its
exits (``Exit NAME: if COND, stop here: call FINISH with ANSWER``) from the step list,
each checked before the step listed after it; typed values, a category as a JSON string
and a boolean as ``true``/``false`` in the ``Inputs:`` line, a tool's result written bare
(``queue = tier1_support``, ``needs_manager = true``, read by the parameters' schemas:
``enum`` for a category, ``boolean``); and which arguments a step may go without (those its
schema does not require). Conditions and formulas are evaluated by
:mod:`agentproc.declared.formula` (``typed=True``) on the values known so far. A call
refused because the values given make it read an optional argument (``... X is needed
with the values given``) is read as not made, and ``X`` as one the agent must work out.

The state read, and what its values settle, is a :class:`~agentproc.agents.demo.turn.Turn`
(:mod:`agentproc.agents.demo.turn`).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from agentproc.agents.demo.checks import BadRequest, number_text
from agentproc.agents.demo.listing import (
    Listed,
    condition_after,
    leading_formula,
    listed_exits,
    listed_steps,
)
from agentproc.agents.demo.loops import (
    arguments,
    called_step,
    loop_rows,
    loops_of,
    step_of,
    unshown,
)
from agentproc.agents.demo.turn import Call, Exit, Expression, Number, Turn, Value
from agentproc.arith import SYMBOL, Op
from agentproc.declared import formula
from agentproc.runs import text_of

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
_ASSIGN = re.compile(rf"\b({_NAME})\s*=\s*({_NUMBER})(?![\w:-]|\.\d)")  # not a date's year
_CALCULATOR = re.compile(r"^Compute a ([-+*/]) b\b")
_CALCULATOR_NAMES = {op.value: op for op in Op}
_TRANSIENT = re.compile(r"^Error:.*\btry again\b", re.DOTALL)
_FINISH_NAMED = re.compile(rf"\bcall ({_NAME}) with the value\b")
_DECLARED = re.compile(rf"^Step \d+ of \d+: ({_NAME}) = (.+)$", re.DOTALL)
_PASS = ". Pass the current value"
_TYPED_ASSIGN = re.compile(rf'\b({_NAME})\s*=\s*("(?:[^"\\]|\\.)*"|true|false)(?!\w)')
_TYPED_RESULT = re.compile(rf"^({_NAME}) = (.+?)(?: \(note: .*)?$", re.DOTALL)
_NEEDED = re.compile(
    rf"^Error: invalid arguments for {_NAME}: ({_NAME}) is needed with the values given\b"
)


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
    conditions: dict[str, formula.Node] = field(default_factory=dict)
    """A branched workflow: step -> its condition."""


Tools = dict[str, tuple[str | None, list[str]]]
"""Offered tool -> its description (``None``: none) and its parameter names."""


def _plan(tools: Tools, prompt: str) -> _Plan:
    """The steps: ``step_K`` tools; else tools described as ``Step K of N``; else the
    prompt's step list (naming each step's tool, or with the calculator, its operation)."""
    expressions: dict[str, Expression] = {}
    staged: list[tuple[int, str]] = []
    loops = loops_of({name: description for name, (description, _) in tools.items()})
    for name, (description, _) in tools.items():
        text = description or ""
        if (f := _FORMULA.match(text)) and (tree := _parsed(f[2])):
            when = _parsed(condition_after(text[f.end() :]))
            expressions[name] = Expression(f[1], None, "", "", tree, int(f[3]), when)
        elif e := _typed_expression(text):
            expressions[name] = e
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
    elif loops:  # the tools described, and each step of a loop by the prompt's list
        listed = loop_rows(prompt, loops)
        pairs = [(step_of(row.tool or "", row.output, loops), row) for row in listed]
        steps = [name for _, name in sorted([*staged, *((r.number, s) for s, r in pairs)])]
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
    calls = {
        step: Call(step, tuple((p, p) for p in tools[step][1])) for step in steps if step in tools
    }
    for step, row in pairs:  # a loop's step: its tool, called with its item's values
        if step not in tools and row.tool is not None:
            calls[step] = Call(row.tool, arguments(step, row.tool, tools[row.tool][1], loops))
    conditions = {s: e.when for s in steps if (e := expressions.get(s)) and e.when is not None}
    return _Plan(steps, expressions, calls, conditions=conditions)


def _typed_expression(description: str) -> Expression | None:
    """A step tool's description of a value not rounded (a category or a boolean):
    ``Step 4 of 7: needs_manager = refund > 500 (...)``, with its condition if any."""
    head = _DECLARED.match(description)
    if head is None:
        return None
    body = head[2]
    body = body[: body.rfind(_PASS)] if _PASS in body else body
    lead = leading_formula(body)
    tree = None if lead is None else _parsed(lead[0])
    if lead is None or tree is None:
        return None
    return Expression(head[1], None, "", "", tree, None, _parsed(condition_after(lead[1])))


def _calculator_plan(tools: Tools, rows: list[Listed]) -> _Plan:
    """Each listed step called with the calculator tool of its operation (no steps: a
    step whose operation no tool offered computes)."""
    by_op = {op: name for name, (d, p) in tools.items() if (op := _operation(name, d, p))}
    steps: list[str] = []
    expressions: dict[str, Expression] = {}
    calls: dict[str, Call] = {}
    for row in rows:
        terms = _TERMS.match(row.formula) if row.decimals is None and not row.typed else None
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
    if row.decimals is not None or row.typed:
        tree = _parsed(row.formula)
        if tree is None:
            return None
        return Expression(row.output, None, "", "", tree, row.decimals, _parsed(row.when))
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
    optional: dict[str, frozenset[str]] = {}
    kinds: dict[str, str] = {}  # variable -> "category" or "boolean", by the schemas
    first: dict[str, str | None] = {}  # tool -> its first parameter's type, by its schema
    for tool in body.get("tools") or []:
        fn = tool.get("function", {})
        parameters = fn.get("parameters") or {}
        properties = parameters.get("properties") or {}
        tools[fn.get("name", "")] = (fn.get("description"), list(properties))
        required = parameters.get("required")
        if isinstance(required, list):
            optional[fn.get("name", "")] = frozenset(p for p in properties if p not in required)
        for var, schema in properties.items():
            kind = _kind(schema) if isinstance(schema, dict) else None
            first.setdefault(fn.get("name", ""), kind)
            if kind is not None:
                kinds.setdefault(var, kind)
    messages = body.get("messages", [])
    wording = _opening(messages)
    loops = loops_of({name: description for name, (description, _) in tools.items()})
    if loops:  # each list's items one by one, each of its steps by its item
        wording = unshown(wording)
    plan = _plan(tools, wording)
    steps = plan.steps

    known: dict[str, Value] = {}
    called: dict[str, str] = {}  # tool_call_id -> tool name
    failed: set[str] = set()  # the calls that failed transiently
    needed: set[str] = set()
    answered: list[Number | None] = []
    last_output: Value | None = None
    for msg in messages:
        role, content = msg.get("role"), text_of(msg.get("content"))
        if role == "user" and loops:
            content = unshown(content)
        if role == "user" and (line := _INPUTS.search(content)):
            known.update((var, _number(v)) for var, v in _ASSIGN.findall(line[1]))
            known.update((var, json.loads(v)) for var, v in _TYPED_ASSIGN.findall(line[1]))
        for call in msg.get("tool_calls") or []:
            fn = call.get("function", {})
            name = fn.get("name", "")
            if name in loops:  # the step of the item it names
                name = called_step(name, fn.get("arguments"), loops, known)
            called[call.get("id", "")] = name
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
        elif (t := _TYPED_RESULT.match(content.strip())) and (v := _typed(t[2], kinds.get(t[1]))):
            known[t[1]] = v[0]
            if steps and name == steps[-1]:
                last_output = v[0]
        elif n := _NEEDED.match(content):  # it needs a value the call left out
            failed.add(msg.get("tool_call_id", ""))
            needed.add(n[1])
    decimal = "decimal" in wording or any(isinstance(v, float) for v in known.values())
    finish = _finish(tools, set(steps) | plan.calculator, wording)
    return Turn(
        params={name: params for name, (_, params) in tools.items()},
        steps=steps,
        finish=finish,
        known=known,
        done=frozenset(name for i, name in called.items() if i not in failed),
        last_output=last_output,
        expressions=plan.expressions,
        prompt=wording,
        decimal=decimal,
        calls=plan.calls,
        answered=tuple(answered) if plan.calculator else None,
        conditions=plan.conditions,
        exits=_exits(wording) if steps and not plan.calculator else (),
        optional=optional,
        needed=frozenset(needed),
        answer_kind=first.get(finish) if finish is not None else None,
    )


def _kind(schema: dict[str, Any]) -> str | None:
    """A parameter's type by its schema: a category (``enum``) or a boolean."""
    if isinstance(schema.get("enum"), list):
        return "category"
    return "boolean" if schema.get("type") == "boolean" else None


def _typed(text: str, kind: str | None) -> tuple[Value] | None:
    """A tool result's value that is not a number: a boolean (``true``/``false``, unless
    the schemas say the variable is a category) or a category's name (``None``: an
    undefined value, ``none``)."""
    text = text.strip()
    if kind != "category" and text in ("true", "false"):
        return (text == "true",)
    if not text or (kind is None and text == "none"):
        return None
    return (text,)


def _exits(prompt: str) -> tuple[Exit, ...]:
    """The exits the prompt lists, with their conditions parsed."""
    exits = []
    for e in listed_exits(prompt):
        tree = _parsed(e.when)
        if tree is not None:
            exits.append(Exit(e.after, tree, e.answer))
    return tuple(exits)


def _parsed(text: str | None) -> formula.Node | None:
    """A formula's tree: the arithmetic grammar, else the typed one (``None``: neither,
    or no text)."""
    if text is None:
        return None
    try:
        return formula.parse(text)
    except formula.FormulaError:
        pass
    try:
        return formula.parse(text, True)
    except formula.FormulaError:
        return None
