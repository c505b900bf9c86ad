"""A declared workflow's steps by name: the tool of each step and the variable it
defines, as the workflow file declares them, wherever a report, ``check`` or ``replay``
speaks of a step.

A generated procedure's steps keep their number alone (their tools are ``step_1``,
``step_2``, ...: the number says as much); a declared workflow's step reads
``step 4 (late_penalty → late_days)``, or ``step 3 (subtotal)`` when the tool is named
after its output. Names are the declared ones whatever the variant (``random-names`` and
``scrambled-names`` change what the agent is shown, not the workflow).

Reports read run-file heads, which hold no scenario: :class:`WorkflowNames` finds a
workflow's names once, from the scenario of the first of its episodes it is given
(:class:`~agentproc.runs.ScenarioStore`: the suite the line refers to, or the scenario the
line keeps). Where that cannot be had (a suite that moved), the workflow's steps keep
their numbers and :meth:`WorkflowNames.warnings` says why.

Steps are named in two numberings: a step's own number (a label's ``step``, the first
divergence's), and a position in the agent's own part of the procedure (the per-step
measures and the report's divergence steps, which count from the first step after a
variant's pre-filled ones): :func:`shifted` turns the first into the second.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentproc.analysis.stats.survival import Median
from agentproc.declared.loops import shown
from agentproc.errors import InputError
from agentproc.runs import Line, ScenarioStore, Where, read_at
from agentproc.workflow import Scenario
from agentproc.workflow.declared.compile import FORMULA_OPS
from agentproc.workflow.declared.loops import step_label

ARROW = "\N{RIGHTWARDS ARROW}"
"""Between a step's tool and the variable it defines."""


@dataclass(frozen=True, slots=True)
class StepName:
    """A declared step's tool and the variable it defines."""

    tool: str
    output: str

    def text(self) -> str:
        """``late_penalty → late_days``; the tool alone when it is named after its output.

        >>> StepName("late_penalty", "late_days").text(), StepName("net", "net").text()
        ('late_penalty → late_days', 'net')
        """
        return self.tool if self.tool == self.output else f"{self.tool} {ARROW} {self.output}"


StepNames = Mapping[int, StepName]
"""Step number (or position) -> its name; empty for a procedure's steps, or a workflow's
whose names could not be had."""
NO_NAMES: StepNames = {}


def scenario_names(scenario: Scenario) -> dict[int, StepName]:
    """Each step of a declared workflow's scenario by its number (empty for a procedure;
    a step of a loop by its item: ``verify_owner[2] → id_status[2]``)."""
    if not scenario.declared:
        return {}
    return {s.step: StepName(step_label(s), shown(s.output)) for s in scenario.steps}


def fixed_names(scenario: Scenario) -> dict[int, StepName]:
    """:func:`scenario_names` of the steps every instance of its workflow numbers alike:
    with loops, those listed before the first step of a loop (past it, a step's number
    moves with the instance's count of items: each episode's own scenario names it, as
    ``replay`` does)."""
    names = scenario_names(scenario)
    first = next((s.step for s in scenario.steps if s.loop is not None), None)
    return names if first is None else {k: n for k, n in names.items() if k < first}


def shifted(names: StepNames, given: int) -> dict[int, StepName]:
    """``names`` by position in the agent's own part, after ``given`` pre-filled steps.

    >>> shifted({1: StepName("a", "a"), 2: StepName("b", "b")}, 1)
    {1: StepName(tool='b', output='b')}
    """
    return {k - given: n for k, n in names.items() if k > given}


def agreed(maps: Iterable[StepNames]) -> dict[int, StepName]:
    """The names every map gives alike: a position two maps name differently stays a
    number, and any map without names (a procedure's episodes pooled with a workflow's)
    leaves every position a number.

    >>> a, b = StepName("a", "a"), StepName("b", "b")
    >>> agreed([{1: a, 2: b}, {1: a, 2: a, 3: b}])
    {1: StepName(tool='a', output='a'), 3: StepName(tool='b', output='b')}
    >>> agreed([{1: a}, {}])
    {}
    """
    out: dict[int, StepName] = {}
    clash: set[int] = set()
    for names in maps:
        if not names:
            return {}
        for k, n in names.items():
            if out.setdefault(k, n) != n:
                clash.add(k)
    return {k: n for k, n in sorted(out.items()) if k not in clash}


def step_text(step: int, names: StepNames = NO_NAMES) -> str:
    """``step 4 (late_penalty → late_days)``, or ``step 4`` without a name.

    >>> step_text(4, {4: StepName("late_penalty", "late_days")}), step_text(4)
    ('step 4 (late_penalty → late_days)', 'step 4')
    """
    name = names.get(step)
    return f"step {step}" if name is None else f"step {step} ({name.text()})"


