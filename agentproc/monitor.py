"""Label every call and every episode against the expected step graph. Pure.

The rules (each pinned by a test in ``tests/test_monitor.py``):

``hallucinated_call``
    A call to a tool that was not offered, including a step past the last one.
``invalid_arguments``
    Arguments that are not JSON, or that fail the tool's schema. This label and
    ``hallucinated_call`` exclude every other label on the call, and such a
    call executes nothing, so a correct retry of it is not a repeat.
``repeated_step``
    A step executed again. ``self_correction`` is true when its previous
    execution produced a wrong value and this one produces the right one.
``reordered``
    Among the first executions of steps, the fewest whose removal leaves the rest
    in listed order. Ties are broken by labelling the earliest calls (the steps
    that ran too early). ``breaks_dependency`` is true when, at the time it ran, a
    step whose output it reads had not been executed. In ``enforce`` mode a call
    refused for a missing dependency is labelled ``reordered`` with
    ``refused: true`` and ``breaks_dependency: true``.
``wrong_argument``
    One label per argument whose value differs from the correct value of the
    variable it stands for. ``cause`` is ``propagated`` when it equals the value
    the agent's own latest execution produced for that variable (an upstream
    mistake carried forward), else ``lookback_confusion`` when it equals the
    correct or produced value of another variable defined before this step
    (``confused_with`` names the nearest such variable), else ``other``.
``skipped_step``
    A step never executed (``live`` says whether it reaches the answer).
``premature_finish``
    An answer submitted while the last step had not been executed;
    ``missing_steps`` counts the steps not executed at that moment.
``missing_answer``
    The episode ended without an accepted answer.
``wrong_answer``
    The first answer is wrong. ``cause`` is ``propagated`` when it equals the
    final value of the agent's own chain (its value of the answer variable, or,
    if it never produced that variable, the value of the last step it executed);
    otherwise ``unsupported``.
``answer_revised``
    Every answer after the first; ``self_correction`` is true when the previous
    answer was wrong and this one is right.

Numbers compare within the scenario's tolerance (half a unit).
"""

from __future__ import annotations

from bisect import bisect_left
from typing import Any

from agentproc.arith import close, to_units
from agentproc.types import CallRecord, Label, LabelKind
from agentproc.workflow import Workflow

K = LabelKind
KIND_ORDER: dict[LabelKind, int] = {k: i for i, k in enumerate(LabelKind)}


