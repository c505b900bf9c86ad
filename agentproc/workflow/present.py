"""A scenario as a variant presents it: listed order, names, tools and prompt. Pure.

:func:`present` turns a scenario and a :class:`~agentproc.workflow.variant.Variant`
into a :class:`Presented`: the scenario the mock tools and the monitor execute
(steps renumbered in the listed order, so the monitor follows that order; the
answer step stays last), the names the agent sees for every variable and tool,
the offered tools and the opening messages. Everything is seeded by the
variant's seed and the scenario id, so the same pair always presents the same way
(replay and relabel rebuild it from the variant stored in the run file).

Inside, variables keep their canonical names (``S7``: the 7th in listed order);
the agent sees :attr:`Presented.names` of them and its arguments are translated
back on the way in. A declared workflow's variables and tools keep their declared
names inside (:mod:`agentproc.workflow.declared.view` shows its steps).
"""

from __future__ import annotations

import random
import string
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from agentproc.arith import SYMBOL, VERB, Op
from agentproc.errors import ConfigError
from agentproc.workflow.compile import NUMBER_TYPE, make_tools
from agentproc.workflow.declared.view import dependency_order, free_distractors, refusal_line
from agentproc.workflow.declared.view import shuffled as shuffled_declared
from agentproc.workflow.prompts import SYSTEM_PROMPT
from agentproc.workflow.scenario import ExpectedCall, Scenario, ScenarioStep, step_tool_name
from agentproc.workflow.variant import Variant
from agentproc.workflow.variant_prompt import variant_prompt

CALCULATOR_OPS: tuple[Op, ...] = (Op.ADD, Op.SUB, Op.MUL, Op.DIV)
"""The calculator tool set: one generic tool per operation (named by its value)."""
CALCULATOR_ARGS = ("a", "b")
"""The calculator tools' operands: left and right."""
DISTRACTORS: tuple[tuple[str, str], ...] = (
    ("lookup_constant", "Look up a named mathematical constant."),
    ("convert_units", "Convert a value between units of measure."),
    ("round_value", "Round a value to a number of decimal places."),
    ("log_note", "Write a note to the activity log."),
    ("get_time", "Return the current time."),
    ("square_root", "Compute the square root of a value."),
    ("percent_of", "Compute a percentage of a value."),
    ("check_status", "Check the status of the workflow service."),
)
"""Tools that take no part in any procedure: ``(name, description)``."""
_NOUN = {Op.ADD: "sum", Op.SUB: "difference", Op.MUL: "product", Op.DIV: "quotient"}


@dataclass(frozen=True)
class Presented:
    """A scenario as one variant presents it."""

    variant: Variant
    scenario: Scenario
    """What is executed and monitored: steps in listed order, tools and prompt filled."""
    names: dict[str, str]
    """Canonical variable (``S7``) -> the name the agent sees."""
    tool_names: dict[str, str]
    """Canonical tool (``step_3``, ``mul``) -> the name the agent sees."""
    inbound: dict[str, str]
    """The name the agent sees -> canonical tool."""
    distractors: frozenset[str]
    system: str
    """The system message."""

    @property
    def calculator(self) -> bool:
        """Whether the tool set is the calculator."""
        return self.variant.tools == "calculator"

    def shown(self, var: str) -> str:
        """The name the agent sees for a canonical variable."""
        return self.names.get(var, var)

    def canonical_args(self, spec: ScenarioStep, args: dict[str, Any]) -> dict[str, Any]:
        """Arguments of a step tool, keyed by canonical variables (the shown keys given; an
        optional one of a branched workflow's step may be left out: a missing one that is
        not raises ``KeyError``)."""
        optional = self.optional
        return {
            p: args[self.shown(p)]
            for p in spec.params
            if p not in optional or self.shown(p) in args
        }

    @cached_property
    def optional(self) -> frozenset[str]:
        """The variables a conditional step defines (a branched workflow's): optional
        arguments of the steps that read them."""
        return frozenset(s.output for s in self.scenario.steps if s.when is not None)

    def outbound(self, name: str, arguments: Any) -> tuple[str, Any]:
        """A call in canonical names as the agent would make it under this variant.

        Simulated agents think in canonical names; this is how they speak. A step
        call becomes its shown tool, or in calculator mode the tool of its
        operation with the operands as ``a`` and ``b``; keys that are not operands
        (a malformed call) are kept.
        """
        spec = next((s for s in self.scenario.steps if s.name == name), None)
        if spec is None:
            return self.tool_names.get(name, name), arguments
        if not isinstance(arguments, dict):
            tool = spec.operation.value if self.calculator else name
            return self.tool_names[tool], arguments
        if self.calculator:
            out: dict[str, Any] = {}
            left, right = spec.operands[0], spec.operands[-1]
            if spec.constant is not None:  # the constant is written in the step: pass it
                out[CALCULATOR_ARGS[1]] = spec.constant
                right = ""
            for key, value in arguments.items():
                roles = [r for r, v in zip(CALCULATOR_ARGS, (left, right), strict=True) if v == key]
                for role in roles or [key]:
                    out[role] = value
            ordered = {r: out[r] for r in CALCULATOR_ARGS if r in out}
            return self.tool_names[spec.operation.value], ordered | out
        shown = {self.shown(k) if k in spec.params else k: v for k, v in arguments.items()}
        return self.tool_names[name], shown


