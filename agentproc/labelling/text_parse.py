r"""Reading a text-mode reply: the step and answer lines, in order of appearance.

The parser is tolerant of the ways models write (markdown, numbering,
``S5 = S4 - S3 = 12.5``, ``S5: 12.5``, "the value of S5 is 12.5", thousands
separators, unicode minus, ``\\boxed{}``, "the answer is ..."); when a reply
states no answer explicitly, its final statement of the answer variable's value
(or a last line holding only a number) is read as an *implicit* answer.
:mod:`agentproc.labelling.text` labels what it reads.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal


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
    implicit: bool = False
    """For an answer, True when the reply did not state it explicitly: it is read
    from the final statement of the answer variable's value ("S12 = 3", "Final
    value: 3") or from a bare number on the last line."""

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
_NUM = r"-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
_NUMBER = re.compile(rf"(?<![\w.]){_NUM}")
_STEP = re.compile(r"^s(\d+)\s*(?::?=|:)(.*)$", re.I)
"""``S7 = x``, ``S7 := x``, ``S7: x``."""
_STEP_IS = re.compile(
    r"^(?:(?:so|thus|therefore|hence|now|then|finally)\b[\s,:]*)?"
    r"(?:(?:the\s+)?(?:final\s+)?value\s+of\s+)?s(\d+)\s+is\b(.*)$",
    re.I,
)
"""``S7 is x``, ``the value of S7 is x``."""
_LEAD = re.compile(
    rf"\s*(?:(?:therefore|thus|now|then|about|approximately|roughly|exactly|equal\s+to)\s+)*"
    rf"({_NUM})(?![\d,])(?!\s*(?:more|less|times|greater|smaller|higher|lower|than)\b)",
    re.I,
)
"""The number right after "is" in ``S7 is x``: "S7 is S6 - S5", "S7 is 2 more than S6"
are no steps."""
_SPLIT = re.compile(r"[;,]\s*(?=s\d+\s*(?::?=|:|is\b))", re.I)
_BOXED = re.compile(r"\\boxed\{([^{}]*)\}")
_ANSWER = re.compile(r"\banswer\b\s*(?:is\b|[:=])(.*)", re.I)
_FINAL = re.compile(
    r"(?:\bfinal\s+(?:value|result)\b(?:\s+of\s+s\d+\b)?(?:\s*\([^()]*\))?\s*(?:is\b|[:=])"
    r"|\bthe\s+result\s+is\b)(.*)",
    re.I,
)
"""``Final value: x``, ``final result is x``, ``the result is x``: an implicit answer."""
_LATEX = re.compile(r"\\[()\[\]]")
_ASIDE = re.compile(r"\([^()]*\)")
MAX_NUMBER = 100
"""A number longer than this many characters is not read (its line is ignored)."""


def _clean(raw: str) -> str:
    """A line with unicode minus, markdown emphasis and inline-code/maths marks undone."""
    line = raw.translate(_CLEAN).replace("**", "").replace("__", "")
    return line.replace("\\approx", "=")


def _capped(number: str | None) -> str | None:
    number = number.replace(",", "") if number else None
    return number if number and len(number) <= MAX_NUMBER else None


def _last_number(text: str) -> str | None:
    """The last number after the final '=', parenthesised asides left out when possible."""
    tail = text.rsplit("=", 1)[-1]
    found = _NUMBER.findall(_ASIDE.sub(" ", tail)) or _NUMBER.findall(tail)
    return _capped(found[-1] if found else None)


def _steps(line: str) -> list[tuple[int, str]]:
    """The (variable, number) of each step a cleaned line states, in order."""
    out = []
    for part in _SPLIT.split(line):
        part = _PREFIX.sub("", part, count=1)
        value: str | None = None
        if m := _STEP.match(part):
            value = _last_number(m.group(2))
        elif m := _STEP_IS.match(part):
            rest = m.group(2)
            lead = _LEAD.match(rest)
            value = _last_number(rest) if "=" in rest else _capped(lead.group(1) if lead else None)
        if m and value is not None:
            out.append((int(m.group(1)), value))
    return out


def _bare(lines: list[str]) -> TextEntry | None:
    """The number the last line holds alone (``**12.5**``, ``$-1,234.5$.``), as an answer."""
    for number, raw in reversed(list(enumerate(lines, 1))):
        if not re.search(r"\w", raw):
            continue  # blank, a rule (---) or a fence (```)
        text = _LATEX.sub("", _clean(raw)).strip()
        text = re.sub(r"\s*\([^()]*\)\s*\.?$", "", text).strip().removesuffix(".").strip()
        value = _capped(text) if re.fullmatch(_NUM, text) else None
        return TextEntry("answer", value, number, raw, implicit=True) if value else None
    return None


def parse_text(text: str, answer_variable: int | None = None) -> TextTrace:
    r"""Read the step and answer lines of a reply; other lines are ignored.

    An answer line (``Answer: 3``, ``The final answer is 3``, ``\boxed{3}``) is
    never also read as a step line; a line may hold several steps
    (``S3 = 5, S4 = 15``). Steps read as ``S7 = x``, ``S7 := x``, ``S7: x``,
    ``S7 is x`` or "the value of S7 is x".

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
            value = _last_number(answer.group(1))
            if value is not None:
                entries.append(TextEntry("answer", value, number, raw))
                explicit = True
            continue
        steps = _steps(line)
        for var, value in steps:
            entries.append(TextEntry("step", value, number, raw, var))
            if var == answer_variable:
                final = len(entries), TextEntry("answer", value, number, raw, implicit=True)
        said = _FINAL.search(line) if not steps else None
        value = _last_number(said.group(1)) if said else None
        if value is not None:
            final = len(entries), TextEntry("answer", value, number, raw, implicit=True)
    if not explicit:
        bare = None if final else _bare(lines)
        if final:
            entries.insert(*final)
        elif bare:
            entries.append(bare)
    return TextTrace(tuple(entries))
