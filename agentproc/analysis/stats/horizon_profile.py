"""The intervals read on the profile of the procedure horizon's penalised likelihood
(:mod:`agentproc.analysis.stats.horizon_fit`): the ends of a horizon's interval, and the
fitted curve's pointwise band.

A length (``log2``) is in a horizon's 95% interval when some curve on which success does
not rise with length crosses the level there and is not rejected (twice its drop below
the maximum, over the overdispersion, at most Student's ``t ** 2``). A success is in the
band at a length when some curve through it, rising or falling, is not rejected. Where
success is shown to fall the two agree: the band crosses a level where the interval
ends.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from agentproc.analysis.stats.horizon_fit import Penalised


class Ends:
    """The ends of a horizon's interval on the profile of the penalised likelihood: the
    set of lengths (log2) at which a curve on which success does not rise crosses
    ``target`` and is not rejected.

    "Every horizon at or below ``xc`` is rejected" holds up to a point and not after it
    (the curves crossing at or below ``xc`` are a wedge of ``(a, b)`` that grows with
    ``xc``), and so, mirrored, does "every horizon at or above ``xc``": each end is where
    one turns, found on a grid of the tested range and narrowed. The wedge's best curve
    is the estimate when the wedge holds it, else on one of its two edges (the
    penalised likelihood has one peak): the curves crossing at ``xc``, or the flat ones
    on the wedge's side of the level."""

    def __init__(self, fit: Penalised, target: float) -> None:
        self.fit, self.target = fit, target
        self.flat_under = fit.flat_beyond(target, True)  # flat, success at most the level
        self.flat_over = fit.flat_beyond(target, False)  # and at least it

    def rejected(self, xc: Any, profile: Any, below: bool) -> Any:
        """For each ``xc`` and the profile through the level there: whether every horizon
        at or below it (``below``), or at or above it, is rejected."""
        import numpy as np

        f = self.fit
        at = f.a + f.b * xc
        inside = (f.b >= 0) & ((at >= self.target) if below else (at <= self.target))
        flat = self.flat_under if below else self.flat_over
        return ~inside & f.rejected(np.maximum(profile, flat))

    def no_rise_across(self, xc: float, under: bool) -> bool:
        """Whether every curve on which success does not fall and is at most the level at
        ``xc`` (``under``), or at least it, is rejected."""
        import numpy as np

        f = self.fit
        at = f.a + f.b * xc
        inside = f.b <= 0 and ((at >= self.target) if under else (at <= self.target))
        profile = f.through(np.array([xc]), np.array([self.target]), "rising")[0]
        flat = self.flat_under if under else self.flat_over
        return not inside and bool(f.rejected(max(float(profile), flat)))

    def both(self, lo: float, hi: float) -> tuple[float | None, float | None]:
        """The lower end (``None`` below ``lo``, ``hi`` when past it) and the upper end
        (``None`` past ``hi``, ``lo`` when below it)."""
        import numpy as np

        xs = np.linspace(lo, hi, EDGE_POINTS)
        profile = self.fit.through(xs, np.full(len(xs), self.target))
        low_out = self.rejected(xs, profile, True)  # true, then false
        high_in = ~self.rejected(xs, profile, False)  # true, then false
        low = None if not low_out[0] else (hi if low_out[-1] else None)
        high = None if high_in[-1] else (lo if not high_in[0] else None)
        grids = {
            below: (xs, held)
            for below, held in ((True, low_out), (False, high_in))
            if held[0] and not held[-1]
        }
        # each end as the bracket's outer side (the interval a hair wide, never narrow:
        # the point estimate stays inside)
        for below, (last, first) in _edges(self._holds, grids).items():
            low, high = (last, high) if below else (low, first)
        return low, high

    def _holds(self, xs: Any, below: Any) -> Any:
        """Whether every horizon at or below each ``xs`` is rejected (where ``below``),
        or some horizon at or above it is not (elsewhere): both true, then false."""
        import numpy as np

        profile = self.fit.through(xs, np.full(len(xs), self.target))
        return np.where(
            below,
            self.rejected(xs, profile, True),
            ~self.rejected(xs, profile, False),
        )


EDGE_POINTS = 17
"""Points of the grid an interval's ends are found on, and of each of the two rounds
that narrow them (1/4,096 of the tested range)."""


