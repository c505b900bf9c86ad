"""What an agent is told: the tool-mode prompt compiled into a scenario, the opening
messages of an episode, and the text-mode protocol of the reference study."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentproc.arith import SCALE, render, to_units
from agentproc.workflow.variant import fill_template

if TYPE_CHECKING:
    from agentproc.workflow.scenario import Scenario

SYSTEM_PROMPT = (
    "You are a careful assistant that executes procedures with tools. "
    "Call exactly one tool at a time and use the values the tools return."
)
"""The system message of a tool-mode episode."""

TEXT_SYSTEM_PROMPT = (
    "You are a careful calculator. Execute the procedure you are given exactly, "
    "step by step, and write your work in the requested format."
)
"""The system message of a text-mode episode."""


STEP_TOOLS = (
    "For step K call the tool step_K with the current values of its operands, as given "
    "above or returned by earlier tools."
)
"""How the built-in prompt says to use per-step tools."""


DECLARED_TOOLS = (
    "For each step call its tool (named before the step) with the current values of the "
    "variables it reads, as given above or returned by earlier tools."
)
"""How the built-in prompt of a declared workflow says to use its tools."""


def render_prompt(scenario: Scenario) -> str:
    """The instructions an agent is given for a scenario in tool mode."""
    if scenario.description is not None:
        return declared_prompt(scenario, scenario.description)
    values = {
        "inputs": ", ".join(f"{k} = {v}" for k, v in scenario.inputs.items()),
        "procedure": "\n".join(f"{s.step}. {s.text}" for s in scenario.steps),
        "answer_variable": scenario.answer_variable,
    }
    return fill_template(tool_prompt(STEP_TOOLS, scenario.mode, scenario.finish.tool), values)


DECLARED_SCRAMBLED_TOOLS = (
    "Each step has its own tool (see the tool descriptions); call it with the current "
    "values of the variables it reads, as given above or returned by earlier tools."
)
"""How a declared workflow's built-in prompt says to use tools whose names are scrambled."""


def declared_prompt(scenario: Scenario, description: str) -> str:
    """The tool-mode prompt of a declared workflow: its description, inputs and steps
    (each with its tool, formula and rounding)."""
    from agentproc.workflow.declared.view import answer_text, own_names, render, shown_value

    values = {
        "inputs": ", ".join(f"{k} = {shown_value(v)}" for k, v in scenario.inputs.items()),
        "procedure": render(scenario, "numbered", own_names, lambda s: s.name),
        "answer_variable": answer_text(scenario, scenario.answer_variable),
    }
    template = declared_template(DECLARED_TOOLS, scenario.finish.tool, scenario.path is not None)
    if any(s.loop is not None for s in scenario.steps):
        from agentproc.workflow.declared.loops import loop_prompt

        return loop_prompt(scenario, description, template, values)
    return f"{description}\n" + fill_template(template, values)


def declared_template(how: str, finish_tool: str, branched: bool = False) -> str:
    """The built-in tool-mode user prompt of a declared workflow after its description,
    ``how`` saying how to use the tools, with ``{inputs}``, ``{procedure}`` and
    ``{answer_variable}`` left to fill in (``branched``: a workflow with conditions and
    exits)."""
    every = "Execute every step, in order."
    if branched:
        every = (
            "Execute every step whose condition holds, in order, and skip a step whose "
            "condition ('only when ...') does not hold. Where an exit's condition holds, "
            f"stop there and call {finish_tool} with its answer."
        )
    return (
        "Execute the following workflow exactly, one step at a time, using the tools.\n"
        "Inputs: {inputs}.\n"
        "Steps:\n{procedure}\n"
        f"{how} {every} Each value is rounded as its step "
        "says (half away from zero). "
        f"When all steps are done, call {finish_tool} with the value of {{answer_variable}}."
    )


def tool_prompt(how: str, mode: str, finish_tool: str) -> str:
    """The built-in tool-mode user prompt, ``how`` saying how to use the tools, with
    ``{inputs}``, ``{procedure}`` and ``{answer_variable}`` left to fill in."""
    rounding = (
        "Every value is rounded to 3 decimal places (half away from zero)."
        if mode == "decimal"
        else "Every value is an integer."
    )
    return (
        "Execute the following procedure exactly, one step at a time, using the tools.\n"
        "Inputs: {inputs}.\n"
        "Steps:\n{procedure}\n"
        f"{how} Execute every step, in order. {rounding} "
        f"When all steps are done, call {finish_tool} with the value of {{answer_variable}}."
    )


def opening_messages(scenario: Scenario, system: str = SYSTEM_PROMPT) -> list[dict[str, Any]]:
    """The system and user messages a tool-mode agent starts from (``system``: a variant's
    own system message)."""
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": scenario.prompt},
    ]


def text_prompt(scenario: Scenario) -> str:
    """The instructions for a scenario in text mode: inputs, steps and the output format."""
    scale, inputs = SCALE[scenario.mode], scenario.inputs.items()
    shown = ", ".join(f"{k} = {render(to_units(v, scale), scale)}" for k, v in inputs)
    rounding = "Every value is an integer (every division is exact)."
    if scenario.mode == "decimal":
        rounding = "Round every value to 3 decimals (half away from zero); write all 3 decimals."
    return (
        "Execute the following procedure exactly, one step at a time, without tools.\n"
        f"Inputs: {shown}.\n"
        "Steps:\n" + "\n".join(f"{s.step}. {s.text}" for s in scenario.steps) + "\n"
        f"{rounding} Use the values you computed in earlier steps.\n"
        "Output format: one line per step, in order, with nothing else on the line, exactly like\n"
        "S<k> = <the value of S<k>>\n"
        "(the variable, '=', its value). After the last step, write one final line:\n"
        f"Answer: <the value of {scenario.answer_variable}>"
    )


def text_messages(scenario: Scenario) -> list[dict[str, Any]]:
    """The system and user messages of a text-mode episode."""
    user = {"role": "user", "content": text_prompt(scenario)}
    return [{"role": "system", "content": TEXT_SYSTEM_PROMPT}, user]
