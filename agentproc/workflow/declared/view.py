"""A declared workflow's steps as a variant shows them: in other variable names, in a
shuffled order, rendered as a numbered list, prose, pseudo-code or JSON; and why a
variant cannot show them (:func:`refusal_reason`). Pure; used by
:func:`~agentproc.workflow.present.present` and the mock tools.

A declared workflow's variables keep their declared names inside (the canonical names
of :class:`~agentproc.workflow.present.Presented`), as a procedure's keep ``S1``, ...;
what the agent sees is each name as the variant gives it, written into the formulas
(a formula's variable names are its only identifiers besides the functions, which no
variable may be named after).

>>> rename_formula("max(amount - 2e3, 0) * rate", {"amount": "x", "rate": "y"}.get)
'max(x - 2e3, 0) * y'
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from random import Random

from agentproc.declared.formula import CHOOSERS, DATE_FUNCTIONS, FUNCTIONS, LITERALS, LOOKUP
from agentproc.workflow.scenario import Scenario, ScenarioStep
from agentproc.workflow.scenario_types import ScenarioExit
from agentproc.workflow.variant import Variant

_IDENTIFIER = re.compile(r"'[^']*'|\"[^\"]*\"|(?<![\w.])[A-Za-z_]\w*")
"""A name in a formula (a numeric literal's exponent, ``2e3``, is no name: it follows a
digit), or a quoted category, matched whole so that no name inside it is read."""
_KEPT = frozenset({*FUNCTIONS, *CHOOSERS, *DATE_FUNCTIONS, LOOKUP, *LITERALS, "and", "or", "not"})
"""The words of a formula that are no variable: functions, ``true``/``false``, operators."""

Name = Callable[[str], str | None]
"""A canonical variable -> the name shown (``None``: its own)."""
ToolLabel = Callable[[ScenarioStep], str | None]
"""A step -> the tool name the prompt gives it (``None``: none, scrambled tool names)."""


def own_names(var: str) -> str | None:
    """The :data:`Name` that shows every variable under its own name (a rendering given
    it writes each step's text and condition as they are, without renaming them)."""
    return None


def refusal_reason(
    scenario: Scenario, variant: Variant, distractors: Sequence[tuple[str, str]]
) -> str | None:
    """Why ``variant`` cannot present a declared workflow's scenario (``None``: it can),
    ``distractors`` being every distractor tool there is."""
    if not scenario.declared:
        return None
    # The loops first: ``is_default`` dumps the variant, on every episode's check.
    if any(s.loop is not None for s in scenario.steps) and not variant.is_default:
        return (
            "a workflow with loops offers one tool for the steps of each loop, which "
            "variants do not present yet"
        )
    if variant.tools == "calculator":
        return (
            "the calculator offers add, sub, mul and div; a declared step computes a "
            "formula, which no one of them is"
        )
    if variant.names == "descriptive":
        return (
            "descriptive names are made from a procedure's operations; a declared "
            "workflow's variables have their declared names"
        )
    if variant.names != "none" and scenario.answer_fields:
        return (
            "a multi-field answer's finish tool takes each field by its declared name; "
            "renamed variables would hide which field is which"
        )
    if variant.prefill is not None and scenario.path is not None:
        return (
            "a pre-fill gives the first listed steps; a branched workflow's instance "
            "requires only the steps of its path"
        )
    if not variant.distractors:  # none asked for: the names need not be counted
        return None
    free = len(free_distractors(scenario, distractors))
    if variant.distractors > free:
        return (
            f"it asks for {variant.distractors} distractor tools; the workflow's own tool "
            f"names leave {free}"
        )
    return None


def refusal_line(
    scenario: Scenario, variant: Variant, distractors: Sequence[tuple[str, str]]
) -> str | None:
    """:func:`refusal_reason` in a line naming the variant."""
    why = refusal_reason(scenario, variant, distractors)
    if why is None:
        return None
    return f"variant {variant.name!r} does not apply to a declared workflow ({why})"


def free_distractors(
    scenario: Scenario, distractors: Sequence[tuple[str, str]]
) -> tuple[tuple[str, str], ...]:
    """The ``distractors`` whose names no tool of the scenario has (a declared workflow's
    tools have names of their own), in order."""
    taken = {s.name for s in scenario.steps} | {scenario.finish.tool}
    return tuple(d for d in distractors if d[0] not in taken)


def rename_formula(formula: str, name: Name) -> str:
    """``formula`` with each variable as ``name`` gives it (functions, and the tables a
    look-up reads, are kept)."""

    def shown(m: re.Match[str]) -> str:
        word = m.group()
        if word in _KEPT or word[0] in "'\"":
            return word
        try:
            return name(word) or word
        except KeyError:  # no variable: a table's name
            return word

    return _IDENTIFIER.sub(shown, formula)


def head(s: ScenarioStep, name: Name | None = None) -> str:
    """The start of a declared step's text, before its description: its output, formula,
    decimals (a number's) and condition (a branched workflow's), in the names shown."""
    if name is None:
        text = f"{s.output} = {s.formula}"
    else:
        text = f"{name(s.output) or s.output} = {rename_formula(s.formula or '', name)}"
    if s.decimals is not None:
        text += f", rounded to {s.decimals} decimals"
    if s.when is not None:
        text += f"; only when {s.when if name is None else rename_formula(s.when, name)}"
    return text


def description_of(s: ScenarioStep) -> str:
    """A declared step's description, as its text holds it (``""``: none)."""
    rest = s.text[len(head(s)) :] if s.text.startswith(head(s)) else ""
    return rest[2:-1] if rest.startswith(" (") and rest.endswith(")") else ""


def step_text(s: ScenarioStep, name: Name) -> str:
    """A declared step's :attr:`~ScenarioStep.text` in the names shown."""
    if name is own_names:  # what the check below finds, without parsing the condition
        return s.text
    if all((name(v) or v) == v for v in (s.output, *s.operands, *_when_reads(s))):
        return s.text
    described = description_of(s)
    text = head(s, name)
    return f"{text} ({described})" if described else text


def _when_reads(s: ScenarioStep) -> tuple[str, ...]:
    """The variables a step's condition reads (none without one)."""
    if s.when is None:
        return ()
    from agentproc.declared.formula import parse, variables

    return tuple(variables(parse(s.when, True)))


def dependency_order(steps: list[ScenarioStep], rng: Random) -> list[ScenarioStep]:
    """The steps in a seeded dependency-valid order, the answer step (the last) last."""
    last = steps[-1].step
    placed: set[int] = set()
    order: list[ScenarioStep] = []
    while len(order) < len(steps) - 1:
        ready = [s for s in steps if s.step not in placed and s.step != last and s.reads <= placed]
        pick = ready[int(rng.random() * len(ready))]
        placed.add(pick.step)
        order.append(pick)
    order.append(steps[-1])
    return order


def shuffled(scenario: Scenario, rng: Random) -> Scenario:
    """A declared workflow's steps in a seeded dependency-valid order (the answer step
    last), renumbered in it; variables keep their names, tools theirs."""
    steps = scenario.steps
    order = dependency_order(steps, rng)
    position = {s.step: k for k, s in enumerate(order, 1)}
    index = {v: i for i, v in enumerate([*scenario.inputs, *(s.output for s in order)], 1)}
    rows = []
    for k, s in enumerate(order, 1):
        row = s.model_dump(mode="json")
        row["step"] = k
        row["depends_on"] = sorted(position[d] for d in s.depends_on)
        row["distances"] = [index[s.output] - index[v] for v in s.operands]
        rows.append(row)
    data = scenario.model_dump(mode="json") | {"steps": rows, "tools": [], "prompt": ""}
    return Scenario.model_validate(data)


def render(scenario: Scenario, rendering: str, name: Name, tool: ToolLabel) -> str:
    """The steps as the prompt writes them: numbered, prose, pseudo-code or JSON (a
    branched workflow's exits in their places)."""
    step_chunk, exit_chunk, join = _RENDERINGS[rendering]
    chunks = [step_chunk(scenario, s, name, tool) for s in scenario.steps]
    for e in reversed(scenario.exits or ()):
        chunks.insert(e.after, exit_chunk(scenario, e, name))
    if rendering == "pseudocode":
        shown = [name(v) or v for v in scenario.inputs]
        answer = scenario.answer_variable
        chunks = [f"workflow({', '.join(shown)}):", *chunks, f"    return {name(answer) or answer}"]
    return join.join(chunks)


def shown_value(value: object) -> str:
    """A value as a prompt writes it: a number as itself, a category as a JSON string, a
    boolean as ``true`` or ``false``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value) if isinstance(value, str) else str(value)


def _when(s: ScenarioStep | ScenarioExit, name: Name) -> str:
    if name is own_names:  # what renaming gives, without reading the formula again
        return s.when or ""
    return rename_formula(s.when or "", name)


def _numbered(scenario: Scenario, s: ScenarioStep, name: Name, tool: ToolLabel) -> str:
    called = tool(s)
    lead = f"{s.step}. {called}: " if called else f"{s.step}. "
    return lead + step_text(s, name)


def exit_answer_text(e: ScenarioExit) -> str:
    """An exit's answer as the prompt shows it (a multi-field answer's: every field,
    ``decision = "reject", payout = 0``)."""
    if e.fields is None:
        return shown_value(e.answer)
    return ", ".join(f"{f} = {shown_value(v)}" for f, v in e.fields.items())


def answer_text(scenario: Scenario, name: str) -> str:
    """What the finish tool is called with, as the prompt says it: the value of the answer
    variable (shown as ``name``), or a multi-field answer's every field."""
    if not scenario.answer_fields:
        return name
    return "each field of the answer, one argument each: " + ", ".join(scenario.answer_fields)


