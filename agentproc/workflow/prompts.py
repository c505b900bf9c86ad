"""What an agent is told: the tool-mode prompt compiled into a scenario, the opening
messages of an episode, and the text-mode protocol of the reference study."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentproc.arith import SCALE, render, to_units

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


def render_prompt(scenario: Scenario) -> str:
    """The instructions an agent is given for a scenario in tool mode."""
    finish = scenario.finish
    shown = ", ".join(f"{k} = {v}" for k, v in scenario.inputs.items())
    lines = [f"{s.step}. {s.text}" for s in scenario.steps]
    rounding = (
        "Every value is rounded to 3 decimal places (half away from zero)."
        if scenario.mode == "decimal"
        else "Every value is an integer."
    )
    return (
        "Execute the following procedure exactly, one step at a time, using the tools.\n"
        f"Inputs: {shown}.\n"
        "Steps:\n" + "\n".join(lines) + "\n"
        "For step K call the tool step_K with the current values of its operands, as given "
        f"above or returned by earlier tools. Execute every step, in order. {rounding} "
        f"When all steps are done, call {finish.tool} with the value of {scenario.answer_variable}."
    )


def opening_messages(scenario: Scenario) -> list[dict[str, Any]]:
    """The system and user messages a tool-mode agent starts from."""
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
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
