"""A mistyped option is said by the command it was given to, with the option it nearly
spells."""

from __future__ import annotations

import pytest

from agentproc.cli import main


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (
            ["run", "S", "--agnet", "sim:oracle", "--out", "r.jsonl"],
            "agentproc run: error: unrecognized arguments: --agnet sim:oracle; did you mean "
            "--agent? (see 'agentproc run --help')",
        ),
        (
            ["report", "r.jsonl", "--jsno"],
            "agentproc report: error: unrecognized arguments: --jsno; did you mean --json? "
            "(see 'agentproc report --help')",
        ),
        (
            ["report", "r.jsonl", "--frobnicate"],
            "agentproc report: error: unrecognized arguments: --frobnicate "
            "(see 'agentproc report --help')",
        ),
    ],
)
def test_an_unknown_option_is_said_with_the_one_it_nearly_spells(capsys, argv, said):
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == 2
    assert capsys.readouterr().err.splitlines() == [said]