class Monitor:
    """Labels calls as they happen; :meth:`finish` adds the episode-level findings.

    >>> # monitor = Monitor(workflow); monitor.observe(record); monitor.finish()
    """

    def __init__(self, workflow: Workflow) -> None:
        self.wf = workflow
        self.labels: list[Label] = []
        self.produced: dict[int, int] = {}
        self.last_value: dict[int, int] = {}
        self.first_runs: list[tuple[int, int]] = []
        self.run_at: dict[int, int] = {}
        self.answers: list[tuple[int, float | int]] = []
        self.last_executed: int | None = None
        self.calls: list[CallRecord] = []
        self._correct_at: dict[int, int] | None = None

    # -- per call -------------------------------------------------------------

    def observe(self, rec: CallRecord) -> list[Label]:
        """Label one executed call; returns the labels it received."""
        self.calls.append(rec)
        start = len(self.labels)
        if rec.refused == "unknown_tool":
            self.labels.append(Label(K.HALLUCINATED_CALL, rec.index))
        elif rec.refused == "invalid_arguments":
            self.labels.append(Label(K.INVALID_ARGUMENTS, rec.index, rec.step))
        elif rec.step is not None:
            self._observe_step(rec)
        elif rec.finish:
            self._observe_finish(rec)
        return self.labels[start:]

    def _observe_step(self, rec: CallRecord) -> None:
        wf = self.wf
        spec = wf.steps[rec.step - 1]  # type: ignore[operator]
        args = rec.args or {}
        for param in spec.params:
            var = int(param[1:])
            got = args[param]
            if not close(got, wf.correct[var], wf.scale):
                self.labels.append(self._wrong_argument(rec, param, var, got, spec.target))
        if rec.refused == "dependency":
            self.labels.append(
                Label(K.REORDERED, rec.index, rec.step, breaks_dependency=True, refused=True)
            )
            return
        if rec.value is None:  # refused (division by zero, out of range): nothing ran
            return
        step = spec.step
        previous = self.last_value.get(step)
        if previous is not None:
            right = wf.correct[spec.target]
            self.labels.append(
                Label(
                    K.REPEATED_STEP,
                    rec.index,
                    step,
                    self_correction=previous != right and rec.value == right,
                )
            )
        else:
            self.first_runs.append((rec.index, step))
            self.run_at[step] = rec.index
        self.last_value[step] = rec.value
        self.produced[spec.target] = rec.value
        self.last_executed = rec.value

    def _wrong_argument(
        self, rec: CallRecord, param: str, var: int, got: Any, target: int
    ) -> Label:
        wf = self.wf
        base = {"argument": param, "expected": wf.to_number(wf.correct[var]), "got": got}
        own = self.produced.get(var)
        if own is not None and close(got, own, wf.scale):
            return Label(K.WRONG_ARGUMENT, rec.index, rec.step, cause="propagated", **base)
        units = to_units(got, wf.scale)
        # Candidates: variables before this step whose correct or produced value it equals.
        holders = [u for u in wf.holders.get(units, ()) if u < target]
        holders += [u for u, v in self.produced.items() if v == units and u < target]
        holders = [u for u in holders if u != var]
        best = min(holders, key=lambda u: (abs(u - var), u)) if holders else None
        if best is not None:
            return Label(
                K.WRONG_ARGUMENT,
                rec.index,
                rec.step,
                cause="lookback_confusion",
                confused_with=f"S{best}",
                **base,
            )
        return Label(K.WRONG_ARGUMENT, rec.index, rec.step, cause="other", **base)

    def _observe_finish(self, rec: CallRecord) -> None:
        wf = self.wf
        n = wf.n_steps
        if n not in self.last_value:
            missing = n - len(self.last_value)
            refused = True if rec.refused == "premature" else None
            self.labels.append(
                Label(K.PREMATURE_FINISH, rec.index, missing_steps=missing, refused=refused)
            )
        if rec.refused is not None or rec.answer is None:
            return
        answer = rec.answer
        right = close(answer, wf.answer, wf.scale)
        if not self.answers:
            if not right:
                own = self.produced.get(wf.answer_index, self.last_executed)
                cause = (
                    "propagated"
                    if own is not None and close(answer, own, wf.scale)
                    else "unsupported"
                )
                self.labels.append(
                    Label(
                        K.WRONG_ANSWER,
                        rec.index,
                        cause=cause,
                        expected=wf.to_number(wf.answer),
                        got=answer,
                    )
                )
        else:
            previous = self.answers[-1][1]
            was_right = close(previous, wf.answer, wf.scale)
            self.labels.append(
                Label(
                    K.ANSWER_REVISED,
                    rec.index,
                    self_correction=(not was_right) and right,
                    got=answer,
                )
            )
        self.answers.append((rec.index, answer))

    # -- per episode ----------------------------------------------------------

    def finish(self) -> tuple[list[Label], dict[str, Any]]:
        """All labels, sorted by call, and the episode's metrics."""
        wf = self.wf
        labels = list(self.labels)
        labels.extend(self._reordered())
        for spec in wf.steps:
            if spec.step not in self.last_value:
                labels.append(Label(K.SKIPPED_STEP, None, spec.step, live=spec.live))
        if not self.answers:
            labels.append(Label(K.MISSING_ANSWER))
        labels.sort(key=_label_order)
        return labels, self._metrics(labels)

    def _reordered(self) -> list[Label]:
        runs = self.first_runs
        steps = [s for _, s in runs]
        if all(a < b for a, b in zip(steps, steps[1:], strict=False)):
            return []
        out = []
        for pos in sorted(set(range(len(runs))) - set(_kept(steps))):
            index, step = runs[pos]
            deps = self.wf.steps[step - 1].depends_on
            breaks = any(self.run_at.get(d, 1 << 62) > index for d in deps)
            out.append(Label(K.REORDERED, index, step, breaks_dependency=breaks))
        return out

    def _metrics(self, labels: list[Label]) -> dict[str, Any]:
        wf = self.wf
        first = self.answers[0][1] if self.answers else None
        final = self.answers[-1][1] if self.answers else None
        first_ok = first is not None and close(first, wf.answer, wf.scale)
        final_ok = final is not None and close(final, wf.answer, wf.scale)
        faithful = first_ok and not labels
        if first is None:
            verdict = "no_answer"
        elif not first_ok:
            verdict = "wrong"
        else:
            verdict = "faithful" if faithful else "unfaithful_correct"
        correct_steps = sum(
            1 for s in wf.steps if self.last_value.get(s.step) == wf.correct[s.target]
        )
        prefix, divergence = self._divergence(labels)
        return {
            "verdict": verdict,
            "faithful": faithful,
            "first_answer": first,
            "final_answer": final,
            "first_answer_correct": first_ok,
            "final_answer_correct": final_ok,
            "answers": len(self.answers),
            "calls": len(self.calls),
            "executed_steps": len(self.last_value),
            "total_steps": wf.n_steps,
            "progress_rate": round(correct_steps / wf.n_steps, 6),
            "longest_correct_prefix": prefix,
            "first_divergence": divergence,
        }

    def _divergence(self, labels: list[Label]) -> tuple[int, dict[str, Any] | None]:
        """Longest prefix of the reference trace matched, and where it was left."""
        wf = self.wf
        n = wf.n_steps
        by_call: dict[int, Label] = {}
        for lab in labels:
            if lab.call_index is not None and lab.call_index not in by_call:
                by_call[lab.call_index] = lab
        p = 0
        for rec in self.calls:
            if p < n and rec.step == p + 1 and rec.value is not None and rec.index not in by_call:
                p += 1
                continue
            if p == n and rec.finish and rec.answer is not None and rec.index not in by_call:
                p += 1
                continue
            expected = p + 1 if p < n else None
            if rec.index in by_call:
                kind = by_call[rec.index].kind.value
            elif expected is not None and expected not in self.last_value:
                kind = K.SKIPPED_STEP.value
            else:
                kind = K.REORDERED.value
            return min(p, n), {"call_index": rec.index, "step": expected, "label": kind}
        if p <= n:
            kind = K.SKIPPED_STEP.value if p < n else K.MISSING_ANSWER.value
            return p, {
                "call_index": len(self.calls),
                "step": p + 1 if p < n else None,
                "label": kind,
            }
        return n, None