def present(scenario: Scenario, variant: Variant) -> Presented:
    """The scenario as ``variant`` presents it (see the module docstring).

    Raises:
        ConfigError: a variant that cannot present a declared workflow's scenario.
    """
    rng = random.Random(f"agentproc-variant:{variant.seed}:{scenario.id}")
    original = {f"S{i}": f"S{i}" for i in range(1, len(scenario.steps) + 3)}
    if scenario.declared:  # its variables keep their declared names (see declared_view)
        why = refusal_line(scenario, variant, DISTRACTORS)
        if why is not None:  # a run file's variant, say, read back
            raise ConfigError(f"{scenario.id}: {why}")
        original = {v: v for v in scenario.variables}
        if variant.order == "shuffled":
            scenario = shuffled_declared(scenario, rng)
    elif variant.order == "shuffled":
        scenario, original = _shuffled(scenario, rng)
    names = _names(scenario, variant, original, rng)
    canonical_tools = (
        [op.value for op in CALCULATOR_OPS]
        if variant.tools == "calculator"
        else [s.name for s in scenario.steps]
    )
    tool_names = {t: t for t in canonical_tools}
    if variant.scramble_names:
        taken = {scenario.finish.tool, *canonical_tools}
        for t in canonical_tools:
            tool_names[t] = _token(rng, "tool_", taken)
    tool_names[scenario.finish.tool] = scenario.finish.tool
    distractors = free_distractors(scenario, DISTRACTORS)[: variant.distractors]
    tools = _tools(scenario, variant, names, tool_names, distractors)
    shown_tools = [t["function"]["name"] for t in tools]
    calc = ", ".join(tool_names[op.value] for op in CALCULATOR_OPS if op.value in tool_names)
    prompt = variant_prompt(scenario, variant, names, shown_tools, calc, tool_names)
    scenario = scenario.model_copy(update={"tools": tools, "prompt": prompt})
    system = variant.prompt.system if variant.prompt.system is not None else SYSTEM_PROMPT
    return Presented(
        variant=variant,
        scenario=scenario,
        names=names,
        tool_names=tool_names,
        inbound={v: k for k, v in tool_names.items()},
        distractors=frozenset(name for name, _ in distractors),
        system=system,
    )


# -- listed order ---------------------------------------------------------------


