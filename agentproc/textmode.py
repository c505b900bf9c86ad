r"""Text mode: the procedure is in the prompt; the model writes its work and its answer.

This is the reference study's own protocol, with no tools. :func:`text_prompt`
asks for one line per step, ``S7 = 12.500``, then ``Answer: <number>``;
:func:`parse_text` reads a reply tolerantly into a :class:`TextTrace` of step and
answer entries in order of appearance; :func:`label_text` labels it with the tool
mode's taxonomy and returns exactly the metrics :class:`~agentproc.monitor.Monitor`
returns. An entry plays the part of a call: ``call_index`` is its position among
the parsed entries and ``calls`` counts them.

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
``answer_revised``
    An answer line whose number differs from the previous answer's. A repeated
    answer with the same number (``Answer: 3`` then ``\boxed{3}``) is ignored:
    neither a revision nor counted in ``answers``.

The other kinds read as in tool mode, "written" standing for "executed"; so a
recap that lists values again after the work is a ``repeated_step`` per line.
Ignored entries count in ``calls`` but never end the correct prefix.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal

from agentproc.arith import SCALE, apply_units, render, to_units
from agentproc.monitor import Monitor
from agentproc.types import CallRecord, Label, LabelKind, Scenario
from agentproc.workflow import StepSpec, Workflow, build_workflow

K = LabelKind
MISREAD = "misread_input"
"""The ``wrong_argument`` cause of a restated input written with a different value."""

SYSTEM_PROMPT = (
    "You are a careful calculator. Execute the procedure you are given exactly, "
    "step by step, and write your work in the requested format."
)


def text_prompt(scenario: Scenario) -> str:
    """The instructions for a scenario in text mode: inputs, steps and the output format."""
    scale, inputs = SCALE[scenario.mode], scenario.inputs.items()
    shown = ", ".join(f"{k} = {render(to_units(v, scale), scale)}" for k, v in inputs)
    decimal = scenario.mode == "decimal"
    rounding = "Every value is an integer (every division is exact)."
    if decimal:
        rounding = "Round every value to 3 decimals (half away from zero); write all 3 decimals."
    return (
        "Execute the following procedure exactly, one step at a time, without tools.\n"
        f"Inputs: {shown}.\n"
        "Steps:\n" + "\n".join(f"{s.step}. {s.text}" for s in scenario.steps) + "\n"
        f"{rounding} Use the values you computed in earlier steps.\n"
        "Output format: one line per step, in order, with nothing else on the line, exactly like\n"
        f"S7 = {'12.500' if decimal else '12'}\n"
        "(the variable, '=', its value). After the last step, write one final line:\n"
        f"Answer: <the value of {scenario.answer_variable}>"
    )


def text_messages(scenario: Scenario) -> list[dict[str, Any]]:
    """The system and user messages for a chat model."""
    user = {"role": "user", "content": text_prompt(scenario)}
    return [{"role": "system", "content": SYSTEM_PROMPT}, user]


# -- parsing ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TextEntry:
    """One step line (``S7 = 12.5``) or answer line read from a reply."""

    kind: Literal["step", "answer"]
    number: str
    """The number as written, without thousands separators: ``-1234.5``."""
    line: int
    """1-based line number in the reply."""
    raw: str
    """The line as written."""
    var: int | None = None
    """For a step line, the variable index (7 for ``S7``)."""

    @property
    def value(self) -> float | int:
        """The number as JSON: an ``int`` when written without a decimal point."""
        return float(self.number) if "." in self.number else int(self.number)


@dataclass(frozen=True, slots=True)
class TextTrace:
    """The entries of a reply, in order of appearance."""

    entries: tuple[TextEntry, ...]


_CLEAN = str.maketrans({"\u2212": "-", "\u2013": "-", "\u2248": "=", "$": None, "`": None})
_PREFIX = re.compile(r"^(?:\s*(?:[-*+\u2022>#]+|\d+[.)]|step\s*\d+\s*[:.)-]?))*\s*", re.I)
_STEP = re.compile(r"^s(\d+)\s*:?=(.*)$", re.I)
_SPLIT = re.compile(r"[;,]\s*(?=s\d+\s*:?=)", re.I)
_BOXED = re.compile(r"\\boxed\{([^{}]*)\}")
_ANSWER = re.compile(r"\banswer\b\s*(?:is\b|[:=])(.*)", re.I)
_NUMBER = re.compile(r"(?<![\w.])-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?")
_ASIDE = re.compile(r"\([^()]*\)")
MAX_NUMBER = 100
"""A number longer than this many characters is not read (its line is ignored)."""


def _last_number(text: str) -> str | None:
    """The last number after the final '=', parenthesised asides left out when possible."""
    tail = text.rsplit("=", 1)[-1]
    found = _NUMBER.findall(_ASIDE.sub(" ", tail)) or _NUMBER.findall(tail)
    number = found[-1].replace(",", "") if found else None
    return number if number and len(number) <= MAX_NUMBER else None


def parse_text(text: str) -> TextTrace:
    r"""Read the step and answer lines of a reply; other lines are ignored.

    An answer line (``Answer: 3``, ``The final answer is 3``, ``\boxed{3}``) is
    never also read as a step line; a line may hold several steps
    (``S3 = 5, S4 = 15``).

    >>> [(e.kind, e.var, e.value) for e in parse_text("**S3** = 5.5\nAnswer: 5.5").entries]
    [('step', 3, 5.5), ('answer', None, 5.5)]
    """
    entries = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.translate(_CLEAN).replace("**", "").replace("__", "").replace("\\approx", "=")
        answer = _BOXED.search(line) or _ANSWER.search(line)
        if answer:
            value = _last_number(answer.group(1))
            if value is not None:
                entries.append(TextEntry("answer", value, number, raw))
            continue
        for part in _SPLIT.split(line):
            m = _STEP.match(_PREFIX.sub("", part, count=1))
            value = _last_number(m.group(2)) if m else None
            if m and value is not None:
                entries.append(TextEntry("step", value, number, raw, int(m.group(1))))
    return TextTrace(tuple(entries))


# -- labelling ----------------------------------------------------------------


HALF = Fraction(1, 2)


def _units(x: Fraction) -> int:
    """An exact number of units rounded to whole units, half away from zero."""
    n = math.floor(abs(x) + HALF)
    return n if x >= 0 else -n


class _TextMonitor(Monitor):
    """The monitor's bookkeeping, fed by text entries instead of tool calls.

    Step values are compared exactly, in units, as written: a model carrying a
    slip through a long chain can write values far beyond a float's precision.
    Answers go through the monitor's own rules.
    """

    def __init__(self, workflow: Workflow) -> None:
        super().__init__(workflow)
        self.ignored: set[int] = set()
        self.last_answer: Fraction | None = None

    def read(self, trace: TextTrace) -> tuple[list[Label], dict[str, Any]]:
        for i, e in enumerate(trace.entries):
            rec = CallRecord(i, e.kind, e.raw, "", finish=e.kind == "answer")
            self.calls.append(rec)
            x = Fraction(e.number) * self.wf.scale
            if e.kind == "answer":
                self._answer(rec, x, e.value)
            else:
                self._step(rec, e.var or 0, x, e.value)
        return self.finish()

    def _values(self, var: int, got: float | int) -> dict[str, Any]:
        expected = self.wf.to_number(self.wf.correct[var])
        return {"argument": f"S{var}", "expected": expected, "got": got}

    def _step(self, rec: CallRecord, var: int, x: Fraction, got: float | int) -> None:
        wf = self.wf
        if not 1 <= var <= wf.answer_index:
            self.labels.append(Label(K.HALLUCINATED_CALL, rec.index))
            return
        units, right = _units(x), wf.correct[var]
        if var <= 2:
            if abs(x - right) <= HALF:
                self.ignored.add(rec.index)
            else:
                values = self._values(var, got)
                self.labels.append(Label(K.WRONG_ARGUMENT, rec.index, cause=MISREAD, **values))
            self.produced[var] = units
            return
        spec = wf.steps[var - 3]
        rec.step, rec.value = spec.step, units
        if abs(x - right) > HALF:
            self.labels.append(self._value_error(rec.index, spec, x, got))
        previous = self.last_value.get(spec.step)
        if previous is not None:
            fixed = previous != right and units == right
            self.labels.append(Label(K.REPEATED_STEP, rec.index, spec.step, self_correction=fixed))
        else:
            self.first_runs.append((rec.index, spec.step))
            self.run_at[spec.step] = rec.index
        self.last_value[spec.step] = self.produced[var] = self.last_executed = units

    def _value_error(self, index: int, spec: StepSpec, x: Fraction, got: float | int) -> Label:
        wf, scale = self.wf, self.wf.scale
        base = self._values(spec.target, got)
        own = [self.produced.get(v, wf.correct[v]) for v in spec.operands]
        mine = apply_units(spec.op, own[0], own[1], scale)
        if mine is not None and abs(x - mine) <= HALF:
            return Label(K.WRONG_ARGUMENT, index, spec.step, cause="propagated", **base)
        best: tuple[int, int] | None = None
        for pos, var in enumerate(spec.operands):
            for u in range(1, spec.target):
                if u == var or (best is not None and (abs(u - var), u) >= best):
                    continue
                for value in {wf.correct[u], self.produced.get(u, wf.correct[u])}:
                    args = [value, own[1]] if pos == 0 else [own[0], value]
                    r = apply_units(spec.op, args[0], args[1], scale)
                    if r is not None and abs(x - r) <= HALF:
                        best = (abs(u - var), u)
        if best is not None:
            return Label(
                K.WRONG_ARGUMENT,
                index,
                spec.step,
                cause="lookback_confusion",
                confused_with=f"S{best[1]}",
                **base,
            )
        return Label(K.WRONG_ARGUMENT, index, spec.step, cause="other", **base)

    def _answer(self, rec: CallRecord, x: Fraction, got: float | int) -> None:
        if x == self.last_answer:
            self.ignored.add(rec.index)
            return
        rec.answer, self.last_answer = got, x
        self._observe_finish(rec)

    def _divergence(self, labels: list[Label]) -> tuple[int, dict[str, Any] | None]:
        everything = self.calls
        self.calls = [rec for rec in everything if rec.index not in self.ignored]
        try:
            prefix, divergence = super()._divergence(labels)
        finally:
            counted, self.calls = len(self.calls), everything
        # Every counted entry matched (the prefix is their number): the divergence
        # lies past the end of the reply, not at a counted entry.
        if divergence is not None and prefix == counted:
            divergence["call_index"] = len(everything)
        return prefix, divergence


def label_text(scenario: Scenario, trace: TextTrace) -> tuple[list[Label], dict[str, Any]]:
    """Label a parsed reply; the labels sorted by entry, and the tool mode's metrics."""
    return _TextMonitor(build_workflow(scenario)).read(trace)


def run_text_episode(
    scenario: Scenario, text: str
) -> tuple[list[Label], dict[str, Any], TextTrace]:
    """Parse and label a reply in one go."""
    trace = parse_text(text)
    labels, metrics = label_text(scenario, trace)
    return labels, metrics, trace
