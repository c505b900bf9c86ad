r"""Numbers as people write them in a reply, read exactly or refused.

A value is read from the text where a step or answer states it: its parenthesised
asides are left out, then the last part after an ``=`` that holds a number is read,
and in it the first number that stands alone (not an operand of ``+ - * / ^``, of a
multiplication or division sign (also a lone ``x``) or ``\times``/``\cdot``, or of a unicode
minus: ``4.318 / 1.204`` is an unevaluated expression, not a value). Operands may be
signed or bracketed: ``-3.209 + (-3.209)`` and ``2 x -3.209`` are expressions, and a
bracketed number is an operand, never an aside. A part whose every number is an
operand is **unreadable** (so an expression reads only as the result written after
its ``=``, never as its left operand), and so is a number whose form is ambiguous:
a value is never truncated to a wrong one.

The forms read (:func:`number_of`):

* thousands separators of one kind per number: ``,`` ``'`` ``_``, a space, a thin or
  no-break space (``1 679 607``); every group after the first has three digits;
* ``.`` as a thousands separator only where it appears twice or more
  (``1.679.607``), then ``,`` is the decimal mark (``1.679.607,5``); with both ``,``
  and ``.``, the last one is the decimal mark. A ``,`` alone is always a thousands
  separator, so ``12,5`` (three digits do not follow) is unreadable;
* scientific notation: ``1.679607e6``, ``1.679607 x 10^6`` (or with a multiplication
  sign), ``1.679607 \times 10^{6}``, ``1.679607·10⁶``;
* LaTeX grouping and fractions: ``-90{,}234{,}819.368``, ``\frac{-84}{125}``;
* fractions of whole numbers: ``-84/125``.

Standard-library regular expressions and :class:`fractions.Fraction` do it: no
number-parsing library we know reads grouped numbers of every locale while refusing
the ambiguous ones instead of guessing.
"""

from __future__ import annotations

import re

UNREADABLE = "unreadable"
"""What :func:`value_in` and :func:`number_of` give for a number that cannot be read."""
MAX_NUMBER = 100
"""A number longer than this many characters is not read (no value: its line is ignored)."""
MAX_EXPONENT = 30
"""A power of ten beyond this is unreadable (no procedure value comes near it)."""

_GROUP = ",.'_ \u2009\u202f\u00a0"
"""Characters that may group digits."""
_SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")
_PHRASE = re.compile(
    r"(?<![\w.^])([-+]?)(\d+(?:[,.'_ \u2009\u202f\u00a0]\d+)*)"
    r"(?:(?:\s*[eE]([-+]?\d+))(?!\w|\.\d)"
    r"|\s*[\u00d7*x·]\s*10\s*(?:\^\s*\{?\s*([-+]?\d+)\s*\}?|([⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+)))?"
    r"(?:\s*/\s*(\d+(?:[,'_ \u2009\u202f\u00a0]\d+)*)(?!\d|\.\d))?"
)
"""A number phrase, loosely: sign, digits with grouping, then a power of ten or a
denominator. :func:`_exact` decides whether it reads as one number."""
_OPERATOR = r"(?:[-+*/\u00d7\u00f7^\u00b7\u22c5\u2212\u2013]|(?<![A-Za-z])x(?![A-Za-z]))"
"""An operator between two operands: ``+ - * / ^``, a multiplication or division sign
(times, middle dot, dot operator, division sign, a lone ``x``), a unicode minus or dash."""
_BEFORE = re.compile(rf"[\w)]\s*{_OPERATOR}\s*(?:\(\s*)?[-+\u2212]?\s*$")
"""An operand and an operator right before a number (bracketed or not): it is a
right operand."""
_AFTER = re.compile(rf"\s*(?:\)\s*)?{_OPERATOR}\s*(?:\(\s*)?[-+\u2212]?\s*[\w(.]")
"""An operator and an operand (signed or bracketed) right after a number: it is a
left operand."""
_SIGNED_AFTER_OPERAND = re.compile(r"[\w)]\s*$")
_BRACKETED = r"\(\s*[-+\u2212]?\s*[\d.][\d.,'_ \u2009\u202f\u00a0]*\s*\)"
"""A number in brackets, ``(-3.209)``: an operand, never an aside."""
_ASIDE = re.compile(rf"\((?:[^()]|{_BRACKETED})*\)")
"""An aside in brackets (it may hold bracketed numbers)."""
_LATEX_OPERATOR = re.compile(r"\\(?:times|cdot)\b")


def _grouped(digits: str, sep: str) -> str | None:
    """Digits grouped by ``sep`` in threes (the first group of one to three), ungrouped."""
    groups = digits.split(sep)
    first, rest = groups[0], groups[1:]
    if not 1 <= len(first) <= 3 or any(len(g) != 3 for g in rest):
        return None
    return "".join(groups)


