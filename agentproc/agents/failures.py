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

import dataclasses
import json
import re
import sys

from agentproc.runs import EpisodeError, ErrorKind, harness_error

_OVERFLOW = re.compile(
    r"context[ _-]?(length|window)|maximum context|too many tokens|exceeds? the context"
    r"|context_length_exceeded|prompt is too long",
    re.I,
)


class MalformedResponse(Exception):
    """The endpoint answered, but not with a chat completion (an HTML page, a cut body)."""


def loaded(*names: str) -> tuple[type, ...]:
    """The classes ``module.Class`` names, of the modules already imported: an exception
    of a library can only exist once that library is imported, so looking in
    ``sys.modules`` avoids importing openai (about a second) to classify one."""
    found = []
    for name in names:
        module, _, attr = name.rpartition(".")
        cls = getattr(sys.modules.get(module), attr, None)
        if cls is not None:
            found.append(cls)
    return tuple(found)


def error_kind(exc: BaseException) -> ErrorKind:
    """Which kind of infrastructure failure an exception is."""
    if isinstance(exc, loaded("langchain_core.exceptions.ContextOverflowError")):
        return "context_overflow"
    if isinstance(exc, loaded("openai.APIError")):
        status = getattr(exc, "status_code", None)
        if status in (400, 413) and _OVERFLOW.search(str(exc)):
            return "context_overflow"
        return "endpoint"
    failed = loaded("httpx.HTTPError", "httpx2.HTTPError", "langchain_core.exceptions.ModelError")
    failed += (TimeoutError, OSError, MalformedResponse, json.JSONDecodeError)
    return "endpoint" if isinstance(exc, failed) else "harness"


def episode_error(exc: BaseException, attempts: int = 1) -> EpisodeError:
    """The error record of an episode ended by ``exc`` (its message redacted)."""
    return dataclasses.replace(harness_error(exc), kind=error_kind(exc), attempts=attempts)