def named(step: int, names: StepNames = NO_NAMES) -> str:
    """A step number with its name after it: ``4 (late_penalty → late_days)``, ``4``."""
    name = names.get(step)
    return str(step) if name is None else f"{step} ({name.text()})"


def median_text(median: Median, names: StepNames = NO_NAMES) -> str:
    """A median step of leaving the procedure with its interval, the step named:
    ``6 (tax_on_net → tax) [3, 10]`` (as :meth:`Median.text` without a name)."""
    text = median.text()
    if median.step is None or median.step not in names:
        return text
    return f"{named(median.step, names)} [{text.split(' [', 1)[1]}"


def name_json(step: Any, names: StepNames, key: str = "step") -> dict[str, str]:
    """The JSON fields naming ``step``: ``{"step_tool": ..., "step_output": ...}`` (``key``
    sets the prefix), nothing for a step without a name."""
    name = names.get(step) if isinstance(step, int) else None
    if name is None:
        return {}
    return {f"{key}_tool": name.tool, f"{key}_output": name.output}


def names_json(names: StepNames) -> dict[str, dict[str, str]]:
    """Every named step: ``{"4": {"tool": ..., "output": ...}}``."""
    return {str(k): {"tool": n.tool, "output": n.output} for k, n in sorted(names.items())}


def is_declared(rec: Mapping[str, Any]) -> bool:
    """Whether a record (its head is enough) is an episode of a declared workflow."""
    params = rec.get("params")
    return isinstance(params, Mapping) and params.get("ops") == FORMULA_OPS


def workflow_of(rec: Mapping[str, Any]) -> str:
    """The workflow a declared workflow's record comes from: its scenario's ``params.cell``."""
    return str(rec["params"].get("cell", rec.get("cell")))


class WorkflowNames:
    """Each declared workflow's step names by workflow, found once per workflow."""

    def __init__(self, suite: Path | None = None) -> None:
        self._store = ScenarioStore(suite)
        self.workflows: dict[str, dict[int, StepName]] = {}
        self.missing: dict[str, str] = {}
        """Workflow -> why its names could not be had."""

    def needs(self, rec: Mapping[str, Any]) -> bool:
        """Whether ``rec`` is of a declared workflow whose names are not yet looked for."""
        if not is_declared(rec):
            return False
        wf = workflow_of(rec)
        return wf not in self.workflows and wf not in self.missing

    def learn(self, path: Path | str, lineno: int | None, rec: Mapping[str, Any]) -> None:
        """The names of ``rec``'s workflow, from the scenario the record keeps or refers
        to (the labelling or the whole view), when not known yet."""
        if not self.needs(rec):
            return
        wf = workflow_of(rec)
        try:
            scenario = self._store.scenario(path, lineno, rec)  # type: ignore[arg-type]
        except InputError as exc:  # the suite is not at hand: its steps keep their numbers
            self.missing[wf] = str(exc)
            return
        self.workflows[wf] = fixed_names(scenario)

    def learn_at(self, where: Where, head: Mapping[str, Any]) -> None:
        """The names of ``head``'s workflow, reading its whole line at ``where`` if needed."""
        if self.needs(head):
            try:
                rec = read_at(where)
            except InputError as exc:
                self.missing[workflow_of(head)] = str(exc)
                return
            self.learn(where.path, where.lineno, rec)

    def learn_heads(self, heads: Iterable[tuple[Where, Mapping[str, Any]]]) -> WorkflowNames:
        """The names of every workflow of ``heads`` (each head with where its line lies);
        itself, for chaining."""
        for where, head in heads:
            self.learn_at(where, head)
        return self

    def passing(self, lines: Iterable[Line]) -> Iterator[dict[str, Any]]:
        """The records of ``lines`` (heads), learning each new workflow's names on the way."""
        for line in lines:
            self.learn_at(line.where, line.rec)
            yield line.rec

    def of(self, workflow: str) -> StepNames:
        """A workflow's names by step number (empty: unknown, or not a workflow)."""
        return self.workflows.get(workflow, NO_NAMES)

    def of_record(self, rec: Mapping[str, Any]) -> StepNames:
        """The names of a record's steps by step number (empty for a procedure's)."""
        return self.of(workflow_of(rec)) if is_declared(rec) else NO_NAMES

    def warnings(self) -> list[str]:
        """One line per workflow whose steps are shown by number, saying why."""
        return [
            f"{wf}: its steps are shown by number (their names need its scenario: {why})"
            for wf, why in sorted(self.missing.items())
        ]
