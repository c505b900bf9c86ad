import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

FIRST = (
    "integrations/test_extras_fresh.py",
    "procedures/test_dependence.py",
    "agents/test_local_agent.py",
    "test_pytest_plugin.py",
    "cli/test_workers.py",
    "agents/test_selfcheck_workflows.py",
)
"""The longest files (minutes each), started first: with ``-n auto --dist loadfile`` the
workers take files in this order, so none of these is left running alone at the end."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: i for i, name in enumerate(FIRST)}

    def key(item: pytest.Item) -> int:
        try:
            return rank.get(item.path.relative_to(HERE).as_posix(), len(FIRST))
        except ValueError:  # a test outside this folder (pytester's)
            return len(FIRST)

    items.sort(key=key)  # stable: each file keeps its order, the rest theirs
