r"""Reading a text-mode reply: the step and answer lines, in order of appearance.

The parser is tolerant of the ways models write (markdown and its tables, numbering,
``S5 = S4 - S3 = 12.5``, ``S5: 12.5``, ``S_{5} = 12.5``, "the value of S5 is 12.5",
unicode minus, ``\\boxed{}``, "the answer is ..."), and reads numbers in the forms
:mod:`agentproc.labelling.text_numbers` lists or marks them unreadable; when a reply
states no answer explicitly, its final statement of the answer variable's value
(or a last line holding only a number) is read as an *implicit* answer.
:mod:`agentproc.labelling.text` labels what it reads.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal

from agentproc.labelling.text_numbers import (
    UNREADABLE,
    answer_in,
    first_value,
    number_of,
    value_in,
    without_asides,
)


@dataclass(frozen=True, slots=True)
class TextEntry:
    """One step line (``S7 = 12.5``) or answer line read from a reply."""

    kind: Literal["step", "answer"]
    number: str
    """The number as written, without thousands separators, in a form
    :class:`~fractions.Fraction` reads: ``-1234.5``, ``1.679607e6``, ``-84/125``
    (empty when :attr:`unreadable`)."""
    line: int
    """1-based line number in the reply."""
    raw: str
    """The line as written."""
    var: int | None = None
    """For a step line, the variable index (7 for ``S7``)."""
    implicit: bool = False
    """For an answer, True when the reply did not state it explicitly: it is read
    from the final statement of the answer variable's value ("S12 = 3", "Final
    value: 3") or from a bare number on the last line."""
    unreadable: bool = False
    """The line states a value in a form that cannot be read exactly (``12,5``,
    ``4.318 / 1.204``): no number is guessed."""

    @property
    def value(self) -> float | int:
        """The number as JSON: an ``int`` when it is whole and written without a
        decimal point or fraction."""
        exact = Fraction(self.number)
        if exact.denominator == 1 and "." not in self.number and "/" not in self.number:
            return int(exact)
        return float(exact)


@dataclass(frozen=True, slots=True)
class TextTrace:
    """The entries of a reply, in order of appearance."""

    entries: tuple[TextEntry, ...]


_CLEAN = str.maketrans({"\u2212": "-", "\u2013": "-", "\u2248": "=", "$": None, "`": None})
_SUBSCRIPT = str.maketrans("₀₁₂₃₄₅₆₇₈₉", "0123456789")
_LATEX_FORMS: tuple[tuple[re.Pattern[str], Any], ...] = (
    (re.compile(r"\{,\}"), ","),  # -90{,}234{,}819.368
    (re.compile(r"\\[,;:]"), "\u2009"),  # 1\,679\,607
    (re.compile(r"\\!"), ""),
    (re.compile(r"\\(?:times|cdot)\b"), "\u00d7"),
    (re.compile(r"\^\{\s*([-+]?\d+)\s*\}"), r"^\1"),  # 10^{6}
    (re.compile(r"(-?)\\[dt]?frac\{\s*(-?\d+)\s*\}\{\s*(\d+)\s*\}"), r"\1\2/\3"),
    (re.compile(r"\\(?:text|mathrm|mathbf|textbf)\{([^{}]*)\}"), r"\1"),
    (re.compile(r"\bS_\{?\s*(\d+)\s*\}?"), r"S\1"),  # S_3, S_{3}
    (re.compile(r"\bS([₀-₉]+)"), lambda m: "S" + m.group(1).translate(_SUBSCRIPT)),
)
"""LaTeX and unicode spellings rewritten to the plain forms the patterns read."""
_PREFIX = re.compile(r"^(?:\s*(?:[-*+\u2022>#]+|\d+[.)]|step\s*\d+\s*[:.)-]?))*\s*", re.I)
_STEP = re.compile(r"^s(\d+)\s*(?::?=|:)(.*)$", re.I)
"""``S7 = x``, ``S7 := x``, ``S7: x``."""
_STEP_IS = re.compile(
    r"^(?:(?:so|thus|therefore|hence|now|then|finally)\b[\s,:]*)?"
    r"(?:(?:the\s+)?(?:final\s+)?value\s+of\s+)?s(\d+)\s+is\b(.*)$",
    re.I,
)
"""``S7 is x``, ``the value of S7 is x``."""
_LEAD = re.compile(
    r"\s*(?:(?:therefore|thus|now|then|about|approximately|roughly|exactly|equal\s+to)\s+)*",
    re.I,
)
_COMPARED = re.compile(r"\s*(?:more|less|times|greater|smaller|higher|lower|than)\b", re.I)
"""After the number of ``S7 is x``: "S7 is 2 more than S6" is no step."""
_SPLIT = re.compile(r"[;,]\s*(?=s\d+\s*(?::?=|:|is\b))", re.I)
_BOXED = re.compile(r"\\boxed\{([^{}]*)\}")
_ANSWER = re.compile(
    r"\banswer\b\s*(?:is\b|[:=])(.*)"
    r"|\(\s*(?:the\s+)?(?:final\s+)?answer\s*\)\s*(?:is\b|[:=])(.*)",
    re.I,
)
"""``Answer: x``, ``the answer is x``, ``The value of S10 (the answer) is x``."""
_FINAL = re.compile(
    r"(?:\bfinal\s+(?:value|result)\b(?:\s+of\s+s\d+\b)?(?:\s*\([^()]*\))?\s*(?:is\b|[:=])"
    r"|\bthe\s+result\s+is\b)(.*)",
    re.I,
)
"""``Final value: x``, ``final result is x``, ``the result is x``: an implicit answer."""
_LATEX = re.compile(r"\\[()\[\]]")


