"""The drill-down's call table: expected and actual calls lined up by step.

Pairing the n-th expected call with the n-th actual call makes every row after one
skipped step look wrong. Instead each step of the procedure (then the answer) gets
a row holding the first call that ran it, whenever that call came; a step no call
ran keeps its row with an empty actual cell (and its ``skipped_step`` label); a
further call of a step (a repeat, a retry) gets a row of its own under the step's
first one, with an empty expected cell; a call that runs no step (an invented
tool) gets a row of its own just after the call made before it. The ``#`` of each
row is the call's place in the episode, so a reordering shows as ``#`` out of order.

>>> [(r.step, r.call) for r in align(["a", "b", "c"], "finish", [1, 3, None, 4])]
[('1', 0), ('2', None), ('3', 1), ('', 2), ('answer', 3)]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Row:
    """One row of the aligned call table."""

    step: str
    """The step's number, ``answer``, or empty for a call that runs no step."""
    expected: str
    """The expected call, empty on a further call of a step or an extra call."""
    call: int | None
    """The index of the actual call shown, ``None`` when no call ran the step."""


ANSWER = "answer"
"""The ``step`` of the answer's row."""


def align(expected: Sequence[str], finish: str, slots: Sequence[int | None]) -> list[Row]:
    """Rows for the steps' ``expected`` calls and the ``finish`` call, given for each
    actual call the slot it fills (``slots[i]``: its step, 1 to ``len(expected)``, or
    ``len(expected) + 1`` for an answer, or ``None`` when it runs no step)."""
    n = len(expected)
    runs: list[list[int]] = [[] for _ in range(n + 1)]
    after: dict[int, list[int]] = {}
    """Extra calls by the last call before them that runs a step (-1: none did)."""
    last = -1
    for i, slot in enumerate(slots):
        if slot is not None and 1 <= slot <= n + 1:
            runs[slot - 1].append(i)
            last = i
        else:
            after.setdefault(last, []).append(i)
    rows = [Row("", "", c) for c in after.get(-1, [])]
    for s, calls in enumerate(runs):
        name = str(s + 1) if s < n else ANSWER
        want = expected[s] if s < n else finish
        if not calls:  # a step no call ran
            rows.append(Row(name, want, None))
        for k, c in enumerate(calls):
            rows.append(Row(name, "" if k else want, c))
            rows += [Row("", "", e) for e in after.get(c, [])]
    return rows
