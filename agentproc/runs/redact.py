"""Keep secrets out of everything written or printed: run files, logs, reports, the cache.

The secrets are the run's own credentials (the API key a model reads, a base URL's user,
password and query credentials such as ``?api_key=``), any value given to
:func:`secret_value`, and the value of every secret-named environment variable
(``*_API_KEY``, ``*_TOKEN``, ``*_SECRET``) of 8 characters or more. Each is looked for
as written, JSON-escaped, percent-encoded and in base64 (``user:password`` too, as a
``Basic`` header holds it), and without its vendor prefix (``sk-``). Shapes are removed
whatever the secret: an ``Authorization`` (or ``api-key``) header's value,
``Bearer``/``Basic`` tokens, a URL's ``user:password@`` and the value of a credential
query parameter (:data:`QUERY_CREDENTIALS`).

Two rules hold at once. A secret (each form counted by its own length) of
:data:`MIN_ANYWHERE` characters or more does not occur by chance: it goes wherever it
occurs, a call's name and arguments included. A shorter one goes only where it cannot
be data: in the shapes above, as a whole word of text from :data:`MIN_WORD` characters on,
and in error text; a local server accepts any key and ``a``, ``1`` or ``ok`` are common
ones, and a key ``1`` must never turn ``S1 = 1`` into anything else. Field names are
never changed, so a run file stays readable whatever the key. By place:

- **Data** (:func:`redact_data`: message content, tool results, text output, ids, a
  refused URL or error line the command line shows): a secret of :data:`MIN_ANYWHERE`
  characters or more goes wherever it occurs; one of :data:`MIN_WORD` or more where it
  stands as a whole word (no letter, digit or ``_`` beside it, and no ``.`` between it
  and a digit, so ``1`` in ``4.1`` is a number's), unless it reads as a number (data's
  numbers are what is labelled); a shorter one only in the shapes above.
- **A call** (:func:`redact_arguments`: its argument text, and its name as data): each
  string inside the JSON (keys and values) as data; a number only where a secret of
  :data:`MIN_ANYWHERE` characters or more is part of it (it becomes the string
  ``"[REDACTED]"``, so the text stays JSON). The episode session applies it before the
  mock tools execute the call and the monitor labels it, and records which calls it
  changed: what a run file stores is what ran, and replay and relabel find what the
  run found.
- **Error text** (:func:`redact`: episode errors, failed attempts, ``--debug``'s
  traceback): every secret, whatever its length, where it stands as a whole word, and
  long ones anywhere. An endpoint that refuses a key commonly quotes it.

The secrets are found once per distinct environment (:func:`current_secrets`): a changed
key, or a variable set or unset between two runs of one process, is seen at the next call.
"""

from __future__ import annotations

import base64
import json
import os
import re
import urllib.parse
from collections.abc import Callable, Sequence
from functools import lru_cache
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
"""A secret this long or longer is removed from data where it stands as a whole word
(unless it reads as a number)."""
MIN_ANYWHERE = 12
"""A secret this long or longer does not occur by chance: it is removed wherever it
occurs, in data, a call's name and arguments, and error text."""

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
_SCHEMES = {"bearer": _TOKEN_PATTERNS[1][0], "basic": _TOKEN_PATTERNS[2][0]}
"""Words common in data ("a basic plan") that are suspect only where a token follows
them: each occurrence is tried with its own pattern."""
_PLAIN_WORDS = tuple(w for w in _SUSPECT_WORDS if w not in _SCHEMES and not w.endswith("="))
_QUERY_WORDS = tuple(w for w in _SUSPECT_WORDS if w.endswith("="))
"""The query words (``key=``), each with its only ``=`` last: looked for back from the
text's ``=`` signs, which are few."""
_PREFIX = re.compile(r"^[A-Za-z]{1,8}[-_]")
"""A key's vendor prefix (``sk-``, ``sk-proj-`` is two): a server may echo the rest."""
_BEFORE = r"(?<![A-Za-z0-9_])(?<![0-9]\.)"
_AFTER = r"(?![A-Za-z0-9_])(?!\.[0-9])"
_NUMBER = re.compile(r"[-+]?[0-9]+(?:[.,][0-9]+)*(?:[eE][-+]?[0-9]+)?")
"""A secret that reads as a number: removed from data only when long."""
_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|-?[0-9][0-9.eE+-]*')
"""A string or a number of JSON text (in valid JSON, every number lies outside strings)."""


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


