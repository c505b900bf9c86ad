"""Each extra tested as a user installs it: a fresh venv, ``pip install -e ".[EXTRA]"`` at
today's newest resolution (not the test extra's), and that integration's tests run in it.

Adding an extra is one entry in :data:`EXTRA_TESTS`. Inside such a venv the harness skips
itself (:data:`INSIDE`), so it never recurses. It needs the package index (PyPI): where pip
cannot reach it, the install fails and so does the test, never a silent skip.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path
from xml.etree import ElementTree

import pytest

ROOT = Path(__file__).resolve().parents[2]
INSIDE = "AGENTPROC_FRESH_VENV"
"""Set in the fresh venv's test run: the harness does not run there."""

EXTRA_TESTS: dict[str, list[str]] = {
    "mcp": [
        "tests/integrations/test_mcp_server.py",
        "tests/integrations/test_mcp_workflow.py",
        "tests/integrations/test_mcp_sessions.py",
        "tests/integrations/test_mcp_jsonrpc.py",
        "tests/integrations/test_serving.py",
    ],
    "otel": [
        "tests/integrations/test_otel_import.py",
        "tests/integrations/test_otel_export.py",
        "tests/integrations/test_otel_producers.py",
        "tests/integrations/test_otel_live.py",
    ],
    "inspect": [
        "tests/integrations/test_inspect_task.py",
        "tests/integrations/test_inspect_workflow.py",
        "tests/integrations/test_inspect_metrics.py",
        "tests/integrations/test_readme_integrations.py::"
        "test_the_inspect_section_runs_offline_as_written_and_prints_its_log_s_metrics",
    ],
}
"""Extra -> the test files (or test ids) that run in its fresh venv."""
PRODUCERS = {
    "otel": [
        "openai",
        "langchain-openai",
        "langgraph",
        "opentelemetry-instrumentation-openai-v2",
        # the newest util-genai (1.3b0) breaks openai-v2's import; this is what it needs
        "opentelemetry-util-genai==1.1b0",
        "opentelemetry-instrumentation-openai",
        "opentelemetry-instrumentation-langchain",
        "openinference-instrumentation-openai",
        "openinference-instrumentation-langchain",
        "opentelemetry-exporter-otlp-proto-http",
    ],
}
"""Extra -> the real producers its live tests drive, installed beside it (a user of the
extra brings their own instrumentation)."""
KEY_PACKAGE = {"mcp": "mcp", "otel": "opentelemetry-sdk", "inspect": "inspect-ai"}
"""Extra -> the package whose resolved version the output names."""
TEST_TOOLS = ["pytest", "pytest-asyncio"]
"""What the test files need beyond the extra (no pins: the newest)."""

pytestmark = pytest.mark.skipif(bool(os.environ.get(INSIDE)), reason="inside a fresh venv")


def run(argv: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, check=False, **kw)  # type: ignore[call-overload,no-any-return]


@pytest.mark.parametrize("extra", sorted(EXTRA_TESTS))
def test_an_extras_tests_pass_in_a_fresh_venv_of_it_alone(
    extra: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    started = time.monotonic()
    venv = tmp_path / "venv"
    made = run([sys.executable, "-m", "venv", str(venv)])
    assert made.returncode == 0, made.stderr
    python = str(venv / "bin" / "python")
    pip = [python, "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    installed = run([*pip, "-e", f".[{extra}]", *TEST_TOOLS, *PRODUCERS.get(extra, [])], cwd=ROOT)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    installed_in = time.monotonic() - started
    package = KEY_PACKAGE.get(extra, extra)
    shown = run([python, "-m", "pip", "show", package])
    version = re.search(r"^Version: (\S+)", shown.stdout, re.M)
    assert version is not None, shown.stdout + shown.stderr
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    report = tmp_path / "report.xml"
    tests = run(
        [
            python,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            f"--junitxml={report}",
            *EXTRA_TESTS[extra],
        ],
        cwd=ROOT,
        env={**env, INSIDE: "1"},
    )
    took = time.monotonic() - started
    with capsys.disabled():
        print(
            f"\n[{extra}] fresh venv: {package} {version.group(1)}; installed in "
            f"{installed_in:.0f} s, {took:.0f} s in all"
        )
    assert tests.returncode == 0, tests.stdout[-5000:] + tests.stderr[-2000:]
    suite = ElementTree.parse(report).getroot().find("testsuite")
    assert suite is not None
    ran, skipped = int(suite.get("tests", 0)), int(suite.get("skipped", 0))
    with capsys.disabled():
        print(f"[{extra}] {ran} tests, {skipped} skipped")
    assert ran > 0 and skipped == 0, tests.stdout[-3000:]
    # the tests ran on the venv's own agentproc and SDK, not the system's
    here = run([python, "-c", "import agentproc; print(agentproc.__file__)"], env=env)
    assert here.stdout.strip().startswith(str(ROOT)), here.stdout + here.stderr
