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
_key_envs: set[str] = set()
"""Variables a model was made to read its key from (:func:`secret_env`): known credentials."""
_values: set[str] = set()
_MIN_GUESSED = 8
"""A value found only by its variable's name (``*_TOKEN``: it may hold ``1`` or ``true``)
is a secret from this length on; a credential the run was given (its key, a URL's user
and password) is one whatever its length."""
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
    """Treat ``value`` (a password, a token not kept in the environment) as a secret,
    whatever its length."""
    if value:
        _values.add(value)


def secret_url(url: str) -> None:
    """Treat the credentials of a URL (``http://user:pass@host``) as secrets, in every
    form a client sends them: as written, percent-decoded, and as HTTP Basic auth."""
    parts = urllib.parse.urlsplit(url)
    if not parts.username and not parts.password:
        return
    user = urllib.parse.unquote(parts.username or "")
    password = urllib.parse.unquote(parts.password or "")
    raw = (parts.netloc.rpartition("@")[0], parts.password or "", parts.username or "")
    for value in (*raw, f"{user}:{password}", password, user):
        secret_value(value)


def _encodings(value: str) -> set[str]:
    """``value`` as an artefact may hold it: as is, JSON-escaped, percent-encoded and
    base64-encoded (standard and URL-safe alphabets, with and without padding)."""
    forms = {value, json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1]}
    forms |= {urllib.parse.quote(value, safe=""), urllib.parse.quote_plus(value)}
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        coded = encode(value.encode("utf-8")).decode()
        forms |= {coded, coded.rstrip("=")}
    return {f for f in forms if f}


def _forms(value: str) -> set[str]:
    """A secret in every encoding, and what of it a server may echo: the key without its
    vendor prefixes."""
    bare = {value}
    while (m := _PREFIX.match(value)) and len(value) - m.end() >= _MIN_GUESSED:
        value = value[m.end() :]
        bare.add(value)
    return {form for b in bare for form in _encodings(b)}


def _secrets() -> list[str]:
    """The secret values to remove, in every form, longest first (one may contain another)."""
    key = os.environ.get
    known = {key(name) or "" for name in _key_envs} | _values
    guessed = {
        value
        for name, value in os.environ.items()
        if (name == DEFAULT_KEY_ENV or _SECRET_NAME.search(name)) and len(value) >= _MIN_GUESSED
    }
    found = {form for value in (known | guessed) - {""} for form in _forms(value)}
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
    # The shapes first: a header or a URL's credentials go whole, before a short secret
    # (whose base64 may begin a longer one's) is cut out of them.
    for pattern, replacement in _TOKEN_PATTERNS:
        text = pattern.sub(replacement, text)
    for value in _secrets() if secrets is None else secrets:
        if value in text:
            text = text.replace(value, REDACTED)
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
    return any(v in json_text for v in _secrets())  # the JSON-escaped forms among them


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