def _shuffled(scenario: Scenario, rng: random.Random) -> tuple[Scenario, dict[str, str]]:
    """A seeded dependency-valid order (the answer step last), renumbered in that order.

    Returns the renumbered scenario and, for each of its variables, the name the
    variable had as generated (what the agent is shown unless names are changed).
    """
    steps = scenario.steps
    order = dependency_order(steps, rng)
    position = {s.step: k for k, s in enumerate(order, 1)}
    rename = {"S1": "S1", "S2": "S2"} | {s.output: f"S{position[s.step] + 2}" for s in steps}
    new_steps = []
    for k, s in enumerate(order, 1):
        operands = [rename[v] for v in s.operands]
        target = k + 2
        a, b = s.terms(rename.__getitem__)
        new_steps.append(
            ScenarioStep(
                step=k,
                output=f"S{target}",
                op=s.op,
                operands=operands,
                constant=s.constant,
                distances=[target - int(v[1:]) for v in operands],
                value=s.value,
                depends_on=sorted(position[d] for d in s.depends_on),
                live=s.live,
                text=f"S{target} = {a} {SYMBOL[s.operation]} {b}",
                expected_call=ExpectedCall(
                    name=step_tool_name(k),
                    arguments={rename[v]: x for v, x in s.expected_call.arguments.items()},
                ),
            )
        )
    update = {"steps": new_steps, "tools": [], "prompt": ""}
    return scenario.model_copy(update=update), {v: k for k, v in rename.items()}


# -- names ----------------------------------------------------------------------


def _names(
    scenario: Scenario, variant: Variant, original: dict[str, str], rng: random.Random
) -> dict[str, str]:
    if variant.names == "none":
        return dict(original)
    if variant.names == "descriptive":
        out = {"S1": "input_1", "S2": "input_2"}
        for s in scenario.steps:
            out[s.output] = f"{_NOUN[s.operation]}_{s.step}"
        return out
    taken = {"a", "b", "answer"}
    return {v: _token(rng, "", taken, letters_only=True) for v in original}


def _token(rng: random.Random, prefix: str, taken: set[str], letters_only: bool = False) -> str:
    alphabet = string.ascii_lowercase if letters_only else string.ascii_lowercase + string.digits
    while True:
        name = prefix + rng.choice(string.ascii_lowercase)
        name += "".join(rng.choice(alphabet) for _ in range(5))
        if name not in taken:
            taken.add(name)
            return name


# -- tools ----------------------------------------------------------------------


def _tools(
    scenario: Scenario,
    variant: Variant,
    names: dict[str, str],
    tool_names: dict[str, str],
    distractors: tuple[tuple[str, str], ...],
) -> list[dict[str, Any]]:
    number_type = NUMBER_TYPE[scenario.mode]
    tools: list[dict[str, Any]] = []
    calculator = variant.tools == "calculator"
    if calculator:
        for op in CALCULATOR_OPS:
            verb = VERB[op].format(a="a", b="b")
            props = {
                r: {"type": number_type, "description": f"The {side} operand."}
                for r, side in zip(CALCULATOR_ARGS, ("left", "right"), strict=True)
            }
            tools.append(
                _function(
                    tool_names[op.value],
                    f"Compute a {SYMBOL[op]} b ({verb}); the result is rounded as the "
                    "procedure says.",
                    props,
                )
            )
    props = {"value": {"type": "number", "description": "The value to use."}}
    tools += make_tools(
        () if calculator else scenario.steps,
        scenario.mode,
        names[scenario.answer_variable],
        scenario.finish,
        name=names.__getitem__,
        tool_name=tool_names.__getitem__,
        others=[_function(name, description, props) for name, description in distractors],
        types=scenario.types,
        fields=tuple(scenario.answer_fields or ()),
    )
    if not variant.descriptions:
        tools = [_undescribed(t) for t in tools]
    return tools


def _function(name: str, description: str, props: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": props,
                "required": list(props),
                "additionalProperties": False,
            },
        },
    }


def _undescribed(tool: dict[str, Any]) -> dict[str, Any]:
    fn = {k: v for k, v in tool["function"].items() if k != "description"}
    params = dict(fn["parameters"])
    params["properties"] = {
        k: {a: b for a, b in v.items() if a != "description"}
        for k, v in params["properties"].items()
    }
    return {**tool, "function": {**fn, "parameters": params}}
