"""A call-by-call timeline of a replayed episode, for the terminal.

One line per call where it fits the console: an argument or result longer than its
column wraps onto continuation lines, whole (past :data:`WHOLE` characters, its start
and end are shown and the count of characters between them; ``replay --json`` has them
all), a run of identical calls is folded into one line with its count, each label kind
has its colour, and the first divergence is marked ``▶``. Labels that do not fit
beside their call go on one continuation line under it (``↳``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from rich.cells import cell_len, get_character_cell_size
from rich.console import Console
from rich.text import Text

from agentproc.analysis.measures.step_names import named, scenario_names, step_text
from agentproc.analysis.render.console_fit import print_wrapped
from agentproc.analysis.stored.replay import Replay, labels_by_call
from agentproc.errors import one_line
from agentproc.labelling import Divergence, Label, LabelKind

VERDICT_STYLE = {
    "faithful": "green",
    "unfaithful_correct": "yellow",
    "wrong": "red",
    "no_answer": "red",
}

LABEL_STYLE: dict[LabelKind, str] = {
    LabelKind.HALLUCINATED_CALL: "magenta",
    LabelKind.INVALID_ARGUMENTS: "magenta",
    LabelKind.REPEATED_STEP: "yellow",
    LabelKind.REORDERED: "yellow",
    LabelKind.WRONG_ARGUMENT: "red",
    LabelKind.SKIPPED_STEP: "cyan",
    LabelKind.PREMATURE_FINISH: "bright_red",
    LabelKind.MISSING_ANSWER: "bright_red",
    LabelKind.WRONG_ANSWER: "bold red",
    LabelKind.ANSWER_REVISED: "blue",
    LabelKind.UNREADABLE: "magenta",
    LabelKind.UNRETURNED_VALUE: "yellow",
    LabelKind.UNNEEDED_STEP: "cyan",
}
"""The colour of each label kind: invented calls magenta, order, repeats and values not
yet returned yellow, skips and unneeded steps (a branch not taken) cyan,
wrong values red, skips cyan, answers bright red, revisions blue, unreadable
numbers magenta."""

ELLIPSIS = "…"
GAP = "  "
MIN_VALUE_WIDTH = 10
"""Arguments and results never get a column narrower than this."""
WHOLE = 2_000
"""Characters of an argument or result the timeline shows whole, wrapped; a longer one
(a megabyte an agent sent) shows its first and last :data:`SHOWN_ENDS` characters and
how many lie between."""
SHOWN_ENDS = 200

_REPEAT_NOTE = re.compile(
    r" \(note: step \d+ had already been executed; S\d+ was (\S+) and has been replaced\)$"
)


def describe(label: Label) -> str:
    """A label in a few words: ``wrong_argument(S3, propagated)``."""
    got, expected = _shown(label.got), _shown(label.expected)
    named = label.argument or label.field  # a wrong_answer's field, of a multi-field answer
    value = f"{named}={got}, expected {expected}" if named else None
    if label.argument and label.expected is None:  # unreadable, unreturned_value
        value = label.argument if label.got is None else f"{label.argument}={got}"
    attrs = [value, label.cause, label.confused_with and f"as {label.confused_with}"]
    if label.self_correction:
        attrs.append("self-correction")
    if label.breaks_dependency:
        attrs.append("breaks dependency")
    if label.missing_steps is not None:
        attrs.append(f"{label.missing_steps} missing")
    if label.refused:
        attrs.append("refused")
    if label.reason is not None:  # an unneeded step: a branch not taken, or past an exit
        attrs.append("past the exit" if label.reason == "after_exit" else "condition false")
    shown = ", ".join(a for a in attrs if a)
    return f"{label.kind.value}({shown})" if shown else label.kind.value


def _shown(value: object) -> object:
    """A label's value as the agent wrote it: JSON's ``true``, ``false`` and ``null`` (a
    branched workflow's booleans, an optional argument left out); anything else as is."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    return value


def elide(text: str, width: int) -> str:
    """``text`` on one line in at most ``width`` cells, cut in the middle when longer.

    Control characters are escaped; only the cells shown are ever measured, so a
    megabyte of text costs no more than a short one.

    >>> elide('{"S1": 2.5, "S2": 3.75}', 15)
    '{"S1": …: 3.75}'
    """
    head_text = one_line(text[: width * 4])
    if len(text) <= width * 4 and cell_len(head_text) <= width:
        return head_text
    tail_text = one_line(text[-width * 4 :])
    room = max(width - 1, 0)
    head = _take(head_text, (room + 1) // 2)
    tail = _take(tail_text[::-1], room - cell_len(head))[::-1]
    return head + ELLIPSIS + tail


def capped(text: str) -> str:
    """``text`` when at most :data:`WHOLE` characters, else its ends and the count between."""
    if len(text) <= WHOLE:
        return text
    between = len(text) - 2 * SHOWN_ENDS
    return f"{text[:SHOWN_ENDS]} [{between:,} characters more] {text[-SHOWN_ENDS:]}"


def wrap_value(text: str, width: int) -> list[str]:
    """``text`` whole, in lines of at most ``width`` cells (control characters escaped),
    broken after a ``,`` or a space when one lies in the second half of a line.

    >>> wrap_value('{"S1":3.5,"S2":2.491}', 12)
    ['{"S1":3.5,', '"S2":2.491}']
    """
    rest, lines = one_line(capped(text)), []
    width = max(width, 1)
    while cell_len(rest) > width:
        head = _take(rest, width) or rest[0]
        cut = max(head.rfind(","), head.rfind(" ")) + 1
        if cut > len(head) // 2:
            head = head[:cut]
        lines.append(head.rstrip(" "))
        rest = rest[len(head) :]
    return [*lines, rest] if rest or not lines else lines


def _take(text: str, cells: int) -> str:
    used = 0
    for i, ch in enumerate(text):
        used += get_character_cell_size(ch)
        if used > cells:
            return text[:i]
    return text


def _result(call_result: str) -> str:
    """A repeat's result without the long note its label already says."""
    return _REPEAT_NOTE.sub(r" (again, was \1)", call_result)


@dataclass
class _Row:
    index: int
    name: str
    arguments: str
    result: str
    labels: list[Label]
    marked: bool
    count: int = 1

    def folds(self, other: _Row) -> bool:
        """Whether ``other``, the next call, repeats this one exactly."""
        return (
            not other.marked
            and (other.name, other.arguments, other.result)
            == (self.name, self.arguments, self.result)
            and [describe(a) for a in other.labels] == [describe(a) for a in self.labels]
        )

    @property
    def call(self) -> str:
        return self.name if self.count == 1 else f"{self.name} \u00d7 {self.count}"


def _rows(replay: Replay, div: Divergence | None) -> list[_Row]:
    by_call = labels_by_call(replay.labels)
    mark = div["call_index"] if div is not None else None
    rows: list[_Row] = []
    for i, line in enumerate(replay.text_entries or []):
        rows.append(_Row(i, "text", line, "", by_call.get(i, []), mark == i))
    for rec in replay.calls:
        row = _Row(
            rec.index,
            rec.name,
            rec.arguments,
            _result(rec.result),
            by_call.get(rec.index, []),
            mark == rec.index,
        )
        if rows and rows[-1].folds(row):
            rows[-1].count += 1
        else:
            rows.append(row)
    return rows


def _labels_text(labels: list[Label]) -> Text:
    return Text("; ").join(Text(describe(lab), style=LABEL_STYLE[lab.kind]) for lab in labels)


@dataclass(frozen=True)
class _Widths:
    index: int
    call: int
    arguments: int
    result: int
    labels: int


def _typical(widths: list[int], floor: int, cap: int = 30) -> int:
    """The width that fits three values in four, so a few long ones do not set it."""
    ranked = sorted(widths)
    return max(floor, min(ranked[(len(ranked) - 1) * 3 // 4] if ranked else 0, cap))


def _widths(rows: list[_Row], width: int) -> _Widths:
    """Column widths: values get what they typically need, labels the rest; when
    labels do not fit beside their values, values shrink (to no less than
    :data:`MIN_VALUE_WIDTH`) before labels move to a continuation line."""
    index = max([cell_len(str(r.index)) + 2 for r in rows] + [3])
    call = min(max([cell_len(r.call) for r in rows] + [4]), 24)
    args_all = [cell_len(one_line(r.arguments[:200])) for r in rows]
    result_all = [cell_len(one_line(r.result[:200])) for r in rows]
    args, result = _typical(args_all, 9), _typical(result_all, 6)
    label_all = [len(_labels_text(r.labels)) for r in rows if r.labels]
    room = width - index - call - 4 * len(GAP)
    need = min(max([*label_all, 6]), room - 2 * MIN_VALUE_WIDTH)
    if args + result + need <= room:
        labels = need
        grow = min(room - labels - args - result, max([*result_all, 0]) - result)
        result += max(grow, 0)
        args += max(min(room - labels - args - result, max([*args_all, 0]) - args), 0)
    else:
        floor = max(2 * MIN_VALUE_WIDTH, (args + result) * 7 // 10)
        if floor + need <= room:
            values = max(floor, room - need)
        else:  # the long labels go under their call: keep the values whole
            values = min(args + result, max(floor, room - 17))
        for _ in range(args + result - values):  # narrow the wider value first
            if max(args, result) <= MIN_VALUE_WIDTH:
                break
            if result >= args:
                result -= 1
            else:
                args -= 1
    return _Widths(index, call, args, result, max(room - args - result, 0))


def _lines(w: _Widths, row: _Row) -> list[Text]:
    """A row's lines: its values whole, each wrapped within its column."""
    cells = [
        wrap_value(row.call, w.call),
        wrap_value(row.arguments, w.arguments),
        wrap_value(row.result, w.result),
    ]
    sizes = (w.call, w.arguments, w.result)
    out = []
    for k in range(max(len(c) for c in cells)):
        idx = (("▶ " if row.marked else "") + str(row.index)) if k == 0 else ""
        line = Text(idx.rjust(w.index), style="bold red" if row.marked else "")
        for cell, size in zip(cells, sizes, strict=True):
            part = cell[k] if k < len(cell) else ""
            line.append(GAP + part + " " * (size - cell_len(part)))
        if row.marked:
            line.stylize("bold")
        out.append(line)
    return out


def render_timeline(replay: Replay, console: Console) -> None:
    """Print the timeline, the first divergence marked, then the episode's findings."""
    m = replay.metrics
    div = m["first_divergence"]
    width = console.width
    console.print(Text(f"{replay.scenario.id}  ({replay.agent})", style="bold"), soft_wrap=True)
    rows = _rows(replay, div)
    w = _widths(rows, width)
    cells = [("call", w.call), ("arguments", w.arguments), ("result", w.result)]
    head = "#".rjust(w.index) + "".join(GAP + name.ljust(size) for name, size in cells)
    console.print(Text(head + GAP + "labels", style="dim"), soft_wrap=True)
    for row in rows:
        lines, labels = _lines(w, row), _labels_text(row.labels)
        beside = bool(labels) and len(labels) <= w.labels
        if beside:  # beside the call's first line
            lines[0].append(GAP)
            lines[0].append_text(labels)
        for line in lines:
            line.rstrip()
            console.print(line, soft_wrap=True)
        if labels and not beside:
            line = Text(" " * (w.index + len(GAP)) + "↳ ")
            line.append_text(labels)
            if len(line) > width:  # longer than the width: wrap it, lose nothing
                print_wrapped(console, line)
            else:
                console.print(line, soft_wrap=True)
    _summary(replay, console, width)


def _summary(replay: Replay, console: Console, width: int) -> None:
    m = replay.metrics
    div = m["first_divergence"]
    episode = [describe(lab) for lab in replay.labels if lab.call_index is None]
    names = scenario_names(replay.scenario)  # a declared workflow's steps, by tool
    steps = ", ".join(
        named(lab.step, names)
        for lab in replay.labels
        if lab.kind.value == "skipped_step" and lab.step is not None
    )
    verdict = m["verdict"]
    console.print(Text(f"verdict: {verdict}", style=VERDICT_STYLE.get(verdict, "")))
    given = m.get("given_steps", 0)
    expected: object = replay.scenario.answer_fields or replay.scenario.answer
    if given:  # judged against the state the pre-filled calls left
        wf = replay.workflow
        expected = f"{wf.expected[wf.answer_index]} after the pre-fill"
    answers = (
        f"answer: {m['first_answer']} (first), {m['final_answer']} (final); expected {expected}"
    )
    progress = (
        f"steps executed {m['executed_steps']}/{m['total_steps']}; "
        f"progress {m['progress_rate']:.2f}; correct prefix {m['longest_correct_prefix']}"
    )
    if cell_len(answers) + 2 + cell_len(progress) <= width:
        console.print(f"{answers}; {progress}", highlight=False, soft_wrap=True)
    else:
        console.print(answers, highlight=False, soft_wrap=True)
        console.print(progress, highlight=False, soft_wrap=True)
    if given:
        console.print(
            f"calls 0 to {given - 1}: pre-filled steps 1 to {given}, given (not the agent's, "
            "not labelled; the counts above are its own)",
            highlight=False,
            soft_wrap=True,
        )
    if replay.redacted:
        calls = ", ".join(map(str, sorted(replay.redacted)))
        print_wrapped(
            console,
            f"calls {calls}: a credential in the name or arguments was replaced by "
            "[REDACTED] before the call ran (a value of no step)",
        )
    if div is not None:
        step = step_text(div["step"], names) if div["step"] is not None else "the answer"
        console.print(
            Text(f"first divergence: call {div['call_index']} at {step}: {div['label']}"),
            soft_wrap=True,
        )
    if episode:
        skipped = f" (skipped steps: {steps})" if steps else ""
        print_wrapped(console, "episode: " + ", ".join(sorted(set(episode))) + skipped)
    if replay.differences:
        console.print(
            Text(f"{len(replay.differences)} difference(s) from the recording:", style="red")
        )
        for d in replay.differences:
            print_wrapped(console, Text(f"  - {one_line(capped(d))}"))
    elif replay.compared:
        console.print("replay matches the recording")
