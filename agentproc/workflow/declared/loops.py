"""A looped step's expanded steps as a scenario holds them: one tool, the loop's, taken
by every item's step, its arguments by their names in the loop (the item as its item
variable, ``owner``; a looped output of the same item by its own name, ``share``).

:mod:`agentproc.declared.loops` expands the file into one step per item
(``verify_owner__1`` reading ``owners__1`` and ``share__1``); here each such step gets
back its loop's tool name (``verify_owner``), the faithful call's arguments by their loop
names (``{"owner": "P-04", "share": 31}``) and its :class:`~agentproc.workflow.scenario
.StepLoop`, which the mock tools read to give a call the step of the item it names.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from agentproc.declared.file import DeclaredWorkflow, StepSpec
from agentproc.declared.loops import expanded, shown
from agentproc.workflow.declared.view import description_of, head, shown_value
from agentproc.workflow.scenario import Scenario, ScenarioStep
from agentproc.workflow.variant import fill_template

_SUFFIX = re.compile(r"__\d+$")


def mark_loops(wf: DeclaredWorkflow, steps: list[dict[str, Any]], inputs: dict[str, Any]) -> None:
    """Give each step of a loop (in ``steps``, a scenario's steps as JSON) its loop's
    tool, its arguments by their loop names and its ``loop``; ``inputs``: every input's
    value as the scenario holds it."""
    if wf.looped is None:
        return
    loops: dict[str, tuple[str, str]] = {}
    for s in wf.looped.steps:
        if isinstance(s, StepSpec) and s.for_each is not None:
            item, over = s.for_each.split()[0], s.for_each.split()[-1]
            loops[s.tool] = (item, over)
    for step in steps:
        call = step["expected_call"]
        base, _, at = call["name"].rpartition("__")
        if base not in loops or not at.isdigit():
            continue
        i = int(at)
        item, over = loops[base]
        own = expanded(over, i)
        parameters = {v: item if v == own else _SUFFIX.sub("", v) for v in step["operands"]}
        call["name"] = base
        call["arguments"] = {parameters[v]: value for v, value in call["arguments"].items()}
        step["loop"] = {
            "item": i,
            "variable": item,
            "value": str(inputs[own]),
            "parameters": {v: p for v, p in parameters.items() if p != v},
        }


def list_items(wf: DeclaredWorkflow, inputs: Mapping[str, Any]) -> dict[str, list[str]] | None:
    """Each list input's items, in order, from the inputs of its expansion (``None``: a
    workflow without lists)."""
    if wf.looped is None:
        return None
    lists = [n for n, spec in wf.looped.inputs.items() if spec.is_list]
    return {n: [str(v) for k, v in inputs.items() if k.rpartition("__")[0] == n] for n in lists}


def loop_name(s: ScenarioStep) -> Callable[[str], str]:
    """A step of a loop's variables by their names in the loop (its item's input as the
    item variable, any other expanded name without its item); any other step's as
    themselves."""
    loop = s.loop
    if loop is None:
        return str
    own = next((v for v, p in loop.parameters.items() if p == loop.variable), None)
    return lambda v: loop.variable if v == own else _SUFFIX.sub("", v)


def step_label(s: ScenarioStep) -> str:
    """A step as reports name it: its tool, and a loop's item, ``verify_owner[2]``."""
    return s.name if s.loop is None else f"{s.name}[{s.loop.item}]"


def loop_text(s: ScenarioStep) -> str:
    """A step of a loop as its one tool describes it: the step in the loop's names, for
    every item (``verified = lookup(people, owner, 'id_ok'); only when share >= 25``)."""
    text = head(s, loop_name(s))
    described = description_of(s)
    return shown(f"{text} ({described})" if described else text)


def loop_tool_description(s: ScenarioStep) -> str:
    """The description of a loop's one tool: its step in the loop's names, and how a
    call names its item."""
    loop = s.loop
    if loop is None:
        raise ValueError(f"step {s.step} is no step of a loop")
    over = next((_SUFFIX.sub("", v) for v, p in loop.parameters.items() if p == loop.variable), "")
    return (
        f"For each {loop.variable} in {over}: {loop_text(s)}. Call it once per item: pass "
        f"the item as {loop.variable} and that item's own values; the tool returns that "
        f"item's {loop_name(s)(s.output)}."
    )


LOOP_HELP = (
    "A list's items are numbered from 0 ({list}[0] is the first). A step shown with "
    "[i] is done for item i of its list: call its tool once for each item, passing "
    "the item and that item's own values. Another step's tool takes an item's value "
    "by its name and number joined by two underscores ({output}[0] as {output}__0)."
)
"""What a prompt with loops adds after its steps (a list's and a looped output's names
filled in)."""


def listed_inputs(inputs: Mapping[str, Any]) -> str:
    """A scenario's inputs as a prompt lists them, each list's items as one list
    (``owners = ["P-04", "P-01"]``)."""
    grouped: dict[str, Any] = {}
    for name, value in inputs.items():
        base, _, at = name.rpartition("__")
        if base and at.isdigit():
            grouped.setdefault(base, []).append(value)
        else:
            grouped[name] = value
    return ", ".join(
        f"{k} = [{', '.join(map(shown_value, v))}]"
        if isinstance(v, list)
        else f"{k} = {shown_value(v)}"
        for k, v in grouped.items()
    )


def loop_prompt(scenario: Scenario, description: str, template: str, values: dict[str, str]) -> str:
    """The tool-mode prompt of a workflow with loops: its lists as lists, each expanded
    step and variable by its item (``share[0]``), and how a loop's tool is called."""
    values = {
        **values,
        "inputs": listed_inputs(scenario.inputs),
        "procedure": shown(values["procedure"]),
    }
    first = next(s for s in scenario.steps if s.loop is not None)
    name = loop_name(first)
    own = next(v for v, p in first.loop.parameters.items() if p == first.loop.variable)  # type: ignore[union-attr]
    told = LOOP_HELP.format(list=own.rpartition("__")[0], output=name(first.output))
    return f"{description}\n" + fill_template(template, values) + f"\n{told}"


def item_step(
    steps: Sequence[ScenarioStep], got: Any, runs: Collection[int], skip: Collection[int]
) -> ScenarioStep:
    """The step a call of a loop's tool executes (``steps``: the loop's, in item order;
    ``got``: the item the call names): that of the item it names; for a name no item
    has, the step of the loop expected next, as the calculator aligns a call no operand
    explains (the earliest the path requires not yet run, else the earliest not yet
    run), else the first (a repeat)."""
    named = next((s for s in steps if s.loop is not None and s.loop.value == got), None)
    if named is not None:
        return named
    waiting = [s for s in steps if s.step not in runs]
    due = (s for s in waiting if s.step not in skip)
    return next(due, waiting[0] if waiting else steps[0])
