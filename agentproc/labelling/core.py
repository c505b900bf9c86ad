"""The labelling core: the state and the rules of the taxonomy, once.

Tool mode (:mod:`agentproc.labelling.tools`) and text mode
(:mod:`agentproc.labelling.text`) are thin adapters: each turns what the agent
did (a tool call, a line of text) into an *entry* and calls the core's
``record_*`` methods; :meth:`LabelCore.finish` adds the episode-level findings
and computes the metrics. The rules:

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
    Under the ``listed`` order policy: among the first executions of steps, the
    fewest whose removal leaves the rest in listed order. Ties are broken by
    labelling the earliest calls (the steps that ran too early). ``breaks_dependency``
    is true when, at the time it ran, a step whose output it reads had not been
    executed. Under ``dependency``: exactly the first executions that ran before a
    step they read, which ran later (a step whose operands have all been produced is
    in order, whatever its position, alone or in a message with others; one that
    reads a step never run follows a ``skipped_step``, as under ``listed``). In
    ``enforce`` mode a call refused for a missing dependency is labelled
    ``reordered`` with ``refused: true`` and ``breaks_dependency: true``.
``wrong_argument``
    A value that differs from the correct value of the variable it stands for.
    Its ``cause`` comes from one search over every value visible to the agent at
    that point (:meth:`LabelCore.confusion`): the inputs, every value it has
    produced so far for every variable (its earlier values as well as its latest)
    and the correct value of every variable. ``propagated``: a value it produced for
    that variable itself, its latest or an earlier one (a mistake carried forward);
    ``lookback_confusion``: the value of another variable defined before the step;
    ``stale_output``: the value of the step's own output variable or of a later
    one (its previous result fed back, say); ``confused_with`` names the variable.
    The nearest variable to the expected one wins; **at equal distance, the
    earlier variable wins** (and when several operands are searched, the nearest of
    their winners). Else ``other``. A value equal to the right value cut to fewer
    decimals is ``other`` with ``truncated``, never a confusion with a variable that
    holds the same value.
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
``unreturned_value``
    Under ``dependency`` only (tool mode): an argument equal to a value that only an
    earlier call of the same message produced, for that argument's variable, and
    that no earlier message returned (nor is an input): its result had not come
    back, so the agent worked the value out itself. Under ``dependency`` an answer
    sent in the same message as the last step's first run is ``premature_finish``
    (the last step's result had not come back), its ``missing_steps`` counting the
    steps not returned before that message.

Numbers compare within the scenario's tolerance (half a unit).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator, Sequence
from itertools import compress, repeat
from operator import eq
from typing import Any

from agentproc.labelling.episode import KIND_ORDER as KIND_ORDER
from agentproc.labelling.episode import Entry as Entry
from agentproc.labelling.episode import EpisodeEnd
from agentproc.labelling.fields import field_labels
from agentproc.labelling.labels import Label, LabelKind
from agentproc.labelling.order import Batching, InFlight, OrderPolicy
from agentproc.workflow import Workflow
from agentproc.workflow.declared.branching import BranchExit, env_of

K = LabelKind
PROPAGATED = "propagated"
"""Cause: the agent's own latest value of the variable, an upstream mistake carried forward."""
LOOKBACK = "lookback_confusion"
"""Cause: the value of another variable defined before the step."""
STALE = "stale_output"
"""Cause: the value of the step's own output variable, or of a later one."""
OTHER = "other"
"""Cause: nothing the agent could see explains the value (an arithmetic slip)."""
UNSUPPORTED = "unsupported"
"""Cause: nothing the agent holds supports what it did (a branch, an exit, an answer)."""


