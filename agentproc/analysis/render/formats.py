"""How figures read in text: a share as a percentage and a p-value, the same in every
table, line and page that shows them; and a figure as the JSON forms round it."""

from __future__ import annotations


def pct(x: float) -> str:
    """A share as a percentage to one decimal.

    >>> pct(0.4567), pct(1.0)
    ('45.7%', '100.0%')
    """
    return f"{100 * x:.1f}%"


def p_text(p: float) -> str:
    """A p-value in three figures, small ones in scientific notation.

    >>> p_text(0.04321), p_text(0.00049)
    ('0.0432', '4.9e-04')
    """
    return f"{p:.3g}" if p >= 0.001 else f"{p:.1e}"


def round4(x: float) -> float:
    """A figure as the JSON forms write it: rounded to 4 decimals."""
    return round(x, 4)