def current_secrets() -> tuple[str, ...]:
    """The secret values to remove, in every form, longest first (one may contain another).

    Found once per distinct set of the values they come from (the variables a model reads
    its key from, every secret-named variable, :func:`secret_value`'s): looking them up
    costs a few microseconds where finding every form costs a hundred, and a variable
    set, changed or unset between two runs of one process is seen at once."""
    env = os.environ
    names = _secret_names(tuple(env))
    known = tuple((name, env.get(name) or "") for name in sorted(_key_envs))
    guessed = tuple((name, env[name]) for name in names if name in env)
    return _found(known, guessed, frozenset(_values))


@lru_cache(maxsize=8)
def _secret_names(names: tuple[str, ...]) -> tuple[str, ...]:
    """The variables among ``names`` whose values are secrets by their name."""
    return tuple(n for n in names if n == DEFAULT_KEY_ENV or _SECRET_NAME.search(n))


@lru_cache(maxsize=8)
def _found(
    known: tuple[tuple[str, str], ...],
    guessed: tuple[tuple[str, str], ...],
    values: frozenset[str],
) -> tuple[str, ...]:
    """Every form of the secrets ``known`` (any length), ``guessed`` (from
    :data:`_MIN_GUESSED` on) and ``values``, longest first."""
    sure = {value for _, value in known} | values
    likely = {value for _, value in guessed if len(value) >= _MIN_GUESSED}
    found = {form for value in (sure | likely) - {""} for form in _forms(value)}
    return tuple(sorted(found, key=len, reverse=True))


def _shapes(text: str) -> str:
    """``text`` without header values, tokens, URL credentials and query credentials."""
    if _suspect(text):
        for pattern, replacement in _TOKEN_PATTERNS:
            text = pattern.sub(replacement, text)
    return text


def _remove(text: str, secrets: Sequence[str], min_word: int, numbers: bool = True) -> str:
    """``text`` without every secret of :data:`MIN_ANYWHERE` characters or more, and every
    one of ``min_word`` or more that stands as a whole word (without ``numbers``: unless
    it reads as a number)."""
    for value in secrets:
        if value not in text:
            continue
        if len(value) >= MIN_ANYWHERE:
            text = text.replace(value, REDACTED)
        elif len(value) >= min_word and (numbers or not _NUMBER.fullmatch(value)):
            text = re.sub(_BEFORE + re.escape(value) + _AFTER, REDACTED, text)
    return text


def redact(text: str, secrets: Sequence[str] | None = None) -> str:
    """Remove credentials from error text and logs (the stricter rule: every secret
    where it stands as a whole word, whatever its length).

    >>> redact("Authorization: Bearer abc.def-123")
    'Authorization: [REDACTED]'
    >>> redact("GET http://ann:hunter2@127.0.0.1/v1?api_key=k3y&n=2")
    'GET http://[REDACTED]@127.0.0.1/v1?api_key=[REDACTED]&n=2'
    """
    # The shapes first: a header or a URL's credentials go whole, before a short secret
    # (whose base64 may begin a longer one's) is cut out of them.
    return _remove(_shapes(text), current_secrets() if secrets is None else secrets, 1)


def redact_data(text: str, secrets: Sequence[str] | None = None) -> str:
    """Remove credentials from a string of data (a reply, a tool result): the shapes, and
    secrets long enough (:data:`MIN_WORD`) never to be mistaken for a value.

    >>> redact_data("S1 = 1 from http://u:1@h/, key k3y-0123456789", ["k3y-0123456789", "1"])
    'S1 = 1 from http://[REDACTED]@h/, key [REDACTED]'
    """
    return _remove(
        _shapes(text), current_secrets() if secrets is None else secrets, MIN_WORD, False
    )


def redact_arguments(text: str, secrets: Sequence[str] | None = None) -> str:
    """A call's argument text without credentials: each string of its JSON (keys and
    values) redacted as data, a number replaced (by the string ``"[REDACTED]"``) only
    where a secret of :data:`MIN_ANYWHERE` characters or more is part of it. The text
    stays JSON when it was; text that is not JSON is redacted as data, whole.

    >>> redact_arguments('{"S1": 1, "note": "key k3y-0123456789"}', ["k3y-0123456789", "1"])
    '{"S1": 1, "note": "key [REDACTED]"}'
    >>> redact_arguments('{"S1": 5551234567890}', ["5551234567890"])
    '{"S1": "[REDACTED]"}'
    """
    found = current_secrets() if secrets is None else secrets
    # Escapes (``\/``, ``\u00e4``) may hide a secret from the look below: read them.
    plain = "\\" not in text and not _suspect(text)
    if plain and not any(v in text for v in found if len(v) >= MIN_WORD):
        return text
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return redact_data(text, found)
    return _JSON_TOKEN.sub(lambda m: _token(m.group(), found), text)


