"""Exact arithmetic for procedures and mock tools.

Values are held as integers of *units*: thousandths in ``decimal`` mode, ones in
``integer`` mode. Every result is rounded to a whole unit, half away from zero,
so ``decimal`` mode reproduces the reference study's "rounded to 3 decimals" and
the same inputs give the same bits on any machine.

Comparison: a number an agent supplies equals a value when it lies within half a
unit of it (0.0005 in ``decimal`` mode; exact in ``integer`` mode).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from decimal import Decimal, localcontext
from enum import StrEnum
from fractions import Fraction
from hashlib import blake2b
from typing import Any, Literal

Mode = Literal["decimal", "integer"]


class Op(StrEnum):
    """The four operations a step can apply."""

    ADD = "add"
    SUB = "sub"
    MUL = "mul"
    DIV = "div"


SYMBOL: dict[Op, str] = {Op.ADD: "+", Op.SUB: "-", Op.MUL: "*", Op.DIV: "/"}
VERB: dict[Op, str] = {
    Op.ADD: "add {a} and {b}",
    Op.SUB: "subtract {b} from {a}",
    Op.MUL: "multiply {a} by {b}",
    Op.DIV: "divide {a} by {b}",
}
SCALE: dict[str, int] = {"decimal": 1000, "integer": 1}
"""Units per whole number in each numeric mode."""

BOUND = 10**12
"""Every value of a generated procedure satisfies ``abs(value) <= BOUND``."""


def div_round(num: int, den: int) -> int:
    """``num / den`` rounded to the nearest integer, half away from zero."""
    q, r = divmod(abs(num), abs(den))
    if 2 * r >= abs(den):
        q += 1
    return q if (num >= 0) == (den > 0) else -q


def apply_units(op: Op, a: int, b: int, scale: int) -> int | None:
    """Apply ``op`` to two unit values; ``None`` for a division by zero.

    >>> apply_units(Op.MUL, 1500, 2500, 1000)  # 1.5 * 2.5
    3750
    >>> apply_units(Op.DIV, 1000, 3000, 1000)  # 1 / 3 rounds to 0.333
    333
    """
    if op is Op.ADD:
        return a + b
    if op is Op.SUB:
        return a - b
    if op is Op.MUL:
        return div_round(a * b, scale)
    if b == 0:
        return None
    return div_round(a * scale, b)


def to_units(x: float | int | str | bool, scale: int) -> int:
    """Round a number an agent supplied to whole units, half away from zero.

    The number is read through its shortest decimal spelling, so ``0.1`` is
    exactly one tenth, as the agent wrote it.
    """
    if isinstance(x, int):
        return x * scale
    if isinstance(x, str):  # a branched workflow's category (a number is never a string)
        return symbol_units(x)
    u = x * scale
    if -1e15 < u < 1e15:
        # A number written to the unit (the common case) is the float nearest some
        # r / scale; its spelling and r / scale then both lie within one ulp of it, which
        # is under a quarter of a unit below 1e15 units, so the spelling reads as r.
        r = round(u)
        if r / scale == x:
            return r
    # Below 1e9 the float product is within 1e-6 of the exact one, so the fast path
    # rounds exactly as the decimal one would; beyond it, ask the decimal one.
    if -1e9 < u < 1e9:
        whole = math.floor(u)
        frac = u - whole
        # Away from a half, the float product rounds the same way as the exact value.
        if abs(frac - 0.5) > 1e-6:
            return int(whole) + (1 if frac > 0.5 else 0)
    d = Decimal(repr(x))
    with localcontext() as ctx:
        ctx.prec = 80
        scaled = d * scale
        units = int(scaled)
        rest = abs(scaled - units)
    if rest >= Decimal("0.5"):
        units += 1 if scaled >= 0 else -1
    return units


def close(x: Any, units: int, scale: int, tolerance: float = 0.5) -> bool:
    """True when a supplied number equals a unit value.

    With the default tolerance of half a unit, that is exactly when the mock tools
    would read it as that value: rounded to whole units, half away from zero
    (:func:`to_units`), so what the monitor accepts always makes a tool produce
    the right output (``-0.6315`` is ``-0.632``, not ``-0.631``). Another tolerance
    compares the distance; integer mode, or a tolerance of 0, compares exactly
    (``12.5`` is neither 12 nor 13).

    >>> close(1.2344, 1234, 1000), close(1.2345, 1234, 1000), close(12.5, 12, 1)
    (True, False, False)
    """
    if scale == 1 or tolerance <= 0:
        return x * scale == units
    if tolerance == 0.5:
        return to_units(x, scale) == units
    return abs(x * scale - units) <= tolerance + 1e-9


def matcher(x: Any, scale: int, tolerance: float = 0.5) -> Callable[[int], bool]:
    """``lambda units: close(x, units, scale, tolerance)``, with ``x`` read once: for
    comparing one supplied number with many unit values."""
    if scale == 1 or tolerance <= 0:
        scaled = x * scale
        return lambda units: scaled == units
    if tolerance == 0.5:
        read = to_units(x, scale)
        return read.__eq__
    scaled = x * scale
    return lambda units: abs(scaled - units) <= tolerance + 1e-9


def to_number(units: int, scale: int) -> Any:
    """A unit value as the JSON number an agent sees (``12.345`` or ``12``); a symbol's
    code as its category or boolean (:func:`symbol_units`), :data:`UNDEFINED` as ``None``.

    >>> to_number(12345, 1000), to_number(12, 1), to_number(symbol_units("gold"), 1000)
    (12.345, 12, 'gold')
    """
    if units <= -SYMBOL_BASE:
        return getattr(units, "value", None)  # symbol_value(units), inline: a hot path
    return units // scale if scale == 1 else units / scale


def from_number(x: Any, scale: int) -> int:
    """The units of a number that is an exact multiple of a unit (a scenario's own
    values, a recorded step value): the inverse of :func:`to_number`.

    >>> from_number(12.345, 1000)
    12345
    """
    if isinstance(x, str | bool) or x is None:
        return symbol_units(x)
    return round(x * scale)


SYMBOL_BASE = 1 << 100
"""Codes of categories and booleans lie at or below ``-SYMBOL_BASE`` units: far beyond
any number a tool accepts (:data:`BOUND`), so no number ever equals one, and the
monitor compares them exactly like any value in units."""
UNDEFINED = -SYMBOL_BASE
"""The units of a step that has no value on an instance (a branch not taken whose
formula reads what the instance never computes)."""


class Symbol(int):
    """The code of a category, an id, a date or a boolean: an ``int`` (it compares and
    hashes as its code) that holds the value it codes, so that whoever holds a code can
    turn it back into text, and no process-wide table has to remember every value ever
    coded (a suite's drawn ids would make such a table grow with the count)."""

    value: str | bool
    """The category's name, the id, the date (ISO text) or the boolean coded."""

    def __new__(cls, code: int, value: str | bool) -> Symbol:
        self = super().__new__(cls, code)
        self.value = value
        return self

    def __reduce__(self) -> tuple[type[Symbol], tuple[int, str | bool]]:
        # A pickled code (a worker's scenario) keeps its value: int's own would drop it.
        return Symbol, (int(self), self.value)


def symbol_units(value: str | bool | None) -> int:
    """The code of a category, an id, a date or a boolean (``None``: :data:`UNDEFINED`), as a
    :class:`Symbol` holding the value: the same in every process (a string's comes from a
    hash of its text).

    >>> symbol_units(True) == symbol_units(True) != symbol_units(False)
    True
    >>> symbol_value(symbol_units("gold"))
    'gold'
    """
    code = _RECENT.get(value)  # the common case: a category or a value coded just before
    if code is not None:
        return code
    if value is None:
        return UNDEFINED
    if isinstance(value, bool):
        code = Symbol(-SYMBOL_BASE - 1 - value, value)
    else:
        digest = blake2b(value.encode(), digest_size=8, person=b"category").digest()
        code = Symbol(-SYMBOL_BASE - 4 - int.from_bytes(digest, "big"), value)
    if len(_RECENT) >= RECENT:
        _RECENT.clear()  # drawn ids are without end: keep the last few, never all
    _RECENT[value] = code
    return code


RECENT = 256
"""Codes :func:`symbol_units` keeps at most (a workflow's categories and an episode's values
are coded again and again; a plain dict emptied when full looks them up fastest)."""
_RECENT: dict[str | bool | None, int] = {}


def symbol_value(units: int) -> str | bool | None:
    """The value a code stands for (:func:`symbol_units`), ``None`` for :data:`UNDEFINED`
    (or a bare ``int`` that holds none)."""
    return units.value if isinstance(units, Symbol) else None


def value_units(x: Any, scale: int) -> int:
    """The units of a value a branched workflow's agent supplied: a category's or a
    boolean's code (:func:`symbol_units`), else the number's (:func:`to_units`, which reads
    a boolean as its number, 1 or 0, as every workflow without types does).

    >>> value_units(True, 1000) == symbol_units(True), to_units(True, 1000)
    (True, 1000)
    """
    if isinstance(x, bool | str):
        return symbol_units(x)
    return to_units(x, scale)


def is_symbol(units: int) -> bool:
    """Whether a unit value is a category's, a boolean's or :data:`UNDEFINED`."""
    return units <= -SYMBOL_BASE


HALF = Fraction(1, 2)


def exact_units(number: str, scale: int) -> Fraction:
    """A number as written (``"-12.5"``) in exact, unrounded units.

    A model carrying a slip through a long chain can write values far beyond a
    float's precision, so text is read exactly.
    """
    return Fraction(number) * scale


def round_units(x: Fraction) -> int:
    """Exact units rounded to whole units, half away from zero."""
    n = math.floor(abs(x) + HALF)
    return n if x >= 0 else -n


def round_scaled(x: Fraction | int, shift: int) -> int:
    """``round_units(x * shift)`` in integer arithmetic alone (``shift`` positive): what a
    declared step's tool does at every call, several times faster than on fractions."""
    n, d = x.numerator, x.denominator
    whole = (2 * abs(n) * shift + d) // (2 * d)  # floor(|x| * shift + 1/2)
    return whole if n >= 0 else -whole


def render(units: int, scale: int) -> str:
    """A unit value as text: three decimals in decimal mode, e.g. ``-0.050``; a
    category as its name, a boolean as ``true`` or ``false``."""
    if units <= -SYMBOL_BASE:
        v = symbol_value(units)
        return str(v).lower() if isinstance(v, bool) or v is None else v
    if scale == 1:
        return str(units)
    sign = "-" if units < 0 else ""
    whole, frac = divmod(abs(units), scale)
    return f"{sign}{whole}.{frac:03d}"
