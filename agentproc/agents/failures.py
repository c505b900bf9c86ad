"""Telling infrastructure failures apart from what a model did.

A failure of the endpoint (the server is down, refuses the key, does not know the
model, answers with something that is not a chat completion), a context overflow
reported by the model or the server, or a fault of the harness itself ends an
episode with ``stop_reason: "error"`` and an :class:`~agentproc.runs.EpisodeError`
of kind ``endpoint``, ``context_overflow`` or ``harness``. Such episodes count in
no accuracy, label or verdict figure. Whatever a model *returns* is its behaviour
and is labelled instead.

    exception                                   kind
    ├── ContextOverflowError, or a 400 saying
    │   the context length is exceeded          context_overflow
    ├── openai.APIError (status, connection,
    │   timeout, response validation), httpx
    │   errors, TimeoutError, OSError,
    │   MalformedResponse, JSONDecodeError       endpoint
    └── anything else                           harness
"""

from __future__ import annotations

import json
import re
import sys

from agentproc.runs import EpisodeError, ErrorKind, redact

_OVERFLOW = re.compile(
    r"context[ _-]?(length|window)|maximum context|too many tokens|exceeds? the context"
    r"|context_length_exceeded|prompt is too long",
    re.I,
)


class MalformedResponse(Exception):
    """The endpoint answered, but not with a chat completion (an HTML page, a cut body)."""


def error_kind(exc: BaseException) -> ErrorKind:
    """Which kind of infrastructure failure an exception is."""
    core = sys.modules.get("langchain_core.exceptions")
    overflow = getattr(core, "ContextOverflowError", None)
    if overflow is not None and isinstance(exc, overflow):
        return "context_overflow"
    openai = sys.modules.get("openai")
    if openai is not None and isinstance(exc, openai.APIError):
        status = getattr(exc, "status_code", None)
        if status in (400, 413) and _OVERFLOW.search(str(exc)):
            return "context_overflow"
        return "endpoint"
    for name in ("httpx", "httpx2"):
        httpx = sys.modules.get(name)
        if httpx is not None and isinstance(exc, httpx.HTTPError):
            return "endpoint"
    model_error = getattr(core, "ModelError", None)
    if model_error is not None and isinstance(exc, model_error):
        return "endpoint"
    if isinstance(exc, TimeoutError | OSError | MalformedResponse | json.JSONDecodeError):
        return "endpoint"
    return "harness"


def episode_error(exc: BaseException, attempts: int = 1) -> EpisodeError:
    """The error record of an episode ended by ``exc`` (its message redacted)."""
    message = redact(f"{type(exc).__name__}: {exc}")
    return EpisodeError(kind=error_kind(exc), message=message[:2000], attempts=attempts)
