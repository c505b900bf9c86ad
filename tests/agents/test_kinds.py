"""The kinds of agent an ``--agent`` value names, and the one error of an unknown one."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentproc.agents.kinds import KINDS, agent_kind, nearest_agent, unknown_agent
from agentproc.agents.sim import SIM_AGENTS
from agentproc.errors import ConfigError


@pytest.mark.parametrize(
    ("agent", "kind"),
    [
        ("sim:decay", "sim"),
        ("local", "local"),
        ("local:SmolLM2", "local"),
        ("openai:gpt-4o", "openai"),
        ("my_agents/react.py:make_agent", "factory"),
        ("my_agents.react:make_agent", "factory"),
    ],
)
def test_each_kind_of_agent_is_told_apart(agent: str, kind: str):
    assert agent_kind(agent) == kind


@pytest.mark.parametrize(
    ("agent", "suggestion"),
    [
        ("decay", "sim:decay"),
        ("sim:decy", "sim:decay"),
        ("oracle", "sim:oracle"),
        ("gpt-4o", "openai:gpt-4o"),
        ("lokal", "local"),
        ("my_agents/react.py", "my_agents/react.py:FACTORY"),
    ],
)
def test_an_unknown_agent_lists_every_kind_and_suggests_the_nearest(agent: str, suggestion: str):
    with pytest.raises(ConfigError) as caught:
        agent_kind(agent)
    message = str(caught.value)
    assert message.startswith(f"unknown agent {agent!r} (expected one of: ")
    assert all(kind in message for kind in KINDS)
    assert all(name in message for name in SIM_AGENTS)
    assert message.endswith(f"; did you mean {suggestion}?")


def test_a_file_without_its_factory_is_suggested_with_a_function_it_defines(tmp_path: Path):
    file = tmp_path / "react.py"
    file.write_text("import os\n\ndef _helper():\n    pass\n\ndef make_agent(tools):\n    pass\n")
    assert nearest_agent(str(file)) == f"{file}:make_agent"


def test_a_file_is_read_for_its_functions_never_run(tmp_path: Path):
    file = tmp_path / "boom.py"
    file.write_text("raise SystemExit(9)\n\ndef build(tools):\n    pass\n")
    assert nearest_agent(str(file)) == f"{file}:build"


def test_nothing_near_is_suggested_for_an_unknown_provider():
    assert str(unknown_agent("anthropic:claude")).endswith(", module:factory)")
