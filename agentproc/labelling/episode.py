"""The episode's end in the labelling core: the findings of no call and the metrics.

:class:`EpisodeEnd` is the part of :class:`~agentproc.labelling.core.LabelCore` that
runs once an episode, when every entry has been recorded: the ``reordered`` labels
(under either order policy), the skipped steps, the missing answer, the verdict, the
progress rate and the first divergence (:meth:`EpisodeEnd.finish`). It reads the
state the core kept while recording entries.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from itertools import filterfalse
from operator import eq, itemgetter, lt
from typing import Any

from agentproc.labelling.given import own_metrics
from agentproc.labelling.labels import Divergence, Label, LabelKind, Metrics, Verdict
from agentproc.labelling.order import (
    Batching,
    OrderPolicy,
    dependency_divergence,
    fewest_messages,
    kept_in_order,
    ran_too_early,
)
from agentproc.workflow import Workflow
from agentproc.workflow.declared.branching import Branching

K = LabelKind
KIND_ORDER: dict[LabelKind, int] = {k: i for i, k in enumerate(LabelKind)}
_NEVER = 1 << 62
_CALL_INDEX = itemgetter(1)
"""A :class:`Label`'s ``call_index``, got in C."""
_SKIPPED: dict[tuple[int, bool], Label] = {}
"""``skipped_step`` labels by (step, live), built once each: labels are immutable, and
relabelling a run finds the same ones in many episodes."""


@dataclass(slots=True)
class Entry:
    """One thing the agent did, as the core tracks it for the first divergence."""

    index: int
    """Position among the episode's calls (text mode: among the parsed entries)."""
    step: int | None = None
    """The step it executes or writes, if any."""
    finish: bool = False
    """Whether it submits an answer."""
    executed: bool = False
    """A step that produced a value."""
    answered: bool = False
    """An answer that was accepted."""
    message: int = 0
    """The agent's message it came in (counted from 1; 0 when no message was marked)."""


