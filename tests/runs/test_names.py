"""An agent's name is checked one way by every command that takes one (``run --name``,
``serve-mcp --name``, the pytest plugin), and a refused one is echoed by a short prefix."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentproc.errors import ConfigError
from agentproc.runs.names import agent_name, shown_value
from agentproc.testing import run_agent
from tests.helpers import cli

PINNED = Path(__file__).resolve().parents[2] / "scenarios" / "pinned"
SCENARIO = PINNED / "n5-L3-r1_10-mixed-decimal-0000.json"
REFUSED = ["x" * 10_000, "", "   ", "a\nb", "tab\there", "x" * 65]


@pytest.mark.parametrize("name", REFUSED, ids=["long", "empty", "blank", "newline", "tab", "65"])
def test_a_bad_name_is_refused_by_the_shared_check(name):
    with pytest.raises(ConfigError, match="expected a name of 1 to 64 printable characters"):
        agent_name(name)


def test_a_name_of_64_printable_characters_is_taken():
    assert agent_name("é" * 64) == "é" * 64
    assert agent_name("model v2") == "model v2"


def test_a_long_value_is_echoed_by_its_first_characters_and_its_length():
    shown = shown_value("y" * 10_000)
    assert shown.startswith("'yyyy") and "(10,000 characters)" in shown
    assert len(shown) < 80
    assert shown_value("short") == "'short'"


@pytest.mark.parametrize("command", ["run", "serve-mcp"])
@pytest.mark.parametrize("name", REFUSED, ids=["long", "empty", "blank", "newline", "tab", "65"])
def test_every_command_refuses_a_bad_name_in_one_short_line(capsys, tmp_path, command, name):
    out = tmp_path / "r.jsonl"
    code, said, err = cli(capsys, command, SCENARIO, "--out", out, "--name", name)
    assert code == 2
    assert said == ""
    assert "expected a name of 1 to 64 printable characters" in err
    assert len(err.strip().splitlines()) == 1
    assert len(err) < 400
    assert not out.exists()


def test_the_pytest_plugin_refuses_a_bad_name_as_run_does(tmp_path):
    out = tmp_path / "r.jsonl"
    with pytest.raises(ConfigError, match="10,000 characters") as caught:
        run_agent("sim:oracle", SCENARIO, out, name="z" * 10_000)
    assert len(str(caught.value)) < 200
    assert not out.exists()


def test_the_pytest_plugin_runs_under_a_good_name(tmp_path):
    result = run_agent("sim:oracle", SCENARIO, tmp_path / "r.jsonl", name="mine")
    assert [e["name"] for e in result.episodes] == ["mine"]
