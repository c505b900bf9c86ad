"""A package's public names, each imported from its module on first use, so importing the
package loads none of them (PEP 562: a module's ``__getattr__`` and ``__dir__``)."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any


def lazy_exports(
    package: str, exports: Mapping[str, str], also: Iterable[str] = ()
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``, whose public names are the keys
    of ``exports`` (name -> the module that defines it) and ``also`` (names it sets
    itself). A name once imported is kept in the package, so later look-ups skip this."""
    listed = sorted({*exports, *also})

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return listed

    return __getattr__, __dir__