class LabelCore(EpisodeEnd):
    """Labels an episode entry by entry; :meth:`finish` adds the episode-level findings.

    >>> # core = LabelCore(workflow); entry = core.begin(0, step=1); core.record_step(...)
    """

    def __init__(self, workflow: Workflow, order: OrderPolicy = "listed") -> None:
        self.wf = workflow
        self.order: OrderPolicy = order
        """The order policy calls are held to."""
        self.batching = Batching(
            workflow.depends_on if order == "dependency" else (), workflow.skip
        )
        """The agent's messages with tool calls so far, and under ``dependency`` whether
        each held every step that was ready when it was sent."""
        self.labels: list[Label] = []
        self.produced: dict[int, int] = {}
        """Variable index -> the agent's latest value of it, in units."""
        self.held: dict[int, set[int]] = {}
        """Variable index -> every value the agent has produced for it, in units (the
        latest included)."""
        self.holders: dict[int, set[int]] = {}
        """Unit value -> the variables the agent has ever produced it for."""
        self.last_value: dict[int, int] = {}
        """Step number -> the value its latest execution produced."""
        self.run_at: dict[int, int] = {}
        """Step number -> the entry of its first run, in the order they ran."""
        self.answers: list[tuple[int, Any]] = []
        self.last_executed: int | None = None
        self.calls = 0
        """Entries seen, counted or not."""
        self.trace: list[Entry] = []
        """The entries that count for the first divergence, in order."""
        self.in_flight: InFlight | None = (
            InFlight(set(workflow.correct[1 : workflow.n_inputs + 1]))
            if order == "dependency"
            else None
        )
        """Under ``dependency``: the values the current message produced, not yet returned."""
        self.given = 0
        """Pre-filled calls seen (:meth:`give`): the first entries, none of them the agent's."""

    # -- entries ----------------------------------------------------------------

    def begin(self, index: int, step: int | None = None, finish: bool = False) -> Entry:
        """Start an entry; it counts for the first divergence unless :meth:`drop` ped."""
        entry = Entry(index, step, finish, False, False, self.batching.messages)
        self.calls += 1
        if step is not None:
            self.batching.called.add(step)
        self.trace.append(entry)
        return entry

    def drop(self, entry: Entry) -> None:
        """Leave an entry out of the first divergence (text mode: a restated input)."""
        if self.trace and self.trace[-1] is entry:
            self.trace.pop()
        else:
            self.trace.remove(entry)

    def give(self, index: int, step: int, value: int) -> None:
        """A pre-filled call (:mod:`agentproc.workflow.prefill`): step ``step`` returned
        ``value`` before the agent's first call. It is the procedure as given: never
        labelled, part of the correct prefix, and left out of every metric of the agent's
        (its calls, steps, progress and prefix count its own)."""
        self.record_step(self.begin(index, step), step, value)
        self.given += 1

    def add(self, label: Label) -> None:
        """Record a label."""
        self.labels.append(label)

    def new_message(self) -> None:
        """The calls that follow came in a new message of the agent's (under ``dependency``,
        batching is judged per message: see :class:`~agentproc.labelling.order.Batching`)."""
        self.batching.new_message(self.last_value if self.order == "dependency" else None)
        if self.in_flight is not None:
            self.in_flight.new_message()

    # -- the rules ------------------------------------------------------------

    def record_step(self, entry: Entry, step: int, value: int) -> None:
        """Step ``step`` produced ``value``: a first run, or a repeat (maybe self-correcting)."""
        target = step + self.wf.n_inputs  # the variable it defines
        previous = self.last_value.get(step)
        if previous is not None:
            right = self.wf.correct[target]
            fixed = previous != right and value == right
            self.add(Label(K.REPEATED_STEP, entry.index, step, self_correction=fixed))
        else:
            self.run_at[step] = entry.index
            branching = self.wf.branching
            if branching is not None and step in branching.skip:
                self._unneeded(entry.index, step)
        entry.executed = True
        if self.in_flight is not None:
            self.in_flight.produced(step, target, value)
        self.last_value[step] = value
        self.produced[target] = value
        self.held.setdefault(target, set()).add(value)
        self.holders.setdefault(value, set()).add(target)
        self.last_executed = value

    def _unneeded(self, index: int, step: int) -> None:
        """The first run of a step the instance does not require: ``unneeded_step``,
        ``propagated`` when the agent's own values so far make it required."""
        b = self.wf.branching
        if b is None:  # pragma: no cover (only a branched workflow has unrequired steps)
            return
        own = b.required_on(step, self.agent_env())
        cause = PROPAGATED if own else UNSUPPORTED
        self.add(Label(K.UNNEEDED_STEP, index, step, cause=cause, reason=b.reason(step)))

    def agent_env(self) -> dict[str, Any]:
        """Every variable's value by name as the agent holds it: its latest value of each
        it produced, the correct one of the rest (a branched workflow's conditions read
        it)."""
        wf, produced = self.wf, self.produced
        correct = wf.correct
        return env_of(wf.var_names, lambda v: produced.get(v, correct[v]), wf.scale)

    def record_answer(self, entry: Entry, answer: Any, refused: bool = False) -> None:
        """An answer was submitted: premature, wrong (and why) or a revision."""
        wf = self.wf
        flight = self.in_flight
        last = wf.last_step
        if last is not None and (
            last not in self.last_value or (flight is not None and flight.pending(last))
        ):
            done = self.last_value if flight is None else flight.returned_steps
            if wf.branching is None:
                missing = wf.n_steps - len(done)
            else:
                missing = sum(s not in done for s in wf.branching.steps)
            self.add(
                Label(
                    K.PREMATURE_FINISH,
                    entry.index,
                    cause=None if wf.branching is None else self._exit_cause(answer),
                    missing_steps=missing,
                    refused=True if refused else None,
                )
            )
        if refused or answer is None:
            return
        right = wf.answer_is(answer, wf.expected_answer)
        if not self.answers:
            if not right and wf.answer_fields:
                fired = self._own_exit()
                own_fields = None if fired is None else fired.fields
                labels = field_labels(
                    wf, entry.index, answer, self.produced, self.last_executed, own_fields
                )
                self.labels.extend(labels)
            elif not right:
                own = self.produced.get(wf.answer_index, self.last_executed)
                carried = own is not None and wf.close(answer, own)
                if not carried and wf.branching is not None:
                    carried = self._exit_cause(answer) == PROPAGATED
                self.add(
                    Label(
                        K.WRONG_ANSWER,
                        entry.index,
                        cause="propagated" if carried else "unsupported",
                        expected=wf.to_number(wf.answer),
                        got=answer,
                    )
                )
        else:
            was_right = wf.answer_is(self.answers[-1][1], wf.expected_answer)
            self.add(
                Label(
                    K.ANSWER_REVISED,
                    entry.index,
                    self_correction=(not was_right) and right,
                    got=answer,
                )
            )
        entry.answered = True
        self.answers.append((entry.index, answer))

    def _exit_cause(self, answer: Any) -> str:
        """``propagated`` when an exit that fires on the agent's own values gives
        ``answer``; else ``unsupported``."""
        b = self.wf.branching
        if b is None or answer is None:
            return UNSUPPORTED
        own = self._own_exit()
        right = own is not None and self.wf.answer_is(answer, self.wf.exit_answer(own))
        return PROPAGATED if right else UNSUPPORTED

    def _own_exit(self) -> BranchExit | None:
        """The exit that fires on the agent's own values, if one does."""
        b = self.wf.branching
        if b is None:
            return None
        fired = b.exit_on(self.agent_env())
        return None if fired is None else b.exits[fired]

    def own(self, var: int, matches: Callable[[int], bool]) -> bool:
        """Whether a value the agent produced for ``var`` (its latest, or an earlier one it
        has since replaced) explains what it gave: then a mistake of its own carried on."""
        latest = self.produced.get(var)
        if latest is not None and latest != self.wf.correct[var] and matches(latest):
            return True
        right = self.wf.correct[var]
        return any(v != right and matches(v) for v in self.held.get(var, ()))

    def confusion(self, tests: Sequence[tuple[int, Callable[[int], bool]]]) -> int | None:
        """The variable whose value explains a wrong value, nearest first; ``None`` if none.

        Each test is ``(var, matches)``: the variable whose value was expected, and
        whether a candidate value (in units) explains what the agent gave. The
        candidates are every variable of the procedure but ``var``, each with its
        correct value and every value the agent has produced for it (its latest and
        the earlier ones). The nearest to ``var`` wins; at equal distance, the earlier
        variable; over several tests, the nearest of their winners (the earlier
        variable on a tie).
        """
        wf, produced, held = self.wf, self.produced, self.held
        end = wf.answer_index + 1
        best: tuple[int, int] | None = None
        for var, matches in tests:
            for u in _by_distance(var, end):
                key = (abs(u - var), u)
                if best is not None and key >= best:
                    break
                own = produced.get(u)
                if (
                    matches(wf.correct[u])
                    or (own is not None and matches(own))
                    or any(map(matches, held.get(u, ())))
                ):
                    best = key
                    break
        return best[1] if best is not None else None

    def confusion_of(self, var: int, read: int) -> int | None:
        """:meth:`confusion` of a value read exactly (``read`` units): the variables
        whose correct value or any value the agent produced for them is ``read``, looked
        up rather than searched; the same answer."""
        wf = self.wf
        found = set(wf.holding.get(read, ()))
        produced = self.produced  # the variables holding ``read``, found in C:
        found.update(compress(produced, map(eq, produced.values(), repeat(read))))
        found.update(self.holders.get(read, ()))
        found.discard(var)
        end = wf.answer_index + 1
        candidates = [u for u in found if 1 <= u < end]
        return min(candidates, key=lambda u: (abs(u - var), u)) if candidates else None

    def confusion_in(
        self, var: int, lo: int, hi: int, matches: Callable[[int], bool]
    ) -> int | None:
        """:meth:`confusion` of a test that only values within ``lo .. hi`` pass: the
        candidates in that window, looked up (the correct values in order) rather than
        searched; the same answer."""
        wf = self.wf
        values, holders = wf.ordered
        found = {
            holders[k]
            for k in range(bisect_left(values, lo), bisect_right(values, hi))
            if matches(values[k])
        }
        found.update(u for u, v in self.produced.items() if lo <= v <= hi and matches(v))
        for v, held_by in self.holders.items():
            if lo <= v <= hi and matches(v):
                found.update(held_by)
        found.discard(var)
        end = wf.answer_index + 1
        candidates = [u for u in found if 1 <= u < end]
        return min(candidates, key=lambda u: (abs(u - var), u)) if candidates else None


def confusion_cause(u: int, target: int) -> str:
    """The cause of a wrong value explained by variable ``u`` at a step defining ``target``."""
    return LOOKBACK if u < target else STALE


def _by_distance(var: int, end: int) -> Iterator[int]:
    """Variables ``1 .. end-1`` but ``var``, nearest to ``var`` first (earlier on ties)."""
    target = end
    for d in range(1, max(var, target)):
        below, above = var - d, var + d
        if below < 1 and above >= target:
            return
        if below >= 1:
            yield below
        if above < target:
            yield above
