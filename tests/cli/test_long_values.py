"""A refused value of thousands of characters is echoed by its start and its length, in an
error line of a few hundred characters, whatever option or argument refused it."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentproc.cli.output import LONG_WORD, brief
from tests.helpers import cli

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / "scenarios" / "recorded" / "local-smollm2.jsonl"
SCENARIO = ROOT / "scenarios" / "pinned" / "n5-L3-r1_10-mixed-decimal-0000.json"
LONG = "x" * 10_000


@pytest.mark.parametrize(
    "argv",
    [
        ["run", SCENARIO, "--out", "{tmp}/r.jsonl", "--agent", LONG],
        ["run", SCENARIO, "--out", "{tmp}/r.jsonl", "--agent", "sim:oracle", "--variant", LONG],
        ["run", SCENARIO, "--out", "{tmp}/r.jsonl", "--guard", LONG],
        ["run", SCENARIO, "--out", "{tmp}/r.jsonl", "--name", LONG],
        ["report", RUN, "--by", LONG],
        ["report", LONG],
        ["check", RUN, "--labels", LONG],
        ["serve-demo", "--profile", LONG],
        ["check", RUN, "--seed", LONG],
    ],
    ids=["agent", "variant", "guard", "name", "by", "run file", "labels", "profile", "seed"],
)
def test_a_long_refused_value_is_echoed_by_its_start(capsys, tmp_path, argv):
    code, out, err = cli(capsys, *(str(a).replace("{tmp}", str(tmp_path)) for a in argv))
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert len(err) < 1_000
    assert "characters)" in err


def test_brief_keeps_words_up_to_the_limit_and_cuts_longer_ones():
    word = "y" * LONG_WORD
    assert brief(f"a {word} b") == f"a {word} b"
    assert brief(f"a {word}z b") == f"a {'y' * 60}... ({LONG_WORD + 1:,} characters) b"
