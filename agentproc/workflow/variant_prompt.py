"""The user prompt a variant writes: the steps rendered as it asks (numbered, prose,
pseudo-code or JSON) and the built-in wording for its tool set. Pure; used by
:func:`~agentproc.workflow.present.present`.
"""

from __future__ import annotations

import json
import re

from agentproc.arith import SYMBOL, Op
from agentproc.workflow.declared.view import answer_text, shown_value
from agentproc.workflow.declared.view import render as render_declared
from agentproc.workflow.prompts import (
    DECLARED_SCRAMBLED_TOOLS,
    DECLARED_TOOLS,
    STEP_TOOLS,
    declared_template,
    tool_prompt,
)
from agentproc.workflow.scenario import FINISH_TOOL, Scenario, ScenarioStep
from agentproc.workflow.variant import Variant, fill_template

_WORD = {Op.ADD: "plus", Op.SUB: "minus", Op.MUL: "times", Op.DIV: "divided by"}
"""Each operation as the prose rendering says it."""


def render_steps(scenario: Scenario, rendering: str, names: dict[str, str]) -> str:
    """The steps as the prompt writes them: numbered, prose, pseudo-code or JSON."""
    return _RENDERINGS[rendering](scenario, names)


def _numbered(scenario: Scenario, names: dict[str, str]) -> str:
    return "\n".join(f"{s.step}. {_expression(s, names)}" for s in scenario.steps)


def _prose(scenario: Scenario, names: dict[str, str]) -> str:
    parts = []
    last = len(scenario.steps)
    for s in scenario.steps:
        a, b = s.terms(names.__getitem__)
        lead = "First" if s.step == 1 else "Finally" if s.step == last else "Then"
        word = _WORD[s.operation]
        parts.append(f"{lead}, compute {names[s.output]} as {a} {word} {b} (step {s.step}).")
    return " ".join(parts)


def _pseudocode(scenario: Scenario, names: dict[str, str]) -> str:
    lines = [f"procedure({names['S1']}, {names['S2']}):"]
    for s in scenario.steps:
        a, b = s.terms(names.__getitem__)
        lines.append(f"    {names[s.output]} <- {a} {SYMBOL[s.operation]} {b}    # step {s.step}")
    lines.append(f"    return {names[scenario.answer_variable]}")
    return "\n".join(lines)


def _json(scenario: Scenario, names: dict[str, str]) -> str:
    rows = [
        {
            "step": s.step,
            "output": names[s.output],
            "op": s.operation.value,
            "left": names[s.operands[0]],
            "right": names[s.operands[-1]] if s.constant is None else s.constant,
        }
        for s in scenario.steps
    ]
    return "\n".join(json.dumps(r) for r in rows)


_RENDERINGS = {"numbered": _numbered, "prose": _prose, "pseudocode": _pseudocode, "json": _json}


def _expression(s: ScenarioStep, names: dict[str, str]) -> str:
    a, b = s.terms(names.__getitem__)
    return f"{names[s.output]} = {a} {SYMBOL[s.operation]} {b}"


def variant_prompt(
    scenario: Scenario,
    variant: Variant,
    names: dict[str, str],
    shown_tools: list[str],
    calculator: str,
    tool_names: dict[str, str] | None = None,
) -> str:
    """The user prompt: the variant's template (or the built-in one for its tool set)
    filled with the rendered steps, the inputs, the tools shown and the answer variable,
    in the names the agent sees; ``calculator`` lists the calculator tools' names,
    ``tool_names`` the names shown of a declared workflow's tools."""
    if scenario.declared:
        return _declared_prompt(scenario, variant, names, shown_tools, tool_names or {})
    inputs = ", ".join(f"{names[k]} = {v}" for k, v in scenario.inputs.items())
    values = {
        "procedure": render_steps(scenario, variant.rendering, names),
        "inputs": inputs,
        "tools": ", ".join(shown_tools),
        "answer_variable": names[scenario.answer_variable],
    }
    template = variant.prompt.user
    if template is None:
        template = _builtin(variant, scenario.mode, calculator)
    return fill_template(template, values)


def _builtin(variant: Variant, mode: str, calculator: str) -> str:
    """The built-in user prompt, worded for the tool set."""
    if variant.tools == "calculator":
        how = (
            f"Compute each step with the tool of its operation ({calculator}), passing "
            "the current values of its operands as a and b, as given above or returned by "
            "earlier tools."
        )
    elif variant.scramble_names:
        how = (
            "Each step has its own tool (see the tool descriptions); call it with the current "
            "values of its operands, as given above or returned by earlier tools."
        )
    else:
        how = STEP_TOOLS
    return tool_prompt(how, mode, "submit_answer")


_FINISH_WORD = re.compile(rf"\b{FINISH_TOOL}\b")


def _declared_prompt(
    scenario: Scenario,
    variant: Variant,
    names: dict[str, str],
    shown_tools: list[str],
    tool_names: dict[str, str],
) -> str:
    """:func:`variant_prompt` of a declared workflow: each step with its tool (unless
    the tool names are scrambled), output and formula; the built-in prompt leads with
    the workflow's description. A template names the finish tool ``submit_answer`` (the
    shipped ones are written for procedures): on a workflow whose finish tool is another,
    that name is read as it."""

    def tool(s: ScenarioStep) -> str | None:
        return None if variant.scramble_names else tool_names.get(s.name, s.name)

    finish = scenario.finish.tool
    values = {
        "procedure": render_declared(scenario, variant.rendering, names.get, tool),
        "inputs": ", ".join(f"{names[k]} = {shown_value(v)}" for k, v in scenario.inputs.items()),
        "tools": ", ".join(shown_tools),
        "answer_variable": answer_text(scenario, names[scenario.answer_variable]),
    }
    template = variant.prompt.user
    if template is None:
        how = DECLARED_SCRAMBLED_TOOLS if variant.scramble_names else DECLARED_TOOLS
        lead = f"{(scenario.description or '').strip()}\n"
        template = declared_template(how, finish, scenario.path is not None)
        return lead + fill_template(template, values)
    if finish != FINISH_TOOL:
        template = _FINISH_WORD.sub(finish, template)
    return fill_template(template, values)
