"""An agent's name (``run --name``, ``serve-mcp --name``, the pytest plugin's ``name=``):
checked one way wherever one is taken, and a refused one echoed by a short prefix."""

from __future__ import annotations

from agentproc.errors import ConfigError

MAX_NAME = 64
"""The longest name: one line of a report's table."""
ECHOED = 40
"""Characters of a refused value an error shows: enough to recognise it, never a page."""


def shown_value(text: str, limit: int = ECHOED) -> str:
    """``text`` as an error quotes it: its ``repr``, or that of its first ``limit``
    characters with how long it was.

    >>> shown_value("x" * 1000, 4)
    "'xxxx'... (1,000 characters)"
    """
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}... ({len(text):,} characters)"


def agent_name(text: str) -> str:
    """``text`` if it is a name to show: one line of 1 to :data:`MAX_NAME` printable
    characters, not only blanks; else a :class:`ConfigError` quoting its start."""
    if not text.strip() or len(text) > MAX_NAME or not text.isprintable():
        raise ConfigError(
            f"expected a name of 1 to {MAX_NAME} printable characters, not {shown_value(text)}"
        )
    return text
