"""agentproc.analysis.cell_stats: the Wilson interval of each rate."""

from __future__ import annotations

import pytest

from agentproc.analysis.cell_stats import wilson


@pytest.mark.parametrize(
    ("successes", "n", "expected"),
    [
        (5, 10, (0.2366, 0.7634)),
        (0, 10, (0.0, 0.2775)),
        (10, 10, (0.7225, 1.0)),
        (1, 1, (0.2065, 1.0)),
        (81, 263, (0.2553, 0.3662)),
    ],
)
def test_wilson_interval_matches_known_values(
    successes: int, n: int, expected: tuple[float, float]
) -> None:
    lo, hi = wilson(successes, n)
    assert (round(lo, 4), round(hi, 4)) == expected


def test_wilson_interval_with_no_trials_is_zero_to_one() -> None:
    assert wilson(0, 0) == (0.0, 1.0)


@pytest.mark.parametrize(("successes", "n"), [(-1, 10), (11, 10)])
def test_wilson_rejects_successes_outside_zero_to_n(successes: int, n: int) -> None:
    with pytest.raises(ValueError, match="successes must lie in"):
        wilson(successes, n)