def _edges(
    holds: Callable[[Any, Any], Any], grids: dict[bool, tuple[Any, Any]]
) -> dict[bool, tuple[float, float]]:
    """Where each of the (at most two) conditions turns false, as the last point where
    it holds and the first where it does not: ``holds(xs, key)`` is true up to a point
    and false after it (vectorised, ``key`` per point), and each grid ``xs`` its values
    ``held`` (true first, false last). Both ends are narrowed together, a round at a
    time."""
    import numpy as np

    for _ in range(2):
        spans = {}
        for key, (xs, held) in grids.items():
            last = int(np.flatnonzero(held).max())
            spans[key] = np.linspace(xs[last], xs[last + 1], EDGE_POINTS)
        if not spans:
            return {}
        keys = list(spans)
        xs_all = np.concatenate([spans[key] for key in keys])
        which = np.repeat(np.array(keys), EDGE_POINTS)
        got = holds(xs_all, which)
        for i, key in enumerate(keys):
            held = got[i * EDGE_POINTS : (i + 1) * EDGE_POINTS].copy()
            held[0], held[-1] = True, False  # the bracket's ends, as found
            grids[key] = (spans[key], held)
    out = {}
    for key, (xs, held) in grids.items():
        last = int(np.flatnonzero(held).max())
        out[key] = (float(xs[last]), float(xs[last + 1]))
    return out


BAND_STEPS = 6
"""Steps of the search for each end of the band at a length, once bracketed (regula
falsi, Illinois' variant, on the signed root of the drop: nearly linear there)."""
BAND_REACH = (0.25, 1.0, 4.0, 16.0)
"""The distances from the fitted curve, on the model's scale, at which each end of the
band is bracketed first; past the last the band is open (success anywhere from 0 to 1
is allowed there)."""


def band(fit: Penalised, xs: Sequence[float]) -> list[tuple[float, float, float]]:
    """The fitted curve and its pointwise 95% band at each ``log2`` length of ``xs``, on
    the model's scale ``a + b * x``: ``(eta, lowest, highest)``, every value the profile
    of the penalised likelihood does not reject there (success rising or falling), so
    that where success is shown to fall, the band crosses a level exactly where the
    horizon's interval ends."""
    import numpy as np

    x = np.asarray(xs, dtype=float)
    m = len(x)
    eta = fit.a + fit.b * x
    sides = np.concatenate([np.full(m, 1.0), np.full(m, -1.0)])
    at, centre = np.concatenate([x, x]), np.concatenate([eta, eta])
    root = math.sqrt(fit.crit)

    def excess(d: Any, at: Any = at, centre: Any = centre, sides: Any = sides) -> Any:
        """The signed root of the drop at distance ``d``, less its 95% point."""
        drop = 2 * (fit.top - fit.through(at, centre + sides * d, "any")) / fit.phi
        return np.sqrt(np.maximum(drop, 0.0)) - root

    reach = np.array(BAND_REACH)
    k = len(reach)
    grid = excess(
        np.repeat(reach, 2 * m), np.tile(at, k), np.tile(centre, k), np.tile(sides, k)
    ).reshape(k, 2 * m)
    out = grid > 0
    bounded = out.any(0)
    first = np.where(bounded, out.argmax(0), k - 1)
    lines = np.arange(2 * m)
    hi, f_hi = reach[first], grid[first, lines]
    lo = np.where(first > 0, reach[np.maximum(first - 1, 0)], 0.0)
    f_lo = np.where(first > 0, grid[np.maximum(first - 1, 0), lines], -root)
    for _ in range(BAND_STEPS):
        d = np.clip(hi - f_hi * (hi - lo) / np.where(f_hi > f_lo, f_hi - f_lo, 1.0), lo, hi)
        f = excess(d)
        left = f < 0  # still allowed at d: the end lies past it
        # Illinois: halve the value kept at the end that did not move
        f_hi, f_lo = np.where(left, f_hi / 2, f_hi), np.where(left, f_lo, f_lo / 2)
        lo, f_lo = np.where(left, d, lo), np.where(left, f, f_lo)
        hi, f_hi = np.where(left, hi, d), np.where(left, f_hi, f)
    ends = np.where(bounded, (lo + hi) / 2, np.inf)
    return [(float(eta[i]), float(eta[i] - ends[m + i]), float(eta[i] + ends[i])) for i in range(m)]
