"""Test set-up, and how ``python -m pytest -n auto --dist loadgroup`` shares the work.

pytest-xdist's ``loadgroup`` keeps the tests of one ``xdist_group`` on one worker. Every
test gets the group of its file, so a file's module fixtures (suites, servers, browsers)
are built once; the files that run llama.cpp share one group, since two llama.cpp
engines on two cores each wait on the other's threads (a 48-token reply then outlasts
the client's timeout). The longest files are handed out first (in the collection's order,
not xdist's default of the groups with the most tests first).
"""

import sys
from pathlib import Path

import pytest

try:  # the fresh venv of an extra runs its tests without the test extra
    from hypothesis import settings
except ImportError:  # pragma: no cover
    pass
else:
    settings.register_profile("derandomized", derandomize=True)
    settings.load_profile("derandomized")
    # Property tests draw the same examples on every run and machine: a red run is the
    # code's, not the draw's (``--hypothesis-profile default`` explores afresh).

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

FIRST = (
    "integrations/test_extras_fresh.py",
    "llama.cpp",
    "procedures/test_dependence.py",
    "test_pytest_plugin.py",
    "cli/test_workers.py",
    "agents/test_selfcheck_workflows.py",
)
"""The longest groups (minutes each), handed to the workers first so none of them is left
running alone at the end."""
LLAMA_CPP = {
    "agents/test_local_agent.py",
    "agents/test_local.py",
    "agents/test_local_weights.py",
    "agents/test_local_engine.py",
    "agents/test_providers.py",
    "agents/test_xllama_runtime.py",
    "experiments/test_local_compare.py",
}
"""The files whose tests run the embedded model or a llama.cpp server: the group
``llama.cpp``."""


def group_of(item: pytest.Item) -> str:
    try:
        name = item.path.relative_to(HERE).as_posix()
    except ValueError:  # a test outside this folder (pytester's)
        return item.path.as_posix()
    return "llama.cpp" if name in LLAMA_CPP else name


def pytest_configure(config: pytest.Config) -> None:
    # xdist hands out the groups with the most tests first unless told to keep the
    # collection's order, which puts the longest files (few tests, minutes each) first.
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False


@pytest.hookimpl(tryfirst=True)  # before xdist's hook, which reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: i for i, name in enumerate(FIRST)}
    for item in items:
        if item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(group_of(item)))
    # stable: each group keeps its order, the rest theirs
    items.sort(key=lambda item: rank.get(group_of(item), len(FIRST)))
