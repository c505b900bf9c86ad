"""Keep secrets out of everything written or printed: run files, logs, reports.

Every run-file line and every recorded error passes through :func:`redact`.
"""

from __future__ import annotations

import os
import re
from typing import Any

REDACTED = "[REDACTED]"
DEFAULT_KEY_ENV = "OPENAI_API_KEY"
"""The environment variable an ``openai:`` model reads its API key from."""

# Names of environment variables whose values are secrets: every *_API_KEY,
# *_TOKEN and *_SECRET, plus any other variable a model was told to read its key from.
_SECRET_NAME = re.compile(r"(API_KEY|_TOKEN|_SECRET)$")
_key_envs: set[str] = {DEFAULT_KEY_ENV}
_MIN_SECRET = 8
"""Shorter values are not treated as secrets: replacing them would mangle ordinary text."""
_TOKEN_PATTERNS = (
    (re.compile(r"(?i)\b(bearer)\s+[A-Za-z0-9._~+/=-]+"), rf"\1 {REDACTED}"),
    (re.compile(r"\bsk-[A-Za-z0-9_-]{16,}"), REDACTED),
)


def secret_env(name: str) -> None:
    """Treat the value of environment variable ``name`` as a secret from now on."""
    _key_envs.add(name)


def _secrets() -> list[str]:
    """The secret values to remove, longest first (one may contain another)."""
    found = {
        value
        for name, value in os.environ.items()
        if (name in _key_envs or _SECRET_NAME.search(name)) and len(value) >= _MIN_SECRET
    }
    return sorted(found, key=len, reverse=True)


def redact(text: str, secrets: list[str] | None = None) -> str:
    """Remove API keys from text meant for logs.

    Removes the value of every secret-named environment variable (``*_API_KEY``,
    ``*_TOKEN``, ``*_SECRET`` and any ``api_key_env`` a model was made with), and
    anything shaped like ``Bearer <token>`` or ``sk-<key>``.

    >>> redact("Authorization: Bearer abc.def-123")
    'Authorization: Bearer [REDACTED]'
    """
    for value in _secrets() if secrets is None else secrets:
        if value in text:
            text = text.replace(value, REDACTED)
    for pattern, replacement in _TOKEN_PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def redact_values(obj: Any, secrets: list[str] | None = None) -> Any:
    """A JSON-ready value with :func:`redact` applied to every string in it, keys included.

    Redacting values rather than the JSON text keeps the text valid JSON (a
    secret of digits never eats into a number) and finds secrets that JSON would
    have escaped.
    """
    if secrets is None:
        secrets = _secrets()
    if isinstance(obj, str):
        return redact(obj, secrets)
    if isinstance(obj, dict):
        return {
            redact(k, secrets) if isinstance(k, str) else k: redact_values(v, secrets)
            for k, v in obj.items()
        }
    if isinstance(obj, list | tuple):
        return [redact_values(v, secrets) for v in obj]
    return obj