def _mantissa(text: str) -> str | None:
    """The digits of a number with its grouping and decimal mark read, as ``1234.5``."""
    marks = [c for c in text if not c.isdigit()]
    if not marks:
        return text
    dots, commas = marks.count("."), marks.count(",")
    decimal: str | None = None
    if dots and commas:
        decimal = "." if text.rfind(".") > text.rfind(",") else ","
    elif dots == 1:
        decimal = "."
    whole, frac = text, ""
    if decimal is not None:
        if marks.count(decimal) != 1:
            return None
        whole, frac = text.split(decimal)
    groups = {c for c in whole if not c.isdigit()}
    if len(groups) > 1:
        return None
    if groups:
        ungrouped = _grouped(whole, groups.pop())
        if ungrouped is None:
            return None
        whole = ungrouped
    return f"{whole}.{frac}" if frac else whole


def _exact(m: re.Match[str]) -> str | None:
    """The number a phrase states, in a form :class:`Fraction` reads, or ``None``."""
    sign, digits, exp, power, sup, denominator = m.groups()
    mantissa = _mantissa(digits)
    if mantissa is None:
        return None
    exponent = exp or power or (sup.translate(_SUPERSCRIPT) if sup else None)
    sign = "-" if sign == "-" else ""
    if exponent is not None:
        if abs(int(exponent)) > MAX_EXPONENT:
            return None
        return f"{sign}{mantissa}e{int(exponent)}"
    if denominator is not None:
        under = _mantissa(denominator)
        if "." in mantissa or under is None or int(under) == 0:
            return None
        return f"{sign}{mantissa}/{under}"
    return f"{sign}{mantissa}"


def number_of(text: str) -> str | None:
    """A text that is one number, read; :data:`UNREADABLE` for a number in a form that
    cannot be read exactly, ``None`` when it is no number at all.

    >>> number_of("1\u2009679\u2009607"), number_of("-84/125"), number_of("12,5")
    ('1679607', '-84/125', 'unreadable')
    """
    m = _PHRASE.fullmatch(text.strip())
    if m is None:
        return None
    return _capped(_exact(m))


def _capped(number: str | None) -> str | None:
    if number is None:
        return UNREADABLE
    return number if len(number) <= MAX_NUMBER else None


def _standalone(text: str, m: re.Match[str]) -> bool:
    """Whether a number is not an operand of an operation written around it."""
    before = text[: m.start()]
    if _BEFORE.search(before) or _AFTER.match(text, m.end()):
        return False
    return not (m.group(1) and _SIGNED_AFTER_OPERAND.search(before))


def without_asides(text: str) -> str:
    """A text with its parenthesised asides (nested ones too) left out; a bracketed
    number (``(-3.209)``) is an operand and stays."""
    text = _LATEX_OPERATOR.sub("\u00d7", text)
    while True:
        shorter = _ASIDE.sub(_aside, text)
        if shorter == text:
            return text
        text = shorter


def _aside(m: re.Match[str]) -> str:
    return m.group() if re.fullmatch(_BRACKETED, m.group()) else " "


def value_in(text: str) -> str | None:
    """The value a statement gives (what follows ``S7 =`` or ``Answer:``), as
    :func:`number_of` reads it; ``None`` when it states no number.

    >>> value_in("S7 / S8 = 4.318 / 1.204 = 3.586 (rounded)"), value_in("4.318 / 1.204")
    ('3.586', 'unreadable')
    """
    parts = without_asides(text).split("=")
    for part in reversed(parts):
        found = list(_PHRASE.finditer(part))
        if not found:
            continue
        for m in found:
            if _standalone(part, m):
                return _capped(_exact(m))
        return UNREADABLE
    return None


def answer_in(text: str) -> str | None:
    """The value an answer statement gives: a number it opens with wins over an
    equation after it (``3.586, since S10 = 4.318 / 1.204``); else as :func:`value_in`."""
    text = without_asides(text)
    lead = _LEAD.match(text)
    rest = text[lead.end() if lead else 0 :]
    value, end = first_value(rest)
    if value is not None and "/" in rest[:end] and _STATED.match(rest, end):
        return value_in(text)  # ``84/125 = 0.672``: a division's stated result is read
    return value if value is not None else value_in(text)


_STATED = re.compile(r"\s*=\s*[-+\u2212]?\s*\(?\s*[\d.]")
"""An ``=`` and a number after the fraction an answer opens with: its stated result (a
whole number over another, followed by its result, is a division worked out; any other
number an answer opens with wins over an equation after it: ``5 = 2 + 3`` is 5)."""


_LEAD = re.compile(r"\s*(?:(?:about|approximately|roughly|exactly)\s+)*", re.I)


def first_value(text: str) -> tuple[str | None, int]:
    """The number a text starts with (``12.5 units``) and where it ends; ``(None, 0)``
    when it starts with none."""
    m = _PHRASE.match(text)
    if m is None or not _standalone(text, m):
        return None, 0
    return _capped(_exact(m)), m.end()
