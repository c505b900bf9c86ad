"""A response cache: a model's reply to an exact request, kept in SQLite and served again.

Every model agent (``openai:MODEL``, ``local``, any LangChain chat model) talks to the
harness through one :class:`~agentproc.agents.conversation.Conversation`;
:class:`CachedConversation` wraps it, so one cache serves every kind of model in tool
and text mode. A request's key is the SHA-256 of a canonical JSON (sorted keys, no
spaces) of:

- the model's identity: for ``openai:`` the request's fixed fields (model, sampling
  options, extra body) and the server's URL without credentials or query; for
  ``local`` its file and sampling options; never an API key, a header or the
  organisation;
- the tools offered and the conversation so far (OpenAI-format messages: the
  opening, each reply's text and tool calls, each tool result);
- the trial index and the run's seed, so that the trials of a scenario stay
  independent samples.

SQLite (stdlib ``sqlite3``) in WAL mode with a busy timeout: readers never wait for
a writer, and concurrent writers (episodes in flight, ``--workers`` processes, two
runs at once) wait their turn. Each process opens its own connection (a forked
worker never uses its parent's). ``diskcache`` would do the same on top of SQLite;
the store is two statements, so it is not worth a dependency. Each entry keeps a
digest of its value: an entry that does not match it, or does not parse as a
reply, is skipped with a :class:`CacheWarning` and never served; the next reply
replaces it.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
import urllib.parse
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import orjson

from agentproc.agents.conversation import Conversation, Turn, conversation

CacheMode = Literal["read", "write", "readwrite", "off"]
"""``read``: serve hits, store nothing; ``write``: ask the model, store every reply;
``readwrite``: both; ``off``: no cache."""
CACHE_FILE = "responses.sqlite3"
"""The store's file name in the cache folder."""
KEY_VERSION = 1
"""Part of every key: a change of what keys hold starts a fresh cache."""
_SECRET_WORDS = ("key", "secret", "token", "auth", "password", "header", "organization")


class CacheWarning(UserWarning):
    """A cache entry was skipped (corrupted) or the store could not be written."""


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/agentproc``, else ``~/.cache/agentproc``."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "agentproc"


@dataclass(frozen=True)
class CacheConfig:
    """Where the cache is and how it is used; picklable, so workers get it."""

    folder: Path
    mode: CacheMode = "readwrite"

    @property
    def reads(self) -> bool:
        """Hits are served."""
        return self.mode in ("read", "readwrite")

    @property
    def writes(self) -> bool:
        """Replies are stored."""
        return self.mode in ("write", "readwrite")


class ResponseStore:
    """Replies by key in one SQLite file."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._db = sqlite3.connect(path, timeout=60.0, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS responses "
            "(key TEXT PRIMARY KEY, digest TEXT NOT NULL, value BLOB NOT NULL)"
        )

    def get(self, key: str) -> dict[str, Any] | None:
        """The reply stored under ``key``; ``None`` when there is none or it is corrupted."""
        row = self._db.execute(
            "SELECT digest, value FROM responses WHERE key = ?", (key,)
        ).fetchone()
        if row is None:
            return None
        digest, value = row
        try:
            if not isinstance(value, bytes) or _digest(value) != digest:
                raise ValueError("its digest does not match its value")
            data = orjson.loads(value)
            turn_of(data)  # its shape, checked before it is served
        except (ValueError, TypeError, KeyError) as exc:
            warnings.warn(
                f"{self.path}: skipped the corrupted cache entry {key[:16]}: {exc}",
                CacheWarning,
                stacklevel=2,
            )
            return None
        return data  # type: ignore[no-any-return]

    def put(self, key: str, data: dict[str, Any]) -> None:
        """Store ``data`` under ``key`` (over a corrupted entry, if any)."""
        value = orjson.dumps(data)
        try:
            self._db.execute(
                "INSERT OR REPLACE INTO responses (key, digest, value) VALUES (?, ?, ?)",
                (key, _digest(value), value),
            )
        except sqlite3.Error as exc:  # a full disk: the run goes on without storing
            said = f"{self.path}: could not store a reply: {exc}"
            warnings.warn(said, CacheWarning, stacklevel=2)


def _digest(value: bytes) -> str:
    return hashlib.sha256(value).hexdigest()


_STORES: dict[tuple[int, int, Path], ResponseStore] = {}
_LOCK = threading.Lock()


def open_store(config: CacheConfig) -> ResponseStore:
    """This process's (and thread's) connection to the store of ``config``."""
    path = Path(config.folder) / CACHE_FILE
    key = (os.getpid(), threading.get_ident(), path)
    with _LOCK:
        store = _STORES.get(key)
        if store is None:
            store = _STORES[key] = ResponseStore(path)
    return store


def request_key(request: dict[str, Any]) -> str:
    """SHA-256 of the canonical JSON of a request."""
    body = orjson.dumps({"v": KEY_VERSION, **request}, option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(body).hexdigest()


def model_identity(model: Any) -> dict[str, Any]:
    """What of a model decides its replies, without secrets: its own ``cache_identity()``
    where it has one, else its class and LangChain identifying parameters."""
    own = getattr(model, "cache_identity", None)
    if callable(own):
        return public(own())
    params = getattr(model, "_identifying_params", None)
    kind = type(model)
    return public({"class": f"{kind.__module__}.{kind.__qualname__}", "params": dict(params or {})})


def public(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` without fields whose name speaks of a secret, and without secret values."""
    out: dict[str, Any] = {}
    for k, v in data.items():
        if any(w in k.lower() for w in _SECRET_WORDS) or "Secret" in type(v).__name__:
            continue
        out[k] = public(v) if isinstance(v, dict) else v
    return out


