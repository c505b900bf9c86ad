"""The patterns string ids are drawn by (``ORD-[0-9]{5}``): a small language, read by its
own parser and never by :mod:`re`, so a pattern in a workflow file can only say what it
is meant to say. Pure.

A pattern is a sequence of *atoms*, each optionally repeated ``{n}`` times (1 to
:data:`MAX_REPEAT`): a literal character (a letter, a digit, or one of ``-_.:/#``), or
a class in brackets: ``[A-Z]``, ``[a-z]``, ``[0-9]``, or several of them together
(``[A-Z0-9]``). Nothing else: no ``*``, ``+``, ``?``, alternation, negation or escape.
An id drawn by it is one character drawn uniformly from each atom, in order.

>>> p = parse_pattern("ORD-[0-9]{5}")
>>> len(draw(p, random.Random(1)))
9
>>> matches(p, "ORD-00042"), matches(p, "ord-00042")
(True, False)
"""

from __future__ import annotations

import random
import string
from math import prod

MAX_PATTERN = 64
"""Characters a pattern may hold."""
MAX_REPEAT = 32
"""The largest ``{n}``."""
MAX_ID = 64
"""Characters an id drawn by a pattern may hold (a category name's bound)."""
LITERALS = frozenset(string.ascii_letters + string.digits + "-_.:/#")
"""The characters a pattern may hold as themselves."""
_RANGES = {"A-Z": string.ascii_uppercase, "a-z": string.ascii_lowercase, "0-9": string.digits}

Pattern = tuple[str, ...]
"""A parsed pattern: each position's allowed characters, in order."""


class PatternError(ValueError):
    """A pattern that is not one: what is wrong, in one line."""


def parse_pattern(text: str) -> Pattern:
    """Each position's allowed characters.

    Raises:
        PatternError: text that is not a pattern of this language (the message says why).
    """
    if not 0 < len(text) <= MAX_PATTERN:
        raise PatternError(f"a pattern is 1 to {MAX_PATTERN} characters")
    out: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c == "[":
            end = text.find("]", i)
            if end < 0:
                raise PatternError(f"'[' at {i} is never closed")
            atom = _class(text[i + 1 : end], i)
            i = end + 1
        elif c in LITERALS:
            atom, i = c, i + 1
        else:
            raise PatternError(
                f"{c!r} at {i} is not allowed (only letters, digits, -_.:/#, classes such as "
                "[A-Z], [a-z], [0-9], [A-Z0-9], and a repeat {n})"
            )
        times = 1
        if i < len(text) and text[i] == "{":
            end = text.find("}", i)
            digits = text[i + 1 : end] if end > 0 else ""
            if not digits.isdigit() or not 1 <= int(digits) <= MAX_REPEAT:
                raise PatternError(f"a repeat at {i} is {{n}} with n from 1 to {MAX_REPEAT}")
            times, i = int(digits), end + 1
        out.extend([atom] * times)
    if len(out) > MAX_ID:
        raise PatternError(f"its ids would be {len(out)} characters (at most {MAX_ID})")
    return tuple(out)


def _class(inner: str, at: int) -> str:
    """A bracketed class's characters: one or more of ``A-Z``, ``a-z``, ``0-9``."""
    chars = ""
    for k in range(0, len(inner), 3):
        part = inner[k : k + 3]
        if part not in _RANGES:
            raise PatternError(f"[{inner}] at {at} is not a class of A-Z, a-z and 0-9")
        chars += _RANGES[part]
    if not chars or len(set(chars)) != len(chars):
        raise PatternError(f"[{inner}] at {at} is not a class of A-Z, a-z and 0-9")
    return chars


def size(pattern: Pattern) -> int:
    """How many distinct ids the pattern can draw."""
    return prod(len(atom) for atom in pattern)


def draw(pattern: Pattern, rng: random.Random) -> str:
    """One id, each position drawn uniformly among its characters."""
    return "".join(atom[rng.randrange(len(atom))] if len(atom) > 1 else atom for atom in pattern)


def draw_distinct(pattern: Pattern, count: int, rng: random.Random) -> list[str]:
    """``count`` distinct ids, in the order drawn (the pattern must hold that many)."""
    if size(pattern) < count:
        raise PatternError(f"it holds {size(pattern)} ids, fewer than {count}")
    seen: dict[str, None] = {}
    while len(seen) < count:
        seen.setdefault(draw(pattern, rng))
    return list(seen)


def matches(pattern: Pattern, text: str) -> bool:
    """Whether ``text`` is an id the pattern can draw (exactly: no case folding)."""
    return len(text) == len(pattern) and all(
        c in atom for c, atom in zip(text, pattern, strict=False)
    )
