"""Dates of a declared workflow (format 2): ISO text (``2026-03-01``) everywhere, read
strictly, drawn uniformly over the days of a range. Pure.

A date is held as its ISO text, so that it is shown, passed and compared exactly as
written: ``2026-3-1`` is no date here (a tool refuses it). ISO text of one width orders
as the dates do, so ``<`` on two dates compares their text.

>>> days_between("2026-02-27", "2026-03-01")
2
>>> parse_date("2026-3-1") is None
True
"""

from __future__ import annotations

import random
from datetime import date

_DIGITS = frozenset("0123456789")


def parse_date(text: object) -> date | None:
    """The date of ISO text ``YYYY-MM-DD`` (exactly that shape), else ``None``."""
    if not isinstance(text, str) or len(text) != 10 or text[4] != "-" or text[7] != "-":
        return None
    if not all(c in _DIGITS for c in text[:4] + text[5:7] + text[8:]):
        return None
    try:
        return date(int(text[:4]), int(text[5:7]), int(text[8:]))
    except ValueError:  # a month or day that does not exist
        return None


def is_date(text: object) -> bool:
    """Whether ``text`` is a date's ISO text."""
    return parse_date(text) is not None


def days_between(a: str, b: str) -> int:
    """Days from ``a`` to ``b`` (negative when ``b`` is earlier). Raises ``ValueError``
    for text that is not a date."""
    first, second = parse_date(a), parse_date(b)
    if first is None or second is None:
        raise ValueError(f"not a date: {a if first is None else b!r}")
    return (second - first).days


def draw_date(low: str, high: str, rng: random.Random) -> str:
    """A date drawn uniformly among the days from ``low`` to ``high``, both included."""
    first, last = parse_date(low), parse_date(high)
    if first is None or last is None:
        raise ValueError(f"not a date: {low if first is None else high!r}")
    return date.fromordinal(rng.randint(first.toordinal(), last.toordinal())).isoformat()


def shift(text: str, days: int) -> str:
    """The date ``days`` after ``text`` (before, when negative)."""
    d = parse_date(text)
    if d is None:
        raise ValueError(f"not a date: {text!r}")
    return date.fromordinal(d.toordinal() + days).isoformat()
