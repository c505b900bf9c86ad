"""Calculator mode: align each generic ``add/sub/mul/div`` call to the step it computes.

With the calculator tool set the agent chooses the operation; nothing in a call
names a step. The aligner reads a call ``op(a, b)`` as the step of that operation
whose operands best explain ``a`` and ``b``: an operand is explained when the
value is its correct value or the agent's own latest value of it (a carried
mistake); ``add`` and ``mul`` may take their operands in either order (read
swapped only when that explains more of them). The step
explaining the most operands wins; at a tie, the step expected next (the earliest
not yet executed), then the one with more operands at their correct value, then a
step not yet executed, then the earliest listed. The
aligned call is then labelled exactly as a call of that step's own tool would be,
by the same :class:`~agentproc.labelling.core.LabelCore` (a wrong operand is a
``wrong_argument`` with its cause, a second computation of a step a
``repeated_step``, and so on).

A call whose operands explain no step is read as the step expected next (the
earliest not yet executed) when that step has the call's operation: the right
operation at the right place with wrong values (``wrong_argument`` on each).
What it cannot align is labelled: any other call whose operands explain no step
of its operation is a ``hallucinated_call`` (a computation the procedure does not
have); arguments that fail the tool's schema are ``invalid_arguments`` on the
step expected next (``null`` when every step has run).

Two steps that compute the same operation on the same values are one computation
to a calculator: the aligner gives such a call to the earliest of them not yet
executed, so a faithful run reads right, but a repeat, a skip or a swap of such a
step cannot be told from running its twin.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any

from agentproc.arith import Op, to_units
from agentproc.labelling.core import OTHER, confusion_cause
from agentproc.labelling.labels import Label, LabelKind, shown_label
from agentproc.labelling.order import OrderPolicy
from agentproc.labelling.tools import Monitor
from agentproc.workflow import CallRecord, ScenarioStep, Workflow

if TYPE_CHECKING:
    from agentproc.workflow.present import Presented

K = LabelKind
_COMMUTATIVE = (Op.ADD, Op.MUL)
_OPS = {op.value: op for op in Op}


class CalculatorMonitor(Monitor):
    """The :class:`Monitor` of a calculator-mode episode.

    Args:
        workflow: The presented scenario's workflow.
        presented: The presentation (to read the tool names the agent was shown).
    """

    def __init__(
        self, workflow: Workflow, presented: Presented, order: OrderPolicy = "listed"
    ) -> None:
        super().__init__(workflow, presented.names, order)
        self.presented = presented
        self._by_op: dict[Op, list[ScenarioStep]] = {op: [] for op in Op}
        for spec in workflow.steps:
            self._by_op[spec.operation].append(spec)

    def observe(self, rec: CallRecord) -> list[Label]:
        """Label one call, aligning it to a step when it is a calculator call."""
        op = _OPS.get(self.presented.inbound.get(rec.name, ""))
        if op is None or rec.refused == "transient":
            return super().observe(rec)
        core = self.core
        start = len(core.labels)
        if rec.refused == "invalid_arguments" or rec.args is None:
            step = self.expected_step()
            core.begin(rec.index, step)
            core.add(Label(K.INVALID_ARGUMENTS, rec.index, step))
            return core.labels[start:]
        aligned = self.align(op, rec.args.get("a"), rec.args.get("b"))
        if aligned is None:
            aligned = self.expected(op, rec.args.get("a"), rec.args.get("b"))
        if aligned is None:
            core.begin(rec.index)
            core.add(Label(K.HALLUCINATED_CALL, rec.index))
            return core.labels[start:]
        spec, args = aligned
        if spec.constant is not None:  # the constant is no argument of the step: its own check
            self._constant(rec.index, spec, spec.constant, rec.args.get("b"))
        return super().observe(replace(rec, step=spec.step, args=args))

    def _constant(self, index: int, spec: ScenarioStep, constant: float | int, got: Any) -> None:
        """A step's constant passed as another number: a ``wrong_argument`` whose
        ``argument`` is the constant as written (no variable stands for it). Its cause:
        the value of the step's variable operand (its correct value or the agent's own),
        when ``got`` is that (``sub(S6, 4.217)`` written ``sub(4.217, S6)``), a
        ``lookback_confusion`` with it; else ``other``."""
        if self.is_constant(constant, got):
            return
        label = Label(K.WRONG_ARGUMENT, index, spec.step, cause=OTHER, got=got)
        label = label._replace(argument=spec.terms()[1], expected=constant)
        operand = spec.operand_vars[0]
        if self.explains(f"S{operand}", got):
            cause = confusion_cause(operand, spec.target)
            label = label._replace(cause=cause, confused_with=f"S{operand}")
        self.core.add(label if self.names is None else shown_label(label, self.names))

    def expected_step(self) -> int | None:
        """The earliest listed step not yet executed."""
        done = self.core.last_value
        return next((s.step for s in self.wf.steps if s.step not in done), None)

    def expected(self, op: Op, a: Any, b: Any) -> tuple[ScenarioStep, dict[str, Any]] | None:
        """The step expected next, when it has this operation (no operand explained)."""
        step = self.expected_step()
        if step is None or self.wf.steps[step - 1].op is not op:
            return None
        spec = self.wf.steps[step - 1]
        return spec, _arguments(spec, a, b, self.explains)

    def explains(self, var: str, value: Any) -> bool:
        """Whether ``value`` is the correct value of ``var`` or the agent's own latest one."""
        wf, index = self.wf, int(var[1:])
        if not _is_number(value):
            return False
        own = self.core.produced.get(index)
        return wf.close(value, wf.correct[index]) or (own is not None and wf.close(value, own))

    def is_correct(self, var: str, value: Any) -> bool:
        """Whether ``value`` is the correct value of ``var``."""
        return _is_number(value) and self.wf.close(value, self.wf.correct[int(var[1:])])

    def is_constant(self, constant: float | int, value: Any) -> bool:
        """Whether ``value`` is a step's constant."""
        return _is_number(value) and self.wf.close(value, to_units(constant, self.wf.scale))

    def _sides(self, spec: ScenarioStep) -> tuple[Callable[[Any], bool], ...]:
        """The left and right operand's ``explains`` and ``is_correct`` tests (a constant
        is explained, and correct, by its own value only)."""
        left = spec.operands[0]
        if spec.constant is None:
            right = spec.operands[-1]
            explains, correct = partial(self.explains, right), partial(self.is_correct, right)
        else:
            explains = correct = partial(self.is_constant, spec.constant)
        return partial(self.explains, left), explains, partial(self.is_correct, left), correct

    def align(self, op: Op, a: Any, b: Any) -> tuple[ScenarioStep, dict[str, Any]] | None:
        """The step ``op(a, b)`` computes and its arguments by operand; ``None`` if none."""
        done = self.core.last_value
        expected = self.expected_step()
        best: tuple[tuple[int, bool, int, bool, int], ScenarioStep, dict[str, Any]] | None = None
        for spec in self._by_op[op]:
            left, right, left_ok, right_ok = self._sides(spec)
            x, y = a, b
            score = left(x) + right(y)
            if op in _COMMUTATIVE:  # swapped only when that explains strictly more
                swapped = left(y) + right(x)
                if swapped > score:
                    x, y, score = b, a, swapped
            if not score:
                continue
            exact = left_ok(x) + right_ok(y)
            key = (-score, spec.step != expected, -exact, spec.step in done, spec.step)
            if best is None or key < best[0]:
                best = (key, spec, _arguments(spec, x, y, self.explains))
        return None if best is None else (best[1], best[2])


def _arguments(spec: ScenarioStep, x: Any, y: Any, explains: Any) -> dict[str, Any]:
    """The step's arguments by operand; one operand read twice keeps the value that is off
    (beside a constant, the left alone: the constant is checked apart)."""
    left, right = spec.operands[0], spec.operands[-1]
    if spec.constant is not None:
        return {left: x}
    if left != right:
        return {left: x, right: y}
    return {left: y if explains(left, x) else x}


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def monitor_for(
    workflow: Workflow, presented: Presented | None = None, order: OrderPolicy = "listed"
) -> Monitor:
    """The monitor of an episode: calculator-aligned under a calculator variant; ``order``
    is the order policy calls are held to."""
    if presented is not None and presented.calculator:
        return CalculatorMonitor(workflow, presented, order)
    return Monitor(workflow, presented.names if presented is not None else None, order)
