"""Keep secrets out of everything written or printed: run files, logs, reports, the cache.

The secrets are the run's own credentials (the API key a model reads, a base URL's user,
password and query credentials such as ``?api_key=``), any value given to
:func:`secret_value`, and the value of every secret-named environment variable
(``*_API_KEY``, ``*_TOKEN``, ``*_SECRET``) of 8 characters or more. Each is looked for
as written, JSON-escaped, percent-encoded and in base64, and without its vendor prefix
(``sk-``). Shapes are removed whatever the secret: an ``Authorization`` (or ``api-key``)
header's value, ``Bearer``/``Basic`` tokens, a URL's ``user:password@`` and the value of a
credential query parameter (:data:`QUERY_CREDENTIALS`).

Secrets are removed as whole values inside strings, never inside field names, numbers
or the stored name and arguments of a call, so that a run file stays readable and
replays unchanged whatever the key. Only the strings where a server's or an agent's text
lands are looked at (:func:`redact_values`): message content, tool results, text output,
ids and errors; a record's other strings (verdicts, kinds, labels, the scenario) are
ours. How much of a string counts depends on where it is and how long the secret is,
since a local server accepts any key and ``a``, ``1`` or ``ok`` are common ones:

- **Data** (:func:`redact_data`: message content, tool results, text output, ids, a
  refused URL or error line the command line shows): a secret of :data:`MIN_ANYWHERE`
  characters or more goes wherever it occurs; one of :data:`MIN_WORD` or more where it
  stands as a whole word (no letter, digit or ``_`` beside it, and no ``.`` between it
  and a digit, so ``1`` in ``4.1`` is a number's); a shorter one only in the shapes
  above. A key ``1`` never turns ``S1 = 1`` into anything else; a 40-character key a
  server echoes in a reply never reaches a file.
- **Error text** (:func:`redact`: episode errors and failed attempts): every secret,
  whatever its length, where it stands as a whole word, and long ones anywhere. An
  endpoint that refuses a key commonly quotes it.
"""

from __future__ import annotations

import base64
import json
import os
import re
import urllib.parse
from collections.abc import Callable
from typing import Any

