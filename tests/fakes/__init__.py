"""Test doubles that speak real protocols: an OpenAI-compatible HTTP server.

The names load on first use, so ``python -m tests.fakes.openai_server`` does not
import its own module twice.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Request", "ScriptedServer", "oracle_reply"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from . import openai_server

        return getattr(openai_server, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
