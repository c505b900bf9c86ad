"""Which first runs of steps ran in order: the rule behind ``reordered``.

Under the ``listed`` order policy, among the first executions of steps, the fewest whose
removal leaves the rest in listed order are the ones labelled; :func:`kept_in_order` finds
the rest. Under ``dependency``, a step is in order when every step whose output it reads
ran before it (:func:`ran_too_early` finds those that ran before one that ran later);
steps whose inputs are all available may then come in any order, several in one message.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from agentproc.labelling.labels import Divergence, LabelKind

OrderPolicy = Literal["listed", "dependency"]
"""What order the monitor holds calls to: the listed order of the steps, or only their
dependencies (a step whose operands have all been produced is in order)."""
ORDER_POLICIES: tuple[OrderPolicy, ...] = ("listed", "dependency")

_NEVER = 1 << 62


def kept_in_order(steps: list[int]) -> list[int]:
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
    last = -_NEVER
    lo = 0
    while need:
        for q in range(n - 1, lo - 1, -1):
            if starting[q] == need and steps[q] > last:
                kept.append(q)
                last, lo, need = steps[q], q + 1, need - 1
                break
    return kept


def ran_too_early(run_at: Mapping[int, int], depends_on: Sequence[tuple[int, ...]]) -> list[int]:
    """The steps (in the order they first ran) that first ran before a step they read,
    which ran later: ``run_at`` maps each step to the entry of its first run, in the order
    they ran. A step that reads one never run is not among them (as under the listed
    policy, the step never run is a ``skipped_step``, and nothing ran out of order)."""
    return [
        step
        for step, index in run_at.items()
        if any(run_at.get(d, -1) > index for d in depends_on[step - 1])
    ]


def fewest_messages(
    depends_on: Sequence[tuple[int, ...]], skip: Collection[int] = frozenset()
) -> int:
    """The fewest messages of tool calls a faithful episode needs when each message holds
    every step whose inputs are available: the depth of the step graph, plus one for the
    answer (which needs the last step's value). ``skip``: steps not required (a branch not
    taken), which take no message."""
    depth: list[int] = []
    for step, deps in enumerate(depends_on, 1):
        own = 0 if step in skip else 1
        depth.append(own + max((depth[d - 1] for d in deps if d not in skip), default=0))
    return max(depth, default=0) + 1


@dataclass(slots=True)
class Batching:
    """The agent's messages of tool calls, and under ``dependency`` whether each held every
    step that was ready when it was sent (its inputs produced, itself not yet run): the
    ``batching_maximal`` metric. The labelling core owns one and tells it what happened."""

    depends_on: Sequence[tuple[int, ...]]
    skip: Collection[int] = frozenset()
    """Steps not required (a branch not taken): never ready."""
    messages: int = 0
    """The agent's messages with tool calls so far."""
    maximal: bool = True
    """Whether every message so far held every step ready when it was sent."""
    ready: set[int] = field(default_factory=set)
    """The steps ready when the current message was sent."""
    called: set[int] = field(default_factory=set)
    """The steps the current message has called."""

    def new_message(self, done: Collection[int] | None) -> None:
        """A new message begins; ``done``: the steps run so far (``None`` under ``listed``,
        where batching is not judged)."""
        self.close()
        self.messages += 1
        if done is not None:
            deps = self.depends_on
            skip = self.skip
            self.ready = {
                s
                for s in range(1, len(deps) + 1)
                if s not in done
                and s not in skip
                and all(d in done or d in skip for d in deps[s - 1])
            }
            self.called = set()

    def close(self) -> None:
        """A message that left out a step that was ready when it was sent is not maximal."""
        if self.messages and not self.ready <= self.called:
            self.maximal = False


@dataclass(slots=True)
class InFlight:
    """Under ``dependency``, what the calls of the current message produced: their results
    have not come back to the agent yet (calls of one message are sent together). The
    labelling core owns one, tells it each value produced and each new message, and asks
    it for ``unreturned_value`` and an answer sent with the last step."""

    returned: set[int]
    """Unit values the agent has been given: the inputs, and every value a call of an
    earlier message returned."""
    fresh: dict[int, set[int]] = field(default_factory=dict)
    """Variable index -> the values calls of the current message produced for it."""
    fresh_steps: set[int] = field(default_factory=set)
    """The steps run in the current message."""
    returned_steps: set[int] = field(default_factory=set)
    """The steps run in an earlier message (their results returned)."""

    def produced(self, step: int, var: int, value: int) -> None:
        """A call of the current message produced ``value`` for ``var`` (step ``step``)."""
        self.fresh.setdefault(var, set()).add(value)
        self.fresh_steps.add(step)

    def new_message(self) -> None:
        """The results of the previous message have come back."""
        for values in self.fresh.values():
            self.returned.update(values)
        self.returned_steps.update(self.fresh_steps)
        self.fresh, self.fresh_steps = {}, set()

    def unreturned(self, var: int, matches: Callable[[int], bool]) -> bool:
        """Whether an argument for ``var`` that ``matches`` a value equals one only a call of
        the current message produced for ``var``, never returned before (nor an input)."""
        fresh = self.fresh.get(var)
        return fresh is not None and any(v not in self.returned and matches(v) for v in fresh)

    def pending(self, step: int) -> bool:
        """Whether ``step`` first ran in the current message (its result not yet back)."""
        return step in self.fresh_steps and step not in self.returned_steps


class Traced(Protocol):
    """An entry of the labelling core's trace, as the divergence reads it."""

    index: int
    step: int | None
    finish: bool
    executed: bool
    answered: bool


Departure = Callable[[int, bool, "int | None"], str]
"""``(call index, clean, expected step) -> label``: the label naming a departure."""


def dependency_divergence(
    trace: Iterable[Traced],
    labelled: Collection[int],
    depends_on: Sequence[tuple[int, ...]],
    calls: int,
    departure: Departure,
    skip: Collection[int] = frozenset(),
) -> tuple[int, Divergence | None]:
    """The longest correct prefix and the first divergence under the ``dependency``
    policy: a clean first run of a step whose inputs were all produced extends the prefix,
    in any order; ``step`` is then the earliest listed step not yet run. ``labelled``: the
    calls with a label; ``calls``: the entries seen; ``skip``: steps not required (a
    branch not taken: neither run nor waited for)."""
    done: set[int] = set(skip)
    n = len(depends_on) - len(done)
    p = 0
    for e in trace:
        clean = e.index not in labelled
        s = e.step
        ready = s is not None and s not in done and all(d in done for d in depends_on[s - 1])
        if p < n and ready and e.executed and clean:
            done.add(s)  # type: ignore[arg-type]
            p += 1
            continue
        if p == n and e.finish and e.answered and clean:
            p += 1
            continue
        expected = next((k for k in range(1, len(depends_on) + 1) if k not in done), None)
        kind = departure(e.index, clean, expected)
        return min(p, n), {"call_index": e.index, "step": expected, "label": kind}
    if p <= n:
        expected = next((k for k in range(1, len(depends_on) + 1) if k not in done), None)
        kind = LabelKind.SKIPPED_STEP.value if p < n else LabelKind.MISSING_ANSWER.value
        return p, {"call_index": calls, "step": expected, "label": kind}
    return n, None
