"""A response cache: a model's reply to an exact request, kept in SQLite and served again.

Every model agent (``openai:MODEL``, ``local``, any LangChain chat model) talks to the
harness through one :class:`~agentproc.agents.conversation.Conversation`;
:class:`CachedConversation` wraps it, so one cache serves every kind of model in tool
and text mode. A request's key is the SHA-256 of a canonical JSON (sorted keys, no
spaces) of everything that changes a reply:

- for ``openai:`` models, the request body as sent (model, messages, tools, every
  sampling and length option such as ``max_completion_tokens``, ``extra_body``) and the
  endpoint (scheme, host, port, path, and query parameters that are not credentials);
  for other models their identity (``cache_identity()``, else class and LangChain
  parameters: the ``local`` model's file, sampling options and length limit), the tools
  offered and the conversation so far;
- the trial index and the run's seed, so that the trials of a scenario stay
  independent samples.

Only the credential fields :data:`CREDENTIAL_FIELDS` are left out, by exact name: the
body's own fields (a tool parameter or message that happens to be called ``password``
stays), and a model identity's at any depth, with its secret-typed values (``SecretStr``).
An API key, a header or the organisation never enters a key. A reply is redacted by value
(:func:`~agentproc.runs.redact.redact_values`) before it is stored. The store is
:mod:`agentproc.agents.cache_store`.
"""

from __future__ import annotations

import hashlib
import os
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import orjson

from agentproc.agents.cache_store import (
    CACHE_FILE,
    CacheWarning,
    ResponseStore,
    check_store,
    open_store,
)
from agentproc.agents.conversation import Conversation, Turn, conversation
from agentproc.runs.redact import QUERY_CREDENTIALS, redact_data, redact_values

__all__ = ["CACHE_FILE", "CacheWarning", "ResponseStore", "check_store"]

CacheMode = Literal["read", "write", "readwrite", "off"]
"""``read``: serve hits, store nothing; ``write``: ask the model, store every reply;
``readwrite``: both; ``off``: no cache."""
KEY_VERSION = 2
"""Part of every key: a change of what keys hold starts a fresh cache."""
CREDENTIAL_FIELDS = frozenset(
    {"api_key", "openai_api_key", "api-key", "x-api-key", "authorization", "organization"}
    | {"openai_organization", "default_headers", "headers", "default_query", "password"}
    | {"client_secret", "access_token", "http_client", "http_async_client"}
)
"""The request and model fields left out of a key, by exact name: the credentials, and
the clients and headers that carry them. Nothing else is."""


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


def request_key(request: dict[str, Any]) -> str:
    """SHA-256 of the canonical JSON of a request."""
    body = orjson.dumps({"v": KEY_VERSION, **request}, option=orjson.OPT_SORT_KEYS, default=_plain)
    return hashlib.sha256(body).hexdigest()


def _plain(value: Any) -> Any:
    """A value orjson cannot serialise itself, as it is sent (a pydantic model) or named:
    by its ``repr``, or its type where the ``repr`` holds an address (which would change
    the key in every process)."""
    if hasattr(value, "model_dump"):
        return value.model_dump()
    shown = repr(value)
    return f"<{type(value).__qualname__}>" if " at 0x" in shown else shown


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
    """``data`` without the fields :data:`CREDENTIAL_FIELDS` names (at any depth) and
    without secret-typed values (``SecretStr``); every other field is kept."""
    out: dict[str, Any] = {}
    for k, v in data.items():
        if str(k).lower() in CREDENTIAL_FIELDS or "Secret" in type(v).__name__:
            continue
        out[k] = public(v) if isinstance(v, dict) else v
    return out


def endpoint(url: str, query: dict[str, str] | None = None) -> dict[str, Any]:
    """The server a request goes to: scheme, host, port (the scheme's when none is
    written), path, and the query parameters that are not credentials
    (:data:`~agentproc.runs.redact.QUERY_CREDENTIALS`); never a user or password."""
    parts = urllib.parse.urlsplit(url)
    scheme = parts.scheme.lower()
    pairs = urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
    pairs += list((query or {}).items())
    return {
        "scheme": scheme,
        "host": (parts.hostname or "").lower(),
        "port": parts.port or {"http": 80, "https": 443}.get(scheme),
        "path": parts.path.rstrip("/"),
        "query": sorted((k, v) for k, v in pairs if k.lower() not in QUERY_CREDENTIALS),
    }


def turn_of(data: dict[str, Any]) -> Turn:
    """A stored reply as a :class:`Turn` (raises on a wrong shape)."""
    requests = [(str(i), str(n), a) for i, n, a in data["requests"]]
    usage = {str(k): int(v) for k, v in dict(data["usage"]).items()}
    message = data.get("message")
    if message is not None and not isinstance(message, dict):
        raise TypeError("its message is not an object")
    turn = Turn(data["content"], requests, usage, message=message, cache_hit=True)
    turn.redacted = frozenset(int(j) for j in data.get("redacted", ()))
    turn.redacted_content = bool(data.get("redacted_content"))
    return turn


def stored(turn: Turn) -> dict[str, Any]:
    """A reply as it is stored: redacted by value as a run file's messages are, a call's
    name and arguments as the episode session cuts them before they run (a hit then runs
    what the first run ran)."""
    content = turn.content
    calls = [{"id": str(i), "name": n, "arguments": a} for i, n, a in turn.requests]
    clean = _redacted_calls(calls)
    cut = [j for j, (c, r) in enumerate(zip(calls, clean, strict=True)) if _cut(c, r)]
    text = redact_data(content) if isinstance(content, str) else redact_values(content)
    return {
        "content": text,
        "requests": [[c["id"], c["name"], c["arguments"]] for c in clean],
        "usage": dict(turn.usage_metadata),
        "message": redact_values(turn.message) if turn.message is not None else None,
        **({"redacted": cut} if cut else {}),
        **({"redacted_content": True} if text != content else {}),
    }


def _redacted_calls(calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Calls redacted where a run file's are (their ``id``, ``name`` and ``arguments``)."""
    redacted: list[dict[str, Any]] = redact_values({"calls": calls})["calls"]
    return redacted


def _cut(call: dict[str, Any], clean: dict[str, Any]) -> bool:
    """Whether redaction changed what runs of a call: its name or its arguments."""
    return bool(call["name"] != clean["name"] or call["arguments"] != clean["arguments"])


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
        request: dict[str, Any] = {"model": self.model}
        body = getattr(self.inner, "request_body", None)
        if callable(body):  # the body as it will be sent, but its own credential fields
            sent: dict[str, Any] = body()
            request["body"] = {k: v for k, v in sent.items() if k.lower() not in CREDENTIAL_FIELDS}
        else:
            request.update(tools=self.tools, messages=self.transcript)
        return request_key({**request, "trial": self.use.trial, "seed": self.use.seed})

    async def next_turn(self) -> Turn:
        key = self._key()
        config = self.use.config
        store = open_store(config.folder, read_only=not config.writes)
        data = store.get(key, turn_of) if config.reads else None
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