def _exit_text(scenario: Scenario, e: ScenarioExit, name: Name) -> str:
    text = f"if {_when(e, name)}, stop here: call {scenario.finish.tool} with {exit_answer_text(e)}"
    return text + (f" ({e.description.rstrip('.')})" if e.description else "")


def _numbered_exit(scenario: Scenario, e: ScenarioExit, name: Name) -> str:
    return f"Exit {e.name}: {_exit_text(scenario, e, name)}"


def _prose(scenario: Scenario, s: ScenarioStep, name: Name, tool: ToolLabel) -> str:
    last = len(scenario.steps)
    lead = "First" if s.step == 1 else "Finally" if s.step == last else "Then"
    called = tool(s)
    how = f"call {called} to compute" if called else "compute"
    return f"{lead}, {how} {step_text(s, name)} (step {s.step})."


def _prose_exit(scenario: Scenario, e: ScenarioExit, name: Name) -> str:
    return f"At this point, {_exit_text(scenario, e, name)} (exit {e.name})."


def _pseudocode(scenario: Scenario, s: ScenarioStep, name: Name, tool: ToolLabel) -> str:
    formula = rename_formula(s.formula or "", name)
    called = tool(s)
    note = f"# step {s.step}: {called}" if called else f"# step {s.step}"
    value = f"round({formula}, {s.decimals})" if s.decimals is not None else formula
    line = f"{name(s.output) or s.output} <- {value}    {note}"
    return f"    if {_when(s, name)}: {line}" if s.when else f"    {line}"