def _clean(raw: str) -> str:
    """A line with unicode minus, markdown emphasis, inline-code/maths marks and LaTeX
    spellings undone; a markdown table row read as one statement."""
    line = raw.translate(_CLEAN).replace("**", "").replace("__", "")
    line = line.replace("\\approx", "=")
    for pattern, plain in _LATEX_FORMS:
        line = pattern.sub(plain, line)
    return _row(line)


_ROW_START = re.compile(r"^\s*(?:s\d+\b|(?:final\s+)?answer\b)", re.I)


def _row(line: str) -> str:
    """A markdown table row as a statement: its cells from the first that names a
    variable (or the answer) on, joined by ``=`` (``| 3 | S5 | S4 - S3 | 12.5 |`` reads
    as ``S5 = S4 - S3 = 12.5``); any other line as it is."""
    text = line.strip()
    if not text.startswith("|"):
        return line
    cells = [c.strip() for c in text.strip("|").split("|")]
    for i, cell in enumerate(cells):
        if _ROW_START.match(cell):
            return " = ".join(c for c in cells[i:] if c)
    return ""


def _steps(line: str) -> list[tuple[int, str]]:
    """The (variable, number) of each step a cleaned line states, in order (the number
    :data:`~agentproc.labelling.text_numbers.UNREADABLE` where it cannot be read)."""
    out = []
    for part in _SPLIT.split(line):
        part = _PREFIX.sub("", part, count=1)
        value: str | None = None
        if m := _STEP.match(part):
            value = value_in(m.group(2))
        elif m := _STEP_IS.match(part):
            rest = m.group(2)
            if "=" in rest:
                value = value_in(rest)
            else:
                value, end = first_value(rest[_LEAD.match(rest).end() :])  # type: ignore[union-attr]
                lead = _LEAD.match(rest).end()  # type: ignore[union-attr]
                if value is not None and _COMPARED.match(rest, lead + end):
                    value = None
        if m and value is not None:
            out.append((int(m.group(1)), value))
    return out


def _bare(lines: list[str]) -> TextEntry | None:
    """The number the last line holds alone (``**12.5**``, ``$-1,234.5$.``), as an answer."""
    for number, raw in reversed(list(enumerate(lines, 1))):
        if not re.search(r"\w", raw):
            continue  # blank, a rule (---) or a fence (```)
        text = _LATEX.sub("", _clean(raw)).strip()
        text = without_asides(text).strip().removesuffix(".").strip()
        value = number_of(text)
        return _entry("answer", value, number, raw, implicit=True) if value else None
    return None