REDACTED = "[REDACTED]"
DEFAULT_KEY_ENV = "OPENAI_API_KEY"
"""The environment variable an ``openai:`` model reads its API key from."""
QUERY_CREDENTIALS = frozenset(
    {"api_key", "api-key", "apikey", "key", "token", "access_token", "auth", "sig"}
    | {"signature", "secret", "password", "code", "x-api-key", "client_secret"}
)
"""Query parameters (lower case) whose value is a credential: removed from every URL in
every artefact, and left out of the response cache's keys."""
MIN_WORD = 6
"""A secret this long or longer is removed from data where it stands as a whole word."""
MIN_ANYWHERE = 12
"""A secret this long or longer is removed from data and error text wherever it occurs."""

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
_QUERY_NAMES = "|".join(sorted(map(re.escape, QUERY_CREDENTIALS), key=len, reverse=True))
_TOKEN_PATTERNS = (
    # The value of any Authorization (or api-key) header, whatever its scheme (once: a
    # record redacted twice keeps its text).
    (
        re.compile(
            r"""(?i)(\b(?:authorization|x-api-key|api[-_]key)\b["']?\s*[:=]\s*["']?)"""
            r"""(?!\[REDACTED\])(?:(?:bearer|basic|token|digest)\s+)?[^\s"',;}\]&]+"""
        ),
        rf"\1{REDACTED}",
    ),
    (re.compile(r"(?i)\b(bearer)\s+[A-Za-z0-9._~+/=-]{8,}"), rf"\1 {REDACTED}"),
    # Basic credentials are base64: a digit or ``+/=`` among them ("basic arithmetic" stays).
    (re.compile(r"(?i)\b(basic)\s+(?=[A-Za-z]*[0-9+/=])[A-Za-z0-9+/=]{8,}"), rf"\1 {REDACTED}"),
    (re.compile(r"\bsk-[A-Za-z0-9_-]{16,}"), REDACTED),
    # Credentials in a URL: scheme://user:password@host
    (re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^\s/?#@\"'<>]+@"), rf"\1{REDACTED}@"),
    # A credential in a query string: ?api_key=...&sig=...
    (re.compile(rf"(?i)([?&;](?:{_QUERY_NAMES})=)[^&#;\s\"'<>\\]+"), rf"\1{REDACTED}"),
)
_SUSPECT_WORDS: tuple[str, ...] = (
    *("authorization", "bearer", "basic", "sk-", "://", "api-key", "api_key"),
    *(f"{name}=" for name in sorted(QUERY_CREDENTIALS)),
)
"""Text that every one of the token patterns needs to match, in any case."""
_SUSPECT = re.compile("(?i)" + "|".join(map(re.escape, _SUSPECT_WORDS)))
_PREFIX = re.compile(r"^[A-Za-z]{1,8}[-_]")
"""A key's vendor prefix (``sk-``, ``sk-proj-`` is two): a server may echo the rest."""
_BEFORE = r"(?<![A-Za-z0-9_])(?<![0-9]\.)"
_AFTER = r"(?![A-Za-z0-9_])(?!\.[0-9])"


def secret_env(name: str) -> None:
    """Treat the value of environment variable ``name`` as a secret from now on."""
    _key_envs.add(name)


def secret_value(value: str) -> None:
    """Treat ``value`` (a password, a token not kept in the environment) as a secret,
    whatever its length."""
    if value:
        _values.add(value)


def secret_url(url: str) -> None:
    """Treat the credentials of a URL (``http://user:pass@host/?api_key=...``) as secrets,
    in every form a client sends them: as written, percent-decoded, and as HTTP Basic auth."""
    parts = urllib.parse.urlsplit(url)
    for name, value in urllib.parse.parse_qsl(parts.query, keep_blank_values=False):
        if name.lower() in QUERY_CREDENTIALS:
            secret_value(value)
            secret_value(urllib.parse.quote_plus(value))
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


def _shapes(text: str) -> str:
    """``text`` without header values, tokens, URL credentials and query credentials."""
    if _suspect(text):
        for pattern, replacement in _TOKEN_PATTERNS:
            text = pattern.sub(replacement, text)
    return text


def _remove(text: str, secrets: list[str], min_word: int) -> str:
    """``text`` without every secret of :data:`MIN_ANYWHERE` characters or more, and every
    one of ``min_word`` or more that stands as a whole word."""
    for value in secrets:
        if value not in text:
            continue
        if len(value) >= MIN_ANYWHERE:
            text = text.replace(value, REDACTED)
        elif len(value) >= min_word:
            text = re.sub(_BEFORE + re.escape(value) + _AFTER, REDACTED, text)
    return text


def redact(text: str, secrets: list[str] | None = None) -> str:
    """Remove credentials from error text and logs (the stricter rule: every secret
    where it stands as a whole word, whatever its length).

    >>> redact("Authorization: Bearer abc.def-123")
    'Authorization: [REDACTED]'
    >>> redact("GET http://ann:hunter2@127.0.0.1/v1?api_key=k3y&n=2")
    'GET http://[REDACTED]@127.0.0.1/v1?api_key=[REDACTED]&n=2'
    """
    # The shapes first: a header or a URL's credentials go whole, before a short secret
    # (whose base64 may begin a longer one's) is cut out of them.
    return _remove(_shapes(text), _secrets() if secrets is None else secrets, 1)


def redact_data(text: str, secrets: list[str] | None = None) -> str:
    """Remove credentials from a string of data (a reply, a tool result): the shapes, and
    secrets long enough (:data:`MIN_WORD`) never to be mistaken for a value.

    >>> redact_data("S1 = 1 from http://u:1@h/, key k3y-0123456789", ["k3y-0123456789", "1"])
    'S1 = 1 from http://[REDACTED]@h/, key [REDACTED]'
    """
    return _remove(_shapes(text), _secrets() if secrets is None else secrets, MIN_WORD)


def needs_redaction(json_text: str) -> bool:
    """Whether :func:`redact` could change any string that ``json_text`` holds.

    False only when the text has no secret (as written or JSON-escaped) and nothing
    a token pattern needs, so a writer can skip :func:`redact_values` for it.

    >>> needs_redaction('{"result": "S3 = 4.5"}'), needs_redaction('{"e": "Bearer abcdefghij"}')
    (False, True)
    """
    if _suspect(json_text):
        return True
    # The JSON-escaped forms are among the secrets; a short one is only ever removed from
    # error text, so it matters only in a line that holds one.
    errors = '"error' in json_text
    return any(v in json_text for v in _secrets() if errors or len(v) >= MIN_WORD)


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


_FREE_TEXT = frozenset({"content", "result", "results", "output", "id", "tool_call_id"})
_FREE_TEXT |= {"refusal", "reasoning_content"}
"""Fields whose strings hold what a server or an agent wrote (a reply, a tool result, an
id): redacted as data. Every other string of a record (ids of ours, labels, verdicts,
kinds, the scenario) is left as it is: no server text reaches it."""
_ERROR_FIELDS = frozenset({"error", "errors"})
"""Fields whose strings are error text: :func:`redact` applies."""


def redact_values(obj: Any, secrets: list[str] | None = None) -> Any:
    """A JSON-ready value (a run-file record, a stored reply) with secrets removed from
    the strings where server or agent text lands, as the module's rule says: error text
    (``error``, ``errors``, an error's ``message``) by :func:`redact`; message content,
    tool results, text output and ids by :func:`redact_data`. Field names, numbers,
    every other string, and a call's stored name and arguments are never changed.

    Redacting values rather than the JSON text keeps the text valid JSON (a
    secret of digits never eats into a number) and finds secrets that JSON would
    have escaped.

    >>> rec = {"verdict": "e", "error": {"kind": "endpoint", "message": "bad key e"}}
    >>> redact_values(rec, ["e"])
    {'verdict': 'e', 'error': {'kind': 'endpoint', 'message': 'bad key [REDACTED]'}}
    """
    return _walk(obj, _secrets() if secrets is None else secrets, ())


def _walk(obj: Any, secrets: list[str], path: tuple[str, ...]) -> Any:
    if isinstance(obj, str):
        clean = _cleaner(path)
        return obj if clean is None else clean(obj, secrets)
    if isinstance(obj, dict):
        return {k: _walk(v, secrets, (*path, str(k))) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_walk(v, secrets, path) for v in obj]
    return obj


def _cleaner(path: tuple[str, ...]) -> Callable[[str, list[str]], str] | None:
    """How a string at ``path`` (the field names above it) is redacted; ``None``: never."""
    if not path or "arguments" in path:
        return None
    last = path[-1]
    if last in _ERROR_FIELDS or (last == "message" and _ERROR_FIELDS & set(path)):
        return redact
    if last in _FREE_TEXT or (last == "text" and "content" in path):
        return redact_data
    return None
