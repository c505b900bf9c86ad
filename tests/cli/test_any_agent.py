"""Any agent works in every command that runs episodes: ``run``, ``compare``, ``stress``.

The agent is a factory the test writes (``path.py:factory`` and ``module:factory``): it
submits an answer of 0 through the mock tools, so every episode is scored, none errored.
"""

from __future__ import annotations

import json
import sys
import uuid
from pathlib import Path

import pytest
from helpers import records

from agentproc.cli import main
from agentproc.cli.parser import build_parser

FACTORY = """\
class Agent:
    def __init__(self, tools):
        self.tools = {t.name: t for t in tools}

    async def ainvoke(self, inputs, config=None):
        await self.tools["submit_answer"].ainvoke({"answer": 0})
        return {}


def make_agent(tools):
    return Agent(tools)
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project folder holding a suite and a package of agents, made the current folder
    (and not on the import path: the command puts it there)."""
    assert main(["generate", "--steps", "2,3", "--count", "3", "--out", str(tmp_path / "s")]) == 0
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    return tmp_path


def agent_forms(project: Path) -> dict[str, str]:
    """The factory as ``path.py:factory`` and as ``module:factory`` (a package named afresh,
    so no earlier test's import is reused)."""
    package = f"my_agents_{uuid.uuid4().hex[:8]}"
    (project / package).mkdir()
    (project / package / "__init__.py").write_text("")
    (project / package / "react.py").write_text(FACTORY)
    return {
        "path": f"{package}/react.py:make_agent",
        "module": f"{package}.react:make_agent",
    }


def cli(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("form", ["path", "module"])
def test_run_takes_a_factory_agent_from_the_current_folder(project, capsys, form):
    agent = agent_forms(project)[form]
    code, out, err = cli(capsys, "run", "s", "--agent", agent, "--out", "r.jsonl")
    assert code == 0, err
    assert out.startswith("wrote 6 episodes to r.jsonl")
    recs = records(project / "r.jsonl")
    assert len(recs) == 6 and {r["agent"] for r in recs} == {agent}
    assert all("error" not in r and r["calls"][-1]["name"] == "submit_answer" for r in recs)


@pytest.mark.parametrize("form", ["path", "module"])
def test_compare_runs_a_factory_agent_under_each_variant(project, capsys, form):
    agent = agent_forms(project)[form]
    argv = ["compare", "s", "--variants", "default,terse", "--agent", agent, "--out", "runs"]
    code, out, err = cli(capsys, *argv, "--json")
    assert code == 0, err
    data = json.loads(out)
    assert [a["errored"] for a in data["arms"]] == [{}, {}]
    assert data["comparisons"][0]["pairs"] == 6
    for name in ("default", "terse"):
        recs = records(project / "runs" / f"{name}.jsonl")
        assert {r["variant"] for r in recs} == {name} and all("error" not in r for r in recs)


@pytest.mark.parametrize("form", ["path", "module"])
def test_stress_runs_a_factory_agent_under_each_variant(project, capsys, form):
    agent = agent_forms(project)[form]
    argv = ["stress", "s", "--variants", "default,prose,json", "--agent", agent, "--out", "runs"]
    code, out, err = cli(capsys, *argv, "--json")
    assert code == 0, err
    assert "errored" not in err
    arms = json.loads(out)["compare"]["arms"]
    assert [a["variant"] for a in arms] == ["default", "prose", "json"]
    assert all(a["errored"] == {} for a in arms)
    assert sorted(p.name for p in (project / "runs").iterdir()) == [
        "default.jsonl",
        "json.jsonl",
        "prose.jsonl",
    ]


def test_compare_over_workers_builds_the_factory_agent_in_each(project, capsys):
    agent = agent_forms(project)["module"]
    argv = ["compare", "s", "--variants", "default,terse", "--agent", agent, "--out", "runs"]
    code, out, err = cli(capsys, *argv, "--workers", "2", "--json")
    assert code == 0, err
    assert json.loads(out)["comparisons"][0]["pairs"] == 6


@pytest.mark.parametrize("command", ["run", "compare", "stress"])
def test_every_command_that_runs_episodes_lists_every_kind_of_agent_in_its_help(command):
    sub = build_parser()._subparsers._group_actions[0].choices[command]  # type: ignore[union-attr]
    (agent,) = [a for a in sub._actions if "--agent" in a.option_strings]
    for kind in ("local", "openai:MODEL", "module.path:factory", "path/to/file.py:factory"):
        assert kind in agent.help
    assert "sim:decay" in agent.help


@pytest.mark.parametrize("command", ["run", "compare", "stress"])
@pytest.mark.parametrize(("agent", "near"), [("decay", "sim:decay"), ("gpt-4o", "openai:gpt-4o")])
def test_an_unknown_agent_is_one_error_in_every_command(project, capsys, command, agent, near):
    extra = ["--variants", "default,terse"] if command == "compare" else []
    out = "r.jsonl" if command == "run" else "runs"
    code, _, err = cli(capsys, command, "s", *extra, "--agent", agent, "--out", out)
    assert code == 2
    (line,) = err.strip().splitlines()
    assert f"unknown agent {agent!r}" in line and "module:factory" in line
    assert line.endswith(f"did you mean {near}?")
    assert not (project / out).exists()


def test_a_file_without_its_factory_suggests_one_it_defines(project, capsys):
    agent = agent_forms(project)["path"].removesuffix(":make_agent")
    code, _, err = cli(capsys, "run", "s", "--agent", agent, "--out", "r.jsonl")
    assert code == 2
    assert err.strip().endswith(f"did you mean {agent}:make_agent?")