def _entry(
    kind: Literal["step", "answer"],
    value: str,
    line: int,
    raw: str,
    var: int | None = None,
    implicit: bool = False,
) -> TextEntry:
    if value == UNREADABLE:
        return TextEntry(kind, "", line, raw, var, implicit, unreadable=True)
    return TextEntry(kind, value, line, raw, var, implicit)


_NAMED = re.compile(r"\bs(\d+)\s*$", re.I)
"""The variable an answer statement names, right before ``(the answer)``."""


def _named_step(line: str, answer: re.Match[str], entries: list[TextEntry]) -> int | None:
    """The variable a statement such as "The value of S10 (the answer) is x" names, when
    the reply has not written that step yet: the statement also writes it."""
    if answer.re is not _ANSWER or answer.group(2) is None:
        return None
    named = _NAMED.search(line, 0, answer.start())
    if named is None:
        return None
    var = int(named.group(1))
    written = any(e.kind == "step" and e.var == var and not e.unreadable for e in entries)
    return None if written else var


def parse_text(text: str, answer_variable: int | None = None) -> TextTrace:
    r"""Read the step and answer lines of a reply; other lines are ignored.

    An answer line (``Answer: 3``, ``The final answer is 3``, ``\boxed{3}``,
    ``The value of S10 (the answer) is 3``) is not also read as a step line, except
    that one naming a variable the reply has not written yet ("The value of S10 (the
    answer) is 3", ``S10 (the answer) = 3``) also writes that step, just before the
    answer: it stands in place of the step's line. A line may hold several steps
    (``S3 = 5, S4 = 15``). Steps read as ``S7 = x``,
    ``S7 := x``, ``S7: x``, ``S7 is x`` or "the value of S7 is x", also spelled
    ``S_7``, ``S_{7}`` or in a markdown table row. Numbers are read as
    :mod:`~agentproc.labelling.text_numbers` says; one that cannot be read exactly
    makes its entry ``unreadable``.

    When the reply states no answer explicitly, one implicit answer
    (``implicit=True``) is read, if any, from the first of:

    * its final statement of the answer's value: the last step line for
      ``answer_variable`` (the answer is inserted right after that step), or a
      later "Final value: x" / "Final result: x" / "The result is x" line (read
      even when ``answer_variable`` is None);
    * a bare number on its last line (``12.5``, ``**12.5**``, ``$-1,234.5$.``),
      appended at the end.

    >>> [(e.kind, e.var, e.value) for e in parse_text("**S3** = 5.5\nAnswer: 5.5").entries]
    [('step', 3, 5.5), ('answer', None, 5.5)]
    >>> [(e.kind, e.var, e.value, e.implicit) for e in parse_text("S3: 5.5", 3).entries]
    [('step', 3, 5.5, False), ('answer', None, 5.5, True)]
    """
    lines = text.splitlines()
    entries: list[TextEntry] = []
    explicit = False
    final: tuple[int, TextEntry] | None = None  # the latest final statement: where, what
    for number, raw in enumerate(lines, 1):
        line = _clean(raw)
        answer = _BOXED.search(line) or _ANSWER.search(line)
        if answer:
            said = next(g for g in answer.groups() if g is not None)
            value = answer_in(said)
            if value is not None:
                named = _named_step(line, answer, entries)
                if named is not None:
                    entries.append(_entry("step", value, number, raw, named))
                entries.append(_entry("answer", value, number, raw))
                explicit = True
            continue
        steps = _steps(line)
        for var, value in steps:
            entries.append(_entry("step", value, number, raw, var))
            if var == answer_variable:
                final = len(entries), _entry("answer", value, number, raw, implicit=True)
        found = _FINAL.search(line) if not steps else None
        value = value_in(found.group(1)) if found else None
        if value is not None:
            final = len(entries), _entry("answer", value, number, raw, implicit=True)
    if not explicit:
        bare = None if final else _bare(lines)
        if final:
            entries.insert(*final)
        elif bare:
            entries.append(bare)
    return TextTrace(tuple(entries))
