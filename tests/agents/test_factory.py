"""Your own agent from the command line: ``--agent module.path:factory`` or ``file.py:factory``."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import records

from agentproc.agents.factory import is_factory_spec, load_factory
from agentproc.cli import main
from agentproc.errors import ConfigError, InputError
from tests.fakes.openai_server import ScriptedServer

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "react_agent.py"


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("my_agents.react:make_agent", True),
        ("agent:make", True),
        ("examples/react_agent.py:make_agent", True),
        ("openai:gpt-4o-mini", False),
        ("local", False),
        ("local:SmolLM2", False),
        ("sim:decay", False),
        ("my_agents.react:", False),
        ("a b:make", False),
    ],
)
def test_which_agent_specs_name_a_factory(spec: str, expected: bool):
    assert is_factory_spec(spec) is expected


def test_a_factory_loads_from_a_file_and_from_a_module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    (tmp_path / "mine.py").write_text("def build(tools):\n    return ('built', len(tools))\n")
    assert load_factory(f"{tmp_path / 'mine.py'}:build")([1, 2]) == ("built", 2)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert load_factory("mine:build")([]) == ("built", 0)


@pytest.mark.parametrize(
    ("source", "spec", "error", "message"),
    [
        (None, "{dir}/nowhere.py:build", InputError, "no such file"),
        ("x = 1\n", "{file}:build", ConfigError, "has no 'build'"),
        ("build = 1\n", "{file}:build", ConfigError, "'build' is not callable"),
        ("raise RuntimeError('boom')\n", "{file}:build", ConfigError, "RuntimeError: boom"),
        ("def build(:\n", "{file}:build", ConfigError, "SyntaxError"),
        (None, "no_such_module_here:build", ConfigError, "cannot import no_such_module_here"),
    ],
)
def test_a_factory_that_cannot_be_loaded_is_one_clear_error(
    tmp_path: Path, source: str | None, spec: str, error: type[Exception], message: str
):
    file = tmp_path / "mine.py"
    if source is not None:
        file.write_text(source)
    with pytest.raises(error, match=message):
        load_factory(spec.format(file=file, dir=tmp_path))


def test_a_bad_factory_on_the_command_line_exits_2_before_writing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    suite, run = tmp_path / "s", tmp_path / "r.jsonl"
    assert main(["generate", "--steps", "2", "--count", "1", "--out", str(suite)]) == 0
    (tmp_path / "mine.py").write_text("x = 1\n")
    code = main(["run", str(suite), "--agent", f"{tmp_path / 'mine.py'}:build", "--out", str(run)])
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "has no 'build'" in err[0]
    assert not run.exists()


def test_the_example_agent_runs_from_the_command_line_and_is_labelled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    suite, run = tmp_path / "s", tmp_path / "r.jsonl"
    argv = ["generate", "--steps", "3,4", "--lookback", "2", "--count", "2", "--out", str(suite)]
    assert main(argv) == 0
    with ScriptedServer() as srv:  # oracle mode: the expected call at every turn
        monkeypatch.setenv("AGENTPROC_EXAMPLE_MODEL", "openai:fake-model")
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
        agent = f"{EXAMPLE}:make_agent"
        assert main(["run", str(suite), "--agent", agent, "--out", str(run)]) == 0
    recs = records(run)
    assert len(recs) == 4
    assert {r["agent"] for r in recs} == {agent}
    assert all(r["verdict"] == "faithful" and r["stop_reason"] == "answer" for r in recs)
    assert all(r["calls"][-1]["name"] == "submit_answer" for r in recs)
