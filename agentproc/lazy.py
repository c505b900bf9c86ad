"""Packages whose public names are imported on first use.

A package lists ``name -> defining module`` and gets ``__getattr__`` and ``__dir__``
from :func:`exports`: ``import agentproc`` (or ``agentproc.runs``) then loads nothing
until a name is asked for, so that a command pays only for what it uses. Each such
package repeats the names in a ``TYPE_CHECKING`` block for IDEs and type checkers; a
test keeps the two in step.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def exports(
    package: str, names: Mapping[str, str], namespace: dict[str, Any], extra: tuple[str, ...] = ()
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package`` (whose globals are ``namespace``),
    which resolve ``names`` lazily; ``extra`` are names it defines itself."""

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value  # later look-ups skip this function
        return value

    def __dir__() -> list[str]:
        return sorted([*names, *extra])

    return __getattr__, __dir__