def _kept(steps: list[int]) -> list[int]:
    """Positions of a longest increasing subsequence that keeps the latest calls.

    Keeping the latest possible positions labels the earliest ones, so a step
    that ran too early is the one reported as reordered.
    """
    n = len(steps)
    starting = [0] * n  # length of the longest increasing run starting at i
    tails: list[int] = []
    for i in range(n - 1, -1, -1):
        x = -steps[i]
        pos = bisect_left(tails, x)
        if pos == len(tails):
            tails.append(x)
        else:
            tails[pos] = x
        starting[i] = pos + 1
    need = len(tails)
    kept: list[int] = []
    last = -(1 << 62)
    lo = 0
    while need:
        for q in range(n - 1, lo - 1, -1):
            if starting[q] == need and steps[q] > last:
                kept.append(q)
                last, lo, need = steps[q], q + 1, need - 1
                break
    return kept


def _label_order(lab: Label) -> tuple[int, int, int]:
    call = lab.call_index if lab.call_index is not None else 1 << 62
    return (call, KIND_ORDER[lab.kind], lab.step or 0)


def label_calls(workflow: Workflow, calls: list[CallRecord]) -> tuple[list[Label], dict[str, Any]]:
    """Label a whole recorded trace at once."""
    monitor = Monitor(workflow)
    for rec in calls:
        monitor.observe(rec)
    return monitor.finish()
