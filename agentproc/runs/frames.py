"""Where an agent's own code failed: the frames of an exception that are the user's.

A harness error records the exception's type and message, and the frames of its
traceback that are neither agentproc's, the standard library's nor an installed
package's (LangGraph, LangChain): the agent's own file and line, innermost last. They are
redacted and capped (:data:`MAX_FRAMES` frames of :data:`MAX_FRAME` characters), so a run
file tells where a bug is without the whole traceback (``--debug`` prints that).
"""

from __future__ import annotations

import os
import sysconfig
import traceback
from functools import cache
from pathlib import Path

from agentproc.runs.redact import redact

MAX_FRAMES = 8
"""The innermost frames of the agent's own code kept."""
MAX_FRAME = 300
"""Characters of one frame kept."""


@cache
def _not_own() -> tuple[str, ...]:
    """Folders whose code is not the agent's: agentproc itself, the standard library and
    the installed packages."""
    package = str(Path(__file__).resolve().parents[1]) + os.sep
    paths = sysconfig.get_paths()
    found = {paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths}
    return (package, *sorted(str(Path(p).resolve()) + os.sep for p in found))


def is_own(filename: str) -> bool:
    """Whether a frame's file is the agent's own code (a file on disk outside agentproc,
    the standard library and the installed packages)."""
    if filename.startswith("<"):
        return False
    return not str(Path(filename).resolve()).startswith(_not_own())


def _shown(filename: str) -> str:
    """A file as a frame names it: relative to the current folder when under it."""
    try:
        return str(Path(filename).resolve().relative_to(Path.cwd()))
    except ValueError:
        return filename


def own_frames(exc: BaseException) -> tuple[str, ...]:
    """The agent's own frames of ``exc`` (or of the exception it was raised from, when it
    has none), innermost last: ``file:line in function: source``, redacted and capped."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        frames = [f for f in traceback.extract_tb(current.__traceback__) if is_own(f.filename)]
        if frames:
            return tuple(
                redact(
                    f"{_shown(f.filename)}:{f.lineno} in {f.name}"
                    + (f": {f.line.strip()}" if f.line else "")
                )[:MAX_FRAME]
                for f in frames[-MAX_FRAMES:]
            )
        current = current.__cause__ or current.__context__
    return ()
