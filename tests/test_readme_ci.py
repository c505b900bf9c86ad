"""The README's "Use it in CI" section runs as written: its pytest example in a pytest
session of its own, its shell commands in order."""

from __future__ import annotations

import importlib.metadata
import os
import re
import shlex
from pathlib import Path

import pytest

from agentproc.cli import main

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[1]


def section() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return text.split("\n## Use it in CI\n", 1)[1].split("\n## ", 1)[0]


def block(kind: str) -> str:
    found = re.search(rf"```{kind}\n(.*?)```", section(), re.DOTALL)
    assert found is not None, kind
    return found[1]


def commands(script: str) -> list[list[str]]:
    joined = script.replace("\\\n", " ")
    return [shlex.split(line, comments=True) for line in joined.splitlines() if line.strip()]


def test_the_pytest_example_is_ten_lines_and_passes_then_records_and_matches_its_golden(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
):
    code = block("python")
    assert len(code.strip().splitlines()) <= 10
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    pytester.makepyfile(test_agent=code)
    installed = any(
        e.value == "agentproc.pytest_plugin"
        for e in importlib.metadata.entry_points(group="pytest11")
    )
    plugin = [] if installed else ["-p", "agentproc.pytest_plugin"]

    def session(*args: str) -> pytest.RunResult:
        return pytester.runpytest_subprocess(*plugin, "-p", "no:cacheprovider", *args, timeout=300)

    session().assert_outcomes(failed=1)  # no golden run yet
    session("--agentproc-update-golden").assert_outcomes(passed=1)
    session().assert_outcomes(passed=1)


def test_the_check_example_runs_and_passes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(tmp_path)
    for argv in commands(block("bash")):
        assert argv[0] == "agentproc"
        assert main(argv[1:]) == 0, argv
    assert "<testsuites>" in (tmp_path / "check.xml").read_text()


def prose() -> str:
    """The section's text outside its code blocks, on one line."""
    return " ".join(re.sub(r"```.*?```", "", section(), flags=re.DOTALL).split())


def test_the_section_says_to_install_pytest():
    assert "pip install pytest" in prose()


def test_the_section_says_the_first_run_records_the_golden_run_with_the_option():
    said = prose()
    assert "Until the first `pytest --agentproc-update-golden` records its golden run" in said


def test_docs_ci_says_how_the_first_golden_run_is_recorded():
    text = " ".join((ROOT / "docs" / "ci.md").read_text(encoding="utf-8").split())
    assert "pip install pytest" in text
    assert "**The first run**" in text and "run `pytest --agentproc-update-golden` once" in text
