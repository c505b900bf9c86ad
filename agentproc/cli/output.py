"""What the command line shares: exit statuses and exact JSON output."""

from __future__ import annotations

import json
from typing import Any

from rich.console import Console

from agentproc.errors import ConfigError

EXIT_OK = 0
"""Success."""
EXIT_FAILED = 1
"""A check that did not pass: a replay that differs, an imperfect self-check."""
EXIT_BAD_INPUT = 2
"""Bad input or configuration: one line naming the file and the field."""
EXIT_INTERRUPTED = 130
"""Interrupted (Ctrl-C); every finished episode is kept."""


def print_json(out: Console, data: Any) -> None:
    """Print JSON exactly (no markup, no wrapping)."""
    out.file.write(json.dumps(data, separators=(",", ":")) + "\n")


def fail(message: str) -> ConfigError:
    """An error for a bad combination of options."""
    return ConfigError(message)
