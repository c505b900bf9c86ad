"""Keep secrets out of everything written or printed: run files, logs, reports.

Every run-file line and every recorded error passes through :func:`redact`.
"""

from __future__ import annotations

import base64
import json
import os
import re
import urllib.parse
from typing import Any

REDACTED = "[REDACTED]"
DEFAULT_KEY_ENV = "OPENAI_API_KEY"
"""The environment variable an ``openai:`` model reads its API key from."""

# Names of environment variables whose values are secrets: every *_API_KEY,
# *_TOKEN and *_SECRET, plus any other variable a model was told to read its key from.
_SECRET_NAME = re.compile(r"(API_KEY|_TOKEN|_SECRET)$")
_key_envs: set[str] = {DEFAULT_KEY_ENV}
_values: set[str] = set()
_MIN_SECRET = 8
"""Shorter values are not treated as secrets: replacing them would mangle ordinary text."""
_TOKEN_PATTERNS = (
    # The value of any Authorization header, whatever its scheme (Bearer, Basic, a bare key).
    (
        re.compile(
            r"""(?i)(\bauthorization\b["']?\s*[:=]\s*["']?)"""
            r"""(?:(?:bearer|basic|token|digest)\s+)?[^\s"',;}\]]+"""
        ),
        rf"\1{REDACTED}",
    ),
    (re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{8,}"), rf"\1 {REDACTED}"),
    (re.compile(r"\bsk-[A-Za-z0-9_-]{16,}"), REDACTED),
    # Credentials in a URL: scheme://user:password@host
    (re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^\s/?#@\"'<>]+@"), rf"\1{REDACTED}@"),
)
_SUSPECT_WORDS = ("authorization", "bearer", "basic", "sk-", "://")
"""Text that every one of the token patterns needs to match, in any case."""
_SUSPECT = re.compile("(?i)" + "|".join(map(re.escape, _SUSPECT_WORDS)))
_PREFIX = re.compile(r"^[A-Za-z]{1,8}[-_]")
"""A key's vendor prefix (``sk-``, ``sk-proj-`` is two): a server may echo the rest."""


def secret_env(name: str) -> None:
    """Treat the value of environment variable ``name`` as a secret from now on."""
    _key_envs.add(name)


def secret_value(value: str) -> None:
    """Treat ``value`` (a password, a token not kept in the environment) as a secret."""
    if len(value) >= _MIN_SECRET:
        _values.add(value)


def secret_url(url: str) -> None:
    """Treat the credentials of a URL (``http://user:pass@host``) as secrets, in every
    form a client sends them: as written, percent-decoded, and as HTTP Basic auth."""
    parts = urllib.parse.urlsplit(url)
    if not parts.username and not parts.password:
        return
    user = urllib.parse.unquote(parts.username or "")
    password = urllib.parse.unquote(parts.password or "")
    pair = f"{user}:{password}"
    raw = (parts.netloc.rpartition("@")[0], parts.password or "", parts.username or "")
    for value in (*raw, pair, password, user):
        secret_value(value)
    secret_value(base64.b64encode(pair.encode()).decode())


def _forms(value: str) -> set[str]:
    """A secret and what of it a server may echo: the key without its vendor prefixes."""
    forms = {value}
    while (m := _PREFIX.match(value)) and len(value) - m.end() >= _MIN_SECRET:
        value = value[m.end() :]
        forms.add(value)
    return forms


def _secrets() -> list[str]:
    """The secret values to remove, longest first (one may contain another)."""
    found = {
        form
        for name, value in os.environ.items()
        if (name in _key_envs or _SECRET_NAME.search(name)) and len(value) >= _MIN_SECRET
        for form in _forms(value)
    }
    found |= {form for value in _values for form in _forms(value)}
    return sorted(found, key=len, reverse=True)


def redact(text: str, secrets: list[str] | None = None) -> str:
    """Remove API keys from text meant for logs.

    Removes the value of every secret-named environment variable (``*_API_KEY``,
    ``*_TOKEN``, ``*_SECRET`` and any ``api_key_env`` a model was made with), also
    without its vendor prefix (``sk-``), every value given to :func:`secret_value`
    or :func:`secret_url`, the value of every ``Authorization`` header, credentials
    in URLs, and anything shaped like ``Bearer <token>`` or ``sk-<key>``.

    >>> redact("Authorization: Bearer abc.def-123")
    'Authorization: [REDACTED]'
    >>> redact("GET http://ann:hunter2@127.0.0.1/v1")
    'GET http://[REDACTED]@127.0.0.1/v1'
    """
    for value in _secrets() if secrets is None else secrets:
        if value in text:
            text = text.replace(value, REDACTED)
    for pattern, replacement in _TOKEN_PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def needs_redaction(json_text: str) -> bool:
    """Whether :func:`redact` could change any string that ``json_text`` holds.

    False only when the text has no secret (as written or JSON-escaped) and nothing
    a token pattern needs, so a writer can skip :func:`redact_values` for it.

    >>> needs_redaction('{"result": "S3 = 4.5"}'), needs_redaction('{"e": "Bearer abcdefghij"}')
    (False, True)
    """
    if _suspect(json_text):
        return True
    return any(v in json_text or json.dumps(v)[1:-1] in json_text for v in _secrets())


def _suspect(text: str) -> bool:
    """Whether ``text`` holds a word of :data:`_SUSPECT_WORDS` in any case, as
    :data:`_SUSPECT` finds it. ASCII text (a run file's line, nearly always) is lowered
    and searched word by word, twenty times faster than the regular expression over a
    long line; other text is left to the expression, which also matches U+0130, U+0131
    and U+017F (dotted and dotless I, long s) for ``i`` and ``s``, as lowering does not."""
    if text.isascii():
        low = text.lower()
        return any(word in low for word in _SUSPECT_WORDS)
    return _SUSPECT.search(text) is not None


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
