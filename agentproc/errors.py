"""The errors agentproc raises for program and configuration faults.

Agent mistakes are never exceptions: they are recorded in the trace as data.
Everything here is a fault of the input or the configuration, and the CLI turns
each one into a single message and exit status 2.

    AgentprocError
    ├── ConfigError          an unknown preset, agent, label or option value
    ├── GenerationError      a grid cell that cannot be generated within bounds
    ├── InputError           a file that is missing, unreadable or invalid
    │   └── RunFileError     a run file line that is not a valid episode
    ├── OutputError          a file that could not be written (a full disk): exit 1
    └── WorkerError          a span of a run over workers failed (its worker died): exit 1

    StoredCallError (a ValueError) a stored call that is not one, by index and field;
                                   its reader turns it into a RunFileError
"""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def one_line(text: str) -> str:
    """``text`` shown on one line: control characters and line separators written as
    their escapes (``\\n``). An error naming a file's field, or a model's argument in a
    timeline, may hold any of them."""
    return _CONTROL.sub(lambda m: repr(m.group())[1:-1], text)


def counted(n: int, noun: str) -> str:
    """``n`` and ``noun``, plural unless ``n`` is one.

    >>> counted(1, "episode"), counted(0, "episode"), counted(3, "call")
    ('1 episode', '0 episodes', '3 calls')
    """
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


class AgentprocError(Exception):
    """Base class of every error agentproc raises on purpose."""


class ConfigError(AgentprocError):
    """A configuration value is not one of the allowed ones."""


class AgentFault(AgentprocError):
    """An agent's own exception, at which ``--debug`` stopped the run: ``traceback`` holds
    its full traceback, the message where it happened."""

    def __init__(self, message: str, traceback: str) -> None:
        super().__init__(message)
        self.traceback = traceback


class GenerationError(AgentprocError):
    """A procedure cannot be generated with the requested parameters."""


class InputError(AgentprocError):
    """A file given to agentproc is missing or invalid.

    The message names the file and, where there is one, the field.
    """

    def __init__(self, path: object, message: str, field: str | None = None) -> None:
        self.path = str(path)
        self.field = field
        where = f"{self.path}: {field}: " if field else f"{self.path}: "
        super().__init__(where + message)


class RunFileError(InputError):
    """A line of a run file is not a valid episode."""


class OutputError(AgentprocError):
    """A file could not be written (the disk is full, an I/O error).

    What was written before stays; the CLI exits 1, not 2: the input was fine.
    """

    def __init__(self, path: object, message: str) -> None:
        self.path = str(path)
        super().__init__(f"{self.path}: {message}")


class WorkerError(AgentprocError):
    """A span of a run over several workers failed: its worker died (killed, out of
    memory), its input was bad (``input_error``: exit 2, else 1), or its first episodes all
    failed, so it stopped (``errored``: exit 3). The shards are kept, and ``resume`` goes on
    from them."""

    def __init__(self, message: str, input_error: bool = False, errored: bool = False) -> None:
        self.input_error = input_error
        self.errored = errored
        super().__init__(message)


def unknown_key(kind: str, key: str, valid: list[str] | tuple[str, ...]) -> ConfigError:
    """Build the one error for a lookup of an unknown key, listing the valid keys.

    >>> str(unknown_key("preset", "big", ["quick", "reference"]))
    "unknown preset 'big' (expected one of: quick, reference)"
    """
    return ConfigError(f"unknown {kind} {key!r} (expected one of: {', '.join(valid)})")


class StoredCallError(ValueError):
    """A call of a stored trace that is not one: which call, which of its fields, and why
    (the caller names the file and line)."""

    def __init__(self, index: int, field: str | None, reason: str) -> None:
        super().__init__(reason)
        self.index, self.field, self.reason = index, field, reason