def public_url(url: str) -> str:
    """A server URL without user, password or query (which may hold a key)."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def turn_of(data: dict[str, Any]) -> Turn:
    """A stored reply as a :class:`Turn` (raises on a wrong shape)."""
    requests = [(str(i), str(n), a) for i, n, a in data["requests"]]
    usage = {str(k): int(v) for k, v in dict(data["usage"]).items()}
    message = data.get("message")
    if message is not None and not isinstance(message, dict):
        raise TypeError("its message is not an object")
    return Turn(data["content"], requests, usage, message=message, cache_hit=True)


def stored(turn: Turn) -> dict[str, Any]:
    """A reply as it is stored."""
    return {
        "content": turn.content,
        "requests": [list(r) for r in turn.requests],
        "usage": dict(turn.usage_metadata),
        "message": turn.message,
    }


@dataclass(frozen=True)
class CacheUse:
    """The cache, and what of an episode goes into its keys besides the conversation."""

    config: CacheConfig
    trial: int = 0
    seed: int = 0


@dataclass
class CachedConversation:
    """A conversation whose replies come from the cache when the same request was
    answered before; a hit goes into the wrapped conversation's history as a reply would."""

    inner: Conversation
    use: CacheUse
    model: dict[str, Any]
    tools: list[dict[str, Any]] | None
    transcript: list[dict[str, Any]] = field(default_factory=list)

    def _key(self) -> str:
        return request_key(
            {
                "model": self.model,
                "tools": self.tools,
                "messages": self.transcript,
                "trial": self.use.trial,
                "seed": self.use.seed,
            }
        )

    async def next_turn(self) -> Turn:
        key = self._key()
        store = open_store(self.use.config)
        data = store.get(key) if self.use.config.reads else None
        if data is not None:
            turn = turn_of(data)
            self.inner.take(turn)
        else:
            turn = await self.inner.next_turn()
            turn.cache_hit = False
            if self.use.config.writes:
                store.put(key, stored(turn))
        self.transcript.append(
            {
                "role": "assistant",
                "content": turn.content,
                "tool_calls": [list(r) for r in turn.requests],
            }
        )
        return turn

    def take(self, turn: Turn) -> None:
        self.inner.take(turn)

    def tool_result(self, call_id: str, text: str) -> None:
        self.inner.tool_result(call_id, text)
        self.transcript.append({"role": "tool", "tool_call_id": call_id, "content": text})


def cached(
    model: Any,
    tools: list[dict[str, Any]] | None,
    opening: list[dict[str, Any]],
    use: CacheUse | None,
) -> Conversation:
    """The :func:`~agentproc.agents.conversation.conversation` with ``model``, through the
    cache ``use`` names (the conversation itself when there is none, or it is off)."""
    chat = conversation(model, tools, opening)
    if use is None or use.config.mode == "off":
        return chat
    return CachedConversation(chat, use, model_identity(model), tools, [dict(m) for m in opening])
