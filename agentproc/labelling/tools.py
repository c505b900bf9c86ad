"""Tool mode: label each executed call (a :class:`CallRecord`) with the labelling core.

The adapter reads what the mock tools recorded: which tool, the parsed
arguments, whether it was refused and the value it produced. A wrong argument's
cause: ``propagated`` when it equals the agent's own latest value of that
variable, else the core's nearest-variable search on the argument's value.
"""

from __future__ import annotations

from typing import Any

from agentproc.arith import to_units
from agentproc.labelling.core import LabelCore
from agentproc.labelling.labels import Label, LabelKind, Metrics
from agentproc.workflow import CallRecord, ScenarioStep, Workflow

K = LabelKind


class Monitor:
    """Labels calls as they happen; :meth:`finish` adds the episode-level findings.

    >>> # monitor = Monitor(workflow); monitor.observe(record); monitor.finish()
    """

    def __init__(self, workflow: Workflow) -> None:
        self.wf = workflow
        self.core = LabelCore(workflow)

    @property
    def labels(self) -> list[Label]:
        """The per-call labels so far."""
        return self.core.labels

    def observe(self, rec: CallRecord) -> list[Label]:
        """Label one executed call; returns the labels it received."""
        core = self.core
        start = len(core.labels)
        entry = core.begin(rec.index, rec.step, rec.finish)
        if rec.refused == "unknown_tool":
            core.add(Label(K.HALLUCINATED_CALL, rec.index))
        elif rec.refused == "invalid_arguments":
            core.add(Label(K.INVALID_ARGUMENTS, rec.index, rec.step))
        elif rec.step is not None:
            spec = self.wf.steps[rec.step - 1]
            self._arguments(rec, spec)
            if rec.refused == "dependency":
                core.add(
                    Label(K.REORDERED, rec.index, rec.step, breaks_dependency=True, refused=True)
                )
            elif rec.value is not None:  # else refused (division by zero, out of range)
                core.record_step(entry, spec, rec.value)
        elif rec.finish:
            core.record_answer(entry, rec.answer, refused=rec.refused is not None)
        return core.labels[start:]

    def _arguments(self, rec: CallRecord, spec: ScenarioStep) -> None:
        wf, args = self.wf, rec.args or {}
        for param in spec.params:
            var = int(param[1:])
            got = args[param]
            if not wf.close(got, wf.correct[var]):
                self.core.add(wrong_argument(self.core, rec.index, spec, param, got))

    def finish(self) -> tuple[list[Label], Metrics]:
        """All labels, sorted by call, and the episode's metrics."""
        return self.core.finish()


def wrong_argument(core: LabelCore, index: int, spec: ScenarioStep, param: str, got: Any) -> Label:
    """The label of an argument whose value is not the correct one, with its cause."""
    wf = core.wf
    var = int(param[1:])
    base = {"argument": param, "expected": wf.to_number(wf.correct[var]), "got": got}
    own = core.produced.get(var)
    if own is not None and wf.close(got, own):
        return Label(K.WRONG_ARGUMENT, index, spec.step, cause="propagated", **base)
    units = to_units(got, wf.scale)
    best = core.confusion(spec.target, [(var, units.__eq__)])
    if best is not None:
        return Label(
            K.WRONG_ARGUMENT,
            index,
            spec.step,
            cause="lookback_confusion",
            confused_with=f"S{best}",
            **base,
        )
    return Label(K.WRONG_ARGUMENT, index, spec.step, cause="other", **base)


def label_calls(workflow: Workflow, calls: list[CallRecord]) -> tuple[list[Label], Metrics]:
    """Label a whole recorded trace at once."""
    monitor = Monitor(workflow)
    for rec in calls:
        monitor.observe(rec)
    return monitor.finish()
