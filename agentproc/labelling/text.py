r"""Text mode: label the work and answer a model wrote, entry by entry, with the core.

This is the reference study's own protocol, with no tools.
:func:`~agentproc.workflow.prompts.text_prompt` asks for one line per step,
``S<k> = <the value of S<k>>``, then ``Answer: <the value of ...>``;
:func:`~agentproc.labelling.text_parse.parse_text` reads a reply into a
:class:`TextTrace` of step and answer entries in order of appearance;
:func:`label_text` labels it with the labelling core, as tool mode does, and
returns the same metrics. An entry plays the part of a call: ``call_index`` is
its position among the parsed entries and ``calls`` counts them.

How the rules read in text, where they differ from tool mode:

``hallucinated_call``
    A line for a variable past the last one the procedure defines (or ``S0``).
``wrong_argument``
    A step line with a wrong value; ``argument`` is the variable it defines.
    ``propagated``: the value is the step's operation on the model's own latest
    written values of the operands (right arithmetic on wrong inputs).
    ``lookback_confusion``: the operation with one operand replaced by the
    correct or written value of another variable defined before the step
    (``confused_with`` names the nearest). ``other``: an arithmetic slip.
    Restating an input (``S1 = 2``) is allowed and ignored when it matches; a
    different value is labelled with ``cause: misread_input`` and no step, and
    later steps built on it count as ``propagated``.
``unreadable``
    A step or answer line whose value is written in a form that cannot be read
    exactly (``12,5``, ``4.318 / 1.204``): no number is guessed. The step counts as
    not written (``skipped_step`` if it never is); an unreadable answer is no answer
    (``missing_answer`` if no other is read) but ends the work as an answer does.
``answer_revised``
    An answer line whose number differs from the previous answer's. A repeated
    answer with the same number (``Answer: 3`` then ``\boxed{3}``) is ignored:
    neither a revision nor counted in ``answers``.

The other kinds read as in tool mode, "written" standing for "executed"; so a
recap that lists values again after the work is a ``repeated_step`` per line.
Ignored entries count in ``calls`` but never end the correct prefix.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from agentproc.arith import apply_units, exact_units, round_units
from agentproc.labelling.core import OTHER, PROPAGATED, Entry, LabelCore, confusion_cause
from agentproc.labelling.labels import Label, LabelKind, Metrics
from agentproc.labelling.text_parse import TextEntry, TextTrace, parse_text
from agentproc.workflow import Scenario, ScenarioStep, Workflow, build_workflow

K = LabelKind
MISREAD = "misread_input"
"""The ``wrong_argument`` cause of a restated input written with a different value."""


class TextLabeller:
    """Feeds the entries of a reply to the labelling core.

    Step values are compared exactly, in units, as written: a model carrying a
    slip through a long chain can write values far beyond a float's precision.
    Answers go through the core's own rules.
    """

    def __init__(self, workflow: Workflow) -> None:
        self.wf = workflow
        self.core = LabelCore(workflow)
        self.last_answer: Fraction | None = None

    def read(self, trace: TextTrace) -> tuple[list[Label], Metrics]:
        """Label every entry of a parsed reply; the labels and the episode's metrics."""
        for i, e in enumerate(trace.entries):
            if e.unreadable:
                self._unreadable(i, e)
                continue
            x = exact_units(e.number, self.wf.scale)
            if e.kind == "answer":
                self._answer(self.core.begin(i, finish=True), x, e.value)
            else:
                self._step(i, e, x)
        return self.core.finish()

    def _unreadable(self, index: int, e: TextEntry) -> None:
        """A line whose value cannot be read: labelled, and no value is taken from it
        (an answer ends the work as any answer does, but none is recorded)."""
        core, var = self.core, e.var or 0
        if e.kind == "answer":
            entry = core.begin(index, finish=True)
            core.add(Label(K.UNREADABLE, index))
            core.record_answer(entry, None)
            return
        step = var - 2 if 3 <= var <= self.wf.answer_index else None
        core.begin(index, step)
        core.add(Label(K.UNREADABLE, index, step, argument=f"S{var}"))

    def _values(self, var: int, got: float | int) -> dict[str, Any]:
        expected = self.wf.to_number(self.wf.correct[var])
        return {"argument": f"S{var}", "expected": expected, "got": got}

    def _step(self, index: int, e: TextEntry, x: Fraction) -> None:
        wf, core = self.wf, self.core
        var, got = e.var or 0, e.value
        if not 1 <= var <= wf.answer_index:
            core.begin(index)
            core.add(Label(K.HALLUCINATED_CALL, index))
            return
        units, right = round_units(x), wf.correct[var]
        if var <= 2:
            entry = core.begin(index)
            if units == right:
                core.drop(entry)
            else:
                core.add(Label(K.WRONG_ARGUMENT, index, cause=MISREAD, **self._values(var, got)))
            core.produced[var] = units
            return
        spec = wf.steps[var - 3]
        entry = core.begin(index, spec.step)
        if units != right:
            core.add(self._value_error(entry, spec, x, got))
        core.record_step(entry, spec.step, units)

    def _value_error(
        self, entry: Entry, spec: ScenarioStep, x: Fraction, got: float | int
    ) -> Label:
        wf, core = self.wf, self.core
        scale = wf.scale
        base = self._values(spec.target, got)
        # A constant is written in the step: only the variables can be read wrong.
        own = list(spec.arguments(lambda v: core.produced.get(v, wf.correct[v]), scale))
        units = round_units(x)
        mine = apply_units(spec.operation, own[0], own[1], scale)
        if mine is not None and units == mine:
            return Label(K.WRONG_ARGUMENT, entry.index, spec.step, cause=PROPAGATED, **base)

        def swapped(pos: int) -> Any:
            def matches(value: int) -> bool:
                args = [value, own[1]] if pos == 0 else [own[0], value]
                return apply_units(spec.operation, args[0], args[1], scale) == units

            return matches

        tests = [(var, swapped(pos)) for pos, var in enumerate(spec.operand_vars)]
        best = core.confusion(tests)
        if best is not None:
            return Label(
                K.WRONG_ARGUMENT,
                entry.index,
                spec.step,
                cause=confusion_cause(best, spec.target),
                confused_with=f"S{best}",
                **base,
            )
        return Label(K.WRONG_ARGUMENT, entry.index, spec.step, cause=OTHER, **base)

    def _answer(self, entry: Entry, x: Fraction, got: float | int) -> None:
        if x == self.last_answer:
            self.core.drop(entry)
            return
        self.last_answer = x
        self.core.record_answer(entry, got)


def label_text(scenario: Scenario, trace: TextTrace) -> tuple[list[Label], Metrics]:
    """Label a parsed reply; the labels sorted by entry, and the tool mode's metrics."""
    return TextLabeller(build_workflow(scenario)).read(trace)


def run_text_episode(scenario: Scenario, text: str) -> tuple[list[Label], Metrics, TextTrace]:
    """Parse and label a reply in one go (an implicit answer is read for the answer variable)."""
    trace = parse_text(text, int(scenario.answer_variable[1:]))
    labels, metrics = label_text(scenario, trace)
    return labels, metrics, trace
