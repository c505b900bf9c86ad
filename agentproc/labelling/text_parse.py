"""Reading a text-mode reply: the step and answer lines, in order of appearance.

The parser is tolerant of the ways models write (markdown, numbering,
``S5 = S4 - S3 = 12.5``, thousands separators, unicode minus, ``\\boxed{}``,
"the answer is ..."); :mod:`agentproc.labelling.text` labels what it reads.
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
_STEP = re.compile(r"^s(\d+)\s*:?=(.*)$", re.I)
_SPLIT = re.compile(r"[;,]\s*(?=s\d+\s*:?=)", re.I)
_BOXED = re.compile(r"\\boxed\{([^{}]*)\}")
_ANSWER = re.compile(r"\banswer\b\s*(?:is\b|[:=])(.*)", re.I)
_NUMBER = re.compile(r"(?<![\w.])-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?")
_ASIDE = re.compile(r"\([^()]*\)")
MAX_NUMBER = 100
"""A number longer than this many characters is not read (its line is ignored)."""


def _last_number(text: str) -> str | None:
    """The last number after the final '=', parenthesised asides left out when possible."""
    tail = text.rsplit("=", 1)[-1]
    found = _NUMBER.findall(_ASIDE.sub(" ", tail)) or _NUMBER.findall(tail)
    number = found[-1].replace(",", "") if found else None
    return number if number and len(number) <= MAX_NUMBER else None


def parse_text(text: str) -> TextTrace:
    r"""Read the step and answer lines of a reply; other lines are ignored.

    An answer line (``Answer: 3``, ``The final answer is 3``, ``\boxed{3}``) is
    never also read as a step line; a line may hold several steps
    (``S3 = 5, S4 = 15``).

    >>> [(e.kind, e.var, e.value) for e in parse_text("**S3** = 5.5\nAnswer: 5.5").entries]
    [('step', 3, 5.5), ('answer', None, 5.5)]
    """
    entries = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.translate(_CLEAN).replace("**", "").replace("__", "").replace("\\approx", "=")
        answer = _BOXED.search(line) or _ANSWER.search(line)
        if answer:
            value = _last_number(answer.group(1))
            if value is not None:
                entries.append(TextEntry("answer", value, number, raw))
            continue
        for part in _SPLIT.split(line):
            m = _STEP.match(_PREFIX.sub("", part, count=1))
            value = _last_number(m.group(2)) if m else None
            if m and value is not None:
                entries.append(TextEntry("step", value, number, raw, int(m.group(1))))
    return TextTrace(tuple(entries))