class EpisodeEnd:
    """The episode-level findings and metrics of :class:`~agentproc.labelling.core.LabelCore`."""

    wf: Workflow
    order: OrderPolicy
    batching: Batching
    labels: list[Label]
    last_value: dict[int, int]
    run_at: dict[int, int]
    answers: list[tuple[int, Any]]
    calls: int
    trace: list[Entry]
    given: int
    agent_env: Callable[[], dict[str, Any]]
    """Every variable's value as the agent holds it (the core's)."""

    def finish(self) -> tuple[list[Label], Metrics]:
        """All labels, sorted by call, and the episode's metrics."""
        labels = self.labels + self._reordered()
        labels.sort(key=_label_order)
        # Then the findings of no call, in their order: skipped steps by step, then
        # the missing answer.
        n, skipped = self.wf.n_steps, _SKIPPED
        branching = self.wf.branching
        if branching is not None:
            labels += self._skipped_on_path(branching)
        else:
            # Liveness is read only when a step was skipped (made when first asked for).
            live = self.wf.live if len(self.last_value) < n else ()
            for step in filterfalse(self.last_value.__contains__, range(1, n + 1)):
                key = (step, live[step - 1])
                found = skipped.get(key)
                if found is None:
                    found = skipped[key] = Label(K.SKIPPED_STEP, None, step, live=key[1])
                labels.append(found)
        if not self.answers:
            labels.append(Label(K.MISSING_ANSWER))
        return labels, self._metrics(labels)

    def _skipped_on_path(self, branching: Branching) -> list[Label]:
        """A branched workflow's skipped steps: the required ones never run; one whose
        requirement depends on the values has a cause (``propagated`` when the agent's
        own values make it unneeded)."""
        missing = [s for s in branching.steps if s not in self.last_value]
        if not missing:
            return []
        live, env = self.wf.live, self.agent_env()
        out = []
        for step in missing:
            cause = None
            if branching.conditional(step):
                cause = "propagated" if branching.required_on(step, env) is False else "unsupported"
            out.append(Label(K.SKIPPED_STEP, None, step, cause=cause, live=live[step - 1]))
        return out

    def _reordered(self) -> list[Label]:
        run_at = self.run_at
        skip = self.wf.skip
        if skip:  # an unneeded step has its own label, and is in no order
            run_at = {s: i for s, i in run_at.items() if s not in skip}
        if self.order == "dependency":
            early = ran_too_early(run_at, self.wf.depends_on)
            return [Label(K.REORDERED, run_at[s], s, breaks_dependency=True) for s in early]
        steps = list(run_at)  # first runs, in the order they ran
        if all(map(lt, steps, steps[1:])):  # in listed order (compared without a loop)
            return []
        out = []
        for pos in sorted(set(range(len(steps))) - set(kept_in_order(steps))):
            step = steps[pos]
            index = run_at[step]
            deps = self.wf.depends_on[step - 1]
            breaks = any(run_at.get(d, _NEVER) > index for d in deps if d not in skip)
            out.append(Label(K.REORDERED, index, step, breaks_dependency=breaks))
        return out

    def _metrics(self, labels: list[Label]) -> Metrics:
        wf = self.wf
        first = self.answers[0][1] if self.answers else None
        final = self.answers[-1][1] if self.answers else None
        right = wf.expected_answer
        first_ok = first is not None and wf.answer_is(first, right)
        final_ok = final is not None and wf.answer_is(final, right)
        faithful = first_ok and not labels
        verdict: Verdict
        if first is None:
            verdict = "no_answer"
        elif not first_ok:
            verdict = "wrong"
        else:
            verdict = "faithful" if faithful else "unfaithful_correct"
        last_value, correct = self.last_value, wf.correct
        branching = wf.branching
        # Steps whose latest value is their variable's correct value (``None``, never run,
        # is no value), counted without a Python loop.
        counted = range(1, len(wf.targets) + 1) if branching is None else branching.steps
        correct_steps = sum(
            map(
                eq,
                map(last_value.get, counted),
                (correct[s + wf.n_inputs] for s in counted),
            )
        )
        total = len(counted)
        if self.order == "dependency":
            labelled = set(map(_CALL_INDEX, labels))
            prefix, divergence = dependency_divergence(
                self.trace,
                labelled,
                wf.depends_on,
                self.calls,
                partial(self._departure, labels=labels),
                wf.skip,
            )
        else:
            prefix, divergence = self._divergence(labels)
        metrics: Metrics = {
            "verdict": verdict,
            "faithful": faithful,
            "first_answer": first,
            "final_answer": final,
            "first_answer_correct": first_ok,
            "final_answer_correct": final_ok,
            "answers": len(self.answers),
            "calls": self.calls,
            "executed_steps": len(self.last_value),
            "total_steps": total,
            "progress_rate": round(correct_steps / total, 6) if total else 1.0,
            "longest_correct_prefix": prefix,
            "first_divergence": divergence,
        }
        if branching is not None:
            metrics["path"] = branching.path
            metrics["path_correct"] = set(last_value) == set(branching.steps)
            metrics["exit_correct"] = self._exit_taken(branching) == (branching.fired, True)
        if self.given:
            own_metrics(metrics, self.given, self.last_value, wf)
        if self.order == "dependency":
            self.batching.close()
            metrics["messages"] = self.batching.messages
            metrics["fewest_messages"] = fewest_messages(wf.depends_on, wf.skip)
            metrics["batching_maximal"] = self.batching.maximal
        return metrics

    def _exit_taken(self, branching: Branching) -> tuple[int | None, bool]:
        """Where the first answer came: ``(exit, True)`` at an exit (its answer given before
        any step past it ran), ``(None, True)`` after the last required step ran, and
        ``(None, False)`` elsewhere or never."""
        if not self.answers:
            return None, False
        at, answer = self.answers[0]
        ran = [e.step for e in self.trace if e.index < at and e.executed and e.step is not None]
        furthest = max(ran, default=0)
        for j, e in enumerate(branching.exits):
            if furthest <= e.after and self.wf.answer_is(answer, self.wf.exit_answer(e)):
                return j, True
        last = branching.last
        return None, last is None or last in ran

    def _divergence(self, labels: list[Label]) -> tuple[int, Divergence | None]:
        """Longest prefix of the reference trace matched, and where it was left.

        The divergence is the earliest departure from the procedure, named by the
        label that describes it: a call for a later step than the one expected is a
        ``skipped_step`` (the expected step never runs) or ``reordered`` (it runs
        later); a call for the expected step, a repeat, an unknown tool or an
        answer is named by its own first label.
        """
        branching = self.wf.branching
        # The reference trace: every step (a branched workflow's: those it requires).
        seq = range(1, self.wf.n_steps + 1) if branching is None else branching.steps
        skip = self.wf.skip
        n = len(seq)
        labelled = set(map(_CALL_INDEX, labels))  # the calls with a label
        p = 0
        for e in self.trace:
            clean = e.index not in labelled
            if p < n and e.step == seq[p] and e.executed and clean:
                p += 1
                continue
            if p == n and e.finish and e.answered and clean:
                p += 1
                continue
            expected = seq[p] if p < n else None
            if (
                e.step is not None
                and expected is not None
                and e.step > expected
                and e.step not in skip  # an unneeded step is named by its own label
            ):
                # It jumped ahead: that is the departure, whatever else is wrong with
                # the call (a made-up argument for the step it skipped, say).
                skipped = expected not in self.last_value
                kind = (K.SKIPPED_STEP if skipped else K.REORDERED).value
            else:
                kind = self._departure(e.index, clean, expected, labels)
            return min(p, n), {"call_index": e.index, "step": expected, "label": kind}
        if p <= n:
            kind = K.SKIPPED_STEP.value if p < n else K.MISSING_ANSWER.value
            # Past the last entry: the episode ended before the procedure did.
            return p, {"call_index": self.calls, "step": seq[p] if p < n else None, "label": kind}
        return n, None

    def _departure(self, index: int, clean: bool, expected: int | None, labels: list[Label]) -> str:
        """The label naming a departure at call ``index``: its own first label, else a
        skipped step (the expected one never ran) or a reordering."""
        if not clean:
            return next(lab for lab in labels if lab.call_index == index).kind.value
        if expected is not None and expected not in self.last_value:
            return K.SKIPPED_STEP.value
        return K.REORDERED.value


def _label_order(lab: Label) -> tuple[int, int, int]:
    call = lab.call_index if lab.call_index is not None else _NEVER
    return (call, KIND_ORDER[lab.kind], lab.step or 0)