def _pseudocode_exit(scenario: Scenario, e: ScenarioExit, name: Name) -> str:
    return f"    if {_when(e, name)}: return {exit_answer_text(e)}    # exit {e.name}"


def _json(scenario: Scenario, s: ScenarioStep, name: Name, tool: ToolLabel) -> str:
    called = tool(s)
    row: dict[str, object] = {"step": s.step, **({"tool": called} if called else {})}
    row |= {
        "output": name(s.output) or s.output,
        "formula": rename_formula(s.formula or "", name),
        "decimals": s.decimals,
    }
    if s.when:
        row["when"] = _when(s, name)
    described = description_of(s)
    if described:
        row["description"] = described
    return json.dumps(row)


def _json_exit(scenario: Scenario, e: ScenarioExit, name: Name) -> str:
    answer = e.answer if e.fields is None else e.fields
    row: dict[str, object] = {"exit": e.name, "when": _when(e, name), "answer": answer}
    if e.description:
        row["description"] = e.description
    return json.dumps(row)


_RENDERINGS: dict[str, tuple[Callable[..., str], Callable[..., str], str]] = {
    "numbered": (_numbered, _numbered_exit, "\n"),
    "prose": (_prose, _prose_exit, " "),
    "pseudocode": (_pseudocode, _pseudocode_exit, "\n"),
    "json": (_json, _json_exit, "\n"),
}
"""A rendering's step, its exit and what joins them."""
