"""Every Python snippet in the README runs as written (a scripted model is ``my_chat_model``)."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage

from agentproc import load_scenario

ROOT = Path(__file__).resolve().parents[1]
PINNED = ROOT / "scenarios" / "pinned" / "n5-L3-r1_10-mixed-decimal-0000.json"
BLOCK = re.compile(r"^( *)```python\n(.*?)^\1```", re.DOTALL | re.MULTILINE)


def python_blocks() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return [textwrap.dedent(m[2]) for m in BLOCK.finditer(text)]


class ScriptedChatModel(GenericFakeChatModel):
    """Replies from a script, whatever tools it is bound to."""

    def bind_tools(self, tools: Any, **kw: Any) -> ScriptedChatModel:
        return self


def oracle_script() -> list[AIMessage]:
    """The pinned scenario's expected calls, then its answer, then a closing reply."""
    scenario = load_scenario(PINNED)
    calls = [(s.expected_call.name, dict(s.expected_call.arguments)) for s in scenario.steps]
    calls.append((scenario.finish.tool, {scenario.finish.argument: scenario.answer}))
    out = [
        AIMessage(content="", tool_calls=[{"name": n, "args": a, "id": f"c{i}"}])
        for i, (n, a) in enumerate(calls)
    ]
    return [*out, AIMessage(content="Done.")]


def test_the_readme_has_python_snippets():
    assert len(python_blocks()) >= 2


@pytest.mark.parametrize("index", range(len(python_blocks())))
def test_a_readme_snippet_runs_as_written(
    index: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    monkeypatch.chdir(ROOT)  # the snippets name files relative to the repository
    code = python_blocks()[index]
    namespace: dict[str, Any] = {"my_chat_model": ScriptedChatModel(messages=iter(oracle_script()))}
    # The project's own documentation, run as a reader would paste it.
    exec(compile(code, f"README.md python block {index + 1}", "exec"), namespace)
    printed = capsys.readouterr().out
    if "my_chat_model" in code:  # the scripted model follows the procedure: faithful
        assert printed.startswith("faithful"), printed
