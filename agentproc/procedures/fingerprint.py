"""Every step evaluated symbolically as well: a variable's expression in the inputs, as
its values at two random points modulo a prime. It shows a step that does not depend on
the inputs, or that repeats an earlier variable up to sign (the rules of
:mod:`agentproc.procedures.generate`)."""

from __future__ import annotations

from typing import NamedTuple

from agentproc.arith import Op
from agentproc.procedures.procedure import ADD, MUL, SUB

PRIME = (1 << 61) - 1
"""The field in which every step is also evaluated symbolically (see :class:`_Fingerprint`)."""
_POINTS = (
    (0x2F0A_9D3B_11C7_5E21, 0x1B3C_5D7E_9F01_2345),
    (0x0A1B_2C3D_4E5F_6071, 0x3141_5926_5358_9793),
)
"""Two fixed random points ``(S1, S2)`` modulo :data:`PRIME`."""


class _Fingerprint(NamedTuple):
    """A variable's exact expression in the inputs, evaluated at two random points mod a prime.

    Equal values at both points mean the expression is (with overwhelming
    probability) a constant: it does not depend on the inputs, so a step that
    produces it would erase every upstream mistake. Equal to an earlier variable's
    pair, or to its negation, the step is that variable up to sign and erases every
    mistake made since. Division is by modular
    inverse, so ``(S3 * S4) / (S4 * S3)`` is caught as the constant 1.
    """

    a: int
    b: int

    @property
    def constant(self) -> bool:
        return self.a == self.b

    @property
    def signed(self) -> tuple[tuple[int, int], tuple[int, int]]:
        """This expression and its negation, as pairs: the identities it must not repeat."""
        return (self.a, self.b), ((PRIME - self.a) % PRIME, (PRIME - self.b) % PRIME)

    def apply(self, op: Op, other: _Fingerprint) -> _Fingerprint | None:
        if op is ADD:
            return _Fingerprint((self.a + other.a) % PRIME, (self.b + other.b) % PRIME)
        if op is SUB:
            return _Fingerprint((self.a - other.a) % PRIME, (self.b - other.b) % PRIME)
        if op is MUL:
            return _Fingerprint(self.a * other.a % PRIME, self.b * other.b % PRIME)
        if other.a == 0 or other.b == 0:
            return None
        inv_a, inv_b = pow(other.a, PRIME - 2, PRIME), pow(other.b, PRIME - 2, PRIME)
        return _Fingerprint(self.a * inv_a % PRIME, self.b * inv_b % PRIME)


_INPUTS = tuple(_Fingerprint(_POINTS[0][n] % PRIME, _POINTS[1][n] % PRIME) for n in range(2))
"""The inputs' fingerprints, reduced modulo :data:`PRIME` as every step's is: an
unreduced one (two of the points exceed the prime) would never equal the step that
reproduces its input, and the identity would go unseen."""


def _constant_print(units: int, scale: int) -> _Fingerprint:
    """The fingerprint of a constant (``units / scale``): the same at both points."""
    c = units * pow(scale, PRIME - 2, PRIME) % PRIME
    return _Fingerprint(c, c)
