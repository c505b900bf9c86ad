"""Every ``--seed`` is a whole number of at least 0: anything else is refused in one usage
line (exit 2) before any work, never a crash (exit 1) that CI reads as a failed check."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import cli

RUN = Path(__file__).resolve().parents[2] / "scenarios" / "recorded" / "local-smollm2.jsonl"


@pytest.mark.parametrize(
    "argv",
    [
        ["check", RUN, "--baseline", RUN],
        ["compare", RUN, RUN],
        ["generate", "--steps", "3"],
        ["selfcheck"],
        ["run", "S", "--out", "x.jsonl"],
        ["stress", "S"],
        ["serve-demo"],
    ],
    ids=lambda argv: str(argv[0]),
)
@pytest.mark.parametrize("value", ["-1", "-99999999999999999999", "1.5", "x"])
def test_a_seed_that_is_not_a_whole_number_of_at_least_0_is_refused(capsys, argv, value):
    code, out, err = cli(capsys, *argv, "--seed", value)
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1
    assert "--seed" in err
    assert "Traceback" not in err


def test_a_seed_of_0_and_a_large_seed_are_taken(capsys):
    for value in ("0", str(10**30)):
        code, _, err = cli(capsys, "check", RUN, "--baseline", RUN, "--seed", value)
        assert code == 0, err