def _token(token: str, secrets: Sequence[str]) -> str:
    """A JSON string or number of a call's arguments, redacted."""
    if token[0] == '"':
        value = json.loads(token)
        clean = redact_data(value, secrets)
        return token if clean == value else json.dumps(clean)
    if any(len(v) >= MIN_ANYWHERE and v in token for v in secrets):
        return json.dumps(REDACTED)
    return token


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
    return any(v in json_text for v in current_secrets() if errors or len(v) >= MIN_WORD)


def _suspect(text: str) -> bool:
    """Whether ``text`` holds a word of :data:`_SUSPECT_WORDS` in any case, as
    :data:`_SUSPECT` finds it. ASCII text (a run file's line, nearly always) is lowered
    and searched word by word, twenty times faster than the regular expression over a
    long line (the query words back from each ``=`` sign, in one look each: a search of
    the line for each of them was half the check; a scheme word, ``basic`` or
    ``bearer``, only where a token follows it: a workflow's "basic" plan is data); other
    text is left to the expression, which also
    matches U+0130, U+0131 and U+017F (dotted and dotless I, long s) for ``i`` and ``s``,
    as lowering does not."""
    if text.isascii():
        low = text.lower()
        if any(word in low for word in _PLAIN_WORDS):
            return True
        at = low.find("=")
        while at >= 0:
            if low.endswith(_QUERY_WORDS, 0, at + 1):
                return True
            at = low.find("=", at + 1)
        return any(_token_follows(text, low, w, p) for w, p in _SCHEMES.items())
    return _SUSPECT.search(text) is not None


def _token_follows(text: str, low: str, word: str, pattern: re.Pattern[str]) -> bool:
    """Whether a credential token follows some occurrence of ``word`` (a scheme) in
    ``text`` (``low``: it lowered), as ``pattern`` matches one there."""
    at = low.find(word)
    while at >= 0:
        if pattern.match(text, at):
            return True
        at = low.find(word, at + 1)
    return False


_FREE_TEXT = frozenset({"content", "result", "results", "output", "id", "tool_call_id"})
_FREE_TEXT |= {"refusal", "reasoning_content"}
"""Fields whose strings hold what a server or an agent wrote (a reply, a tool result, an
id): redacted as data. Every other string of a record (ids of ours, labels, verdicts,
kinds, the scenario) is left as it is: no server text reaches it."""
_ERROR_FIELDS = frozenset({"error", "errors"})
"""Fields whose strings are error text: :func:`redact` applies."""


def redact_values(obj: Any, secrets: Sequence[str] | None = None) -> Any:
    """A JSON-ready value (a run-file record, a stored reply) with secrets removed from
    the strings where server or agent text lands, as the module's rule says: error text
    (``error``, ``errors``, an error's ``message``) by :func:`redact`; message content,
    tool results, text output, ids and a call's name by :func:`redact_data`; a call's
    argument text by :func:`redact_arguments` (the session cut the same out before the
    call ran: this changes nothing of a run's own calls). Field names, numbers and every
    other string are never changed.

    Redacting values rather than the JSON text keeps the text valid JSON (a
    secret of digits never eats into a number) and finds secrets that JSON would
    have escaped.

    >>> rec = {"verdict": "e", "error": {"kind": "endpoint", "message": "bad key e"}}
    >>> redact_values(rec, ["e"])
    {'verdict': 'e', 'error': {'kind': 'endpoint', 'message': 'bad key [REDACTED]'}}
    """
    return _walk(obj, current_secrets() if secrets is None else secrets, ())


def _walk(obj: Any, secrets: Sequence[str], path: tuple[str, ...]) -> Any:
    if isinstance(obj, str):
        clean = _cleaner(path)
        return obj if clean is None else clean(obj, secrets)
    if isinstance(obj, dict):
        return {k: _walk(v, secrets, (*path, str(k))) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_walk(v, secrets, path) for v in obj]
    return obj


_CALL_NAME_PARENTS = frozenset({"calls", "function"})
"""The fields a call's ``name`` lies in: a run file's calls, a message's tool call."""


def _cleaner(path: tuple[str, ...]) -> Callable[[str, Sequence[str]], str] | None:
    """How a string at ``path`` (the field names above it) is redacted; ``None``: never."""
    if not path:
        return None
    last = path[-1]
    if last == "arguments":  # a call's argument text
        return redact_arguments
    if "arguments" in path:  # a string of arguments given as an object
        return redact_data
    if last == "name" and len(path) > 1 and path[-2] in _CALL_NAME_PARENTS:
        return redact_data
    if last in _ERROR_FIELDS or (last == "message" and _ERROR_FIELDS & set(path)):
        return redact
    if last in _FREE_TEXT or (last == "text" and "content" in path):
        return redact_data
    return None
