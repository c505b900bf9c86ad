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
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
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


@dataclass(frozen=True)
class Fresh:
    """What one extra's fresh venv did: each step's result, the first that failed last."""

    python: str
    steps: dict[str, subprocess.CompletedProcess[str]]
    installed_in: float
    took: float
    report: Path


def fresh(extra: str, folder: Path) -> Fresh:
    """Make ``extra``'s venv in ``folder``, install it, run its tests there; stop at the
    first step that fails."""
    started = time.monotonic()
    venv = folder / "venv"
    python = str(venv / "bin" / "python")
    report = folder / "report.xml"
    steps = {"made": run([sys.executable, "-m", "venv", str(venv)])}
    pip = [python, "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    if steps["made"].returncode == 0:
        steps["installed"] = run(
            [*pip, "-e", f".[{extra}]", *TEST_TOOLS, *PRODUCERS.get(extra, [])], cwd=ROOT
        )
    installed_in = time.monotonic() - started
    if "installed" in steps and steps["installed"].returncode == 0:
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        steps["tests"] = run(
            [python, "-m", "pytest", "-p", "no:cacheprovider", f"--junitxml={report}",
             *EXTRA_TESTS[extra]],
            cwd=ROOT,
            env={**env, INSIDE: "1"},
        )  # fmt: skip
        steps["here"] = run([python, "-c", "import agentproc; print(agentproc.__file__)"], env=env)
    return Fresh(python, steps, installed_in, time.monotonic() - started, report)


@pytest.fixture(scope="module")
def venvs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Fresh]:
    """Every extra's venv, made, installed and tested at once: the installs wait on the
    package index and pip, so side by side they take about as long as the slowest alone."""
    folders = {extra: tmp_path_factory.mktemp(f"fresh-{extra}") for extra in EXTRA_TESTS}
    with ThreadPoolExecutor(max_workers=len(EXTRA_TESTS)) as pool:
        futures = {extra: pool.submit(fresh, extra, folders[extra]) for extra in EXTRA_TESTS}
        return {extra: future.result() for extra, future in futures.items()}


@pytest.mark.parametrize("extra", sorted(EXTRA_TESTS))
def test_an_extras_tests_pass_in_a_fresh_venv_of_it_alone(
    extra: str, venvs: dict[str, Fresh], capsys: pytest.CaptureFixture[str]
):
    got = venvs[extra]
    made, installed = got.steps["made"], got.steps.get("installed")
    assert made.returncode == 0, made.stderr
    assert installed is not None and installed.returncode == 0, (
        installed.stdout + installed.stderr if installed else ""
    )
    package = KEY_PACKAGE.get(extra, extra)
    shown = run([got.python, "-m", "pip", "show", package])
    version = re.search(r"^Version: (\S+)", shown.stdout, re.M)
    assert version is not None, shown.stdout + shown.stderr
    tests = got.steps["tests"]
    with capsys.disabled():
        print(
            f"\n[{extra}] fresh venv: {package} {version.group(1)}; installed in "
            f"{got.installed_in:.0f} s, {got.took:.0f} s in all (the three side by side)"
        )
    assert tests.returncode == 0, tests.stdout[-5000:] + tests.stderr[-2000:]
    suite = ElementTree.parse(got.report).getroot().find("testsuite")
    assert suite is not None
    ran, skipped = int(suite.get("tests", 0)), int(suite.get("skipped", 0))
    with capsys.disabled():
        print(f"[{extra}] {ran} tests, {skipped} skipped")
    assert ran > 0 and skipped == 0, tests.stdout[-3000:]
    # the tests ran on the venv's own agentproc and SDK, not the system's
    here = got.steps["here"]
    assert here.stdout.strip().startswith(str(ROOT)), here.stdout + here.stderr
