"""The pytest plugin (entry point ``pytest11``): agent regression tests as fixtures.

Fixtures:

- ``agentproc_suite(path=None, **grid)``: a suite folder, the one at ``path`` or one
  generated once per session (``steps=(5,)``, ``lookback=(1,)``, ``count=2``, ``preset=``...,
  or ``workflow="flow.toml"`` for a declared workflow's instances);
- ``agentproc_run(agent, suite, **options)``: ``agentproc run`` of ``agent`` over the
  suite, returning an :class:`~agentproc.testing.AgentprocResult` (``faithful_accuracy``,
  ``labels``, ``episodes``);
- ``agentproc_golden(result, path)``: compare the result with a golden run scenario by
  scenario (``path`` relative to the test file); ``--agentproc-update-golden`` records it.

and :func:`~agentproc.testing.assert_follows_procedure`, also importable from here.

pytest imports this module in every session once agentproc is installed, so it
imports nothing of agentproc at the top: the library loads only when a test asks
for one of these fixtures.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

UPDATE_GOLDEN = "--agentproc-update-golden"


def pytest_addoption(parser: pytest.Parser) -> None:
    """The plugin's one option."""
    group = parser.getgroup("agentproc")
    group.addoption(
        UPDATE_GOLDEN,
        action="store_true",
        default=False,
        help="agentproc: record the runs compared with agentproc_golden as the golden runs",
    )


@pytest.fixture(scope="session")
def agentproc_suite(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., Path]:
    """A suite folder: ``agentproc_suite("suites/mine")`` or ``agentproc_suite(steps=(5, 9))``."""
    folder = tmp_path_factory.mktemp("agentproc-suites")

    def suite(path: str | Path | None = None, **grid: Any) -> Path:
        if path is not None:
            files = (Path(path, "procedures.jsonl"), Path(path, "scenarios.jsonl"))
            if not any(f.exists() for f in files) and not Path(path).is_file():
                raise FileNotFoundError(f"agentproc_suite: no suite at {path}")
            return Path(path)
        from agentproc.testing import make_suite

        return make_suite(folder, **grid)

    return suite


@pytest.fixture
def agentproc_run(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., Any]:
    """``agentproc_run(agent, suite, **options)``: run the agent, return its result."""
    folder = tmp_path_factory.mktemp("agentproc-runs")
    count = iter(range(1 << 30))

    def run(agent: str, suite: str | Path, **options: Any) -> Any:
        from agentproc.testing import run_agent

        return run_agent(agent, suite, folder / f"run-{next(count)}.jsonl", **options)

    return run


@pytest.fixture
def agentproc_golden(request: pytest.FixtureRequest) -> Callable[[Any, str | Path], None]:
    """``agentproc_golden(result, "golden/mine.jsonl")``: the result matches the golden run
    scenario by scenario (with ``--agentproc-update-golden``: becomes it)."""
    update = bool(request.config.getoption(UPDATE_GOLDEN))
    here = Path(request.path).parent

    def compare(result: Any, path: str | Path) -> None:
        from agentproc.testing import check_golden

        __tracebackhide__ = True
        check_golden(result, here / path, update=update)

    return compare


def assert_follows_procedure(result: Any, **kw: Any) -> None:
    """:func:`agentproc.testing.assert_follows_procedure` (imported when called)."""
    from agentproc.testing import assert_follows_procedure as check

    __tracebackhide__ = True
    check(result, **kw)
