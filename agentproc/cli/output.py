"""What the command line shares: exit statuses, exact JSON output and the option types
more than one command takes."""

from __future__ import annotations

import argparse
import json
import math
import re
from collections.abc import Callable
from typing import Any, TypeVar

from rich.console import Console

EXIT_OK = 0
"""Success."""
EXIT_FAILED = 1
"""A check that did not pass: a replay that differs, an imperfect self-check."""
EXIT_BAD_INPUT = 2
"""Bad input or configuration: one line naming the file and the field."""
EXIT_ERRORED = 3
"""A run in which some episodes could not be run (the endpoint failed, the context
overflowed, the harness failed): they count in no figure and ``--resume`` retries them."""
EXIT_INTERRUPTED = 130
"""Interrupted (Ctrl-C); every finished episode is kept."""

N = TypeVar("N", int, float)


def print_json(out: Console, data: Any) -> None:
    """Print strict JSON exactly (no markup, no wrapping; NaN and infinities as null)."""
    out.file.write(json.dumps(_finite(data), separators=(",", ":"), allow_nan=False) + "\n")


def _finite(obj: Any) -> Any:
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_finite(v) for v in obj]
    return obj


LONG_WORD = 200
"""Characters of one word (a run without blanks) an error line shows whole."""
_LONG_WORD = re.compile(rf"\S{{{LONG_WORD + 1},}}")


def brief(text: str) -> str:
    """An error line with every word longer than :data:`LONG_WORD` (a refused value of
    thousands of characters, echoed) cut to its first 60 characters and its length.

    >>> brief("unknown agent " + "x" * 300)
    "unknown agent xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx... (300 characters)"
    """
    return _LONG_WORD.sub(lambda m: f"{m.group()[:60]}... ({len(m.group()):,} characters)", text)


def say(console: Console, *lines: str) -> None:
    """Print each of ``lines`` as it is, one a line: no markup, no highlighting (file
    names, messages, a reader's warnings)."""
    for line in lines:
        console.print(line, markup=False, highlight=False)


def failures(err: Console, aborted: str | None, errored: str) -> int:
    """Say why a run stopped (``aborted``) or which of its episodes errored (``errored``:
    e.g. ``3 episodes errored (endpoint 3)``; empty: none); the exit status that calls for."""
    if aborted is not None:
        say(err, f"agentproc: {aborted}")
        return EXIT_ERRORED
    if errored:
        say(err, f"agentproc: {errored} and count in no figure; --resume runs them again")
        return EXIT_ERRORED
    return EXIT_OK


def number(
    convert: Callable[[str], N], expected: str, ok: Callable[[N], bool], bounds: str
) -> Callable[[str], N]:
    """An argparse type: the number ``convert`` (``int`` or ``float``) reads, if ``ok``;
    else a usage error saying what was ``expected``, or the ``bounds``."""

    def parse(text: str) -> N:
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {expected}, not {text!r}") from None
        if not ok(value):  # a whole number is shown as read, any other as written
            raise argparse.ArgumentTypeError(f"{bounds} (not {value if convert is int else text})")
        return value

    return parse


port = number(int, "a port number", lambda v: 0 <= v <= 65535, "a port is 0 to 65535")
"""An argparse type: a TCP port (0: any free one)."""


def count(low: int) -> Callable[[str], int]:
    """An argparse type: an integer of at least ``low``."""
    return number(int, "a whole number", lambda v: v >= low, f"must be at least {low}")


def seed(text: str) -> int:
    """An argparse type: a seed, a whole number of at least 0 (every command's ``--seed``;
    the sign-flip test's generator takes no negative seed)."""
    from agentproc.runs.names import shown_value

    try:
        value = int(text)
    except ValueError:  # as argparse says it of an int option
        raise argparse.ArgumentTypeError(f"invalid int value: {shown_value(text)}") from None
    if value < 0:
        shown = value if len(text) <= 40 else shown_value(text)
        raise argparse.ArgumentTypeError(f"a seed is a whole number of at least 0 (not {shown})")
    return value


def label(text: str) -> str:
    """An argparse type: an agent's name (:func:`~agentproc.runs.names.agent_name`)."""
    from agentproc.errors import ConfigError
    from agentproc.runs.names import agent_name

    try:
        return agent_name(text)
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def words(text: str) -> list[str]:
    """An argparse type: comma-separated names, blanks dropped."""
    return [x.strip() for x in text.split(",") if x.strip()]


def guard(text: str) -> str:
    """An argparse type: a guard mode (``observe``, ``enforce`` or ``feedback``)."""
    from agentproc.workflow import GUARDS

    if text not in GUARDS:
        raise argparse.ArgumentTypeError(
            f"unknown guard {text!r} (expected one of: {', '.join(GUARDS)})"
        )
    return text
