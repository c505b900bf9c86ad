"""xllamacpp underneath the local model: llama.cpp's server linked into the process.

The server is loaded once per process and asked for chat completions directly
(no HTTP round trip); it renders the turns with the model's chat template and
decodes under an llguidance grammar built from the reply schema. The grammar
allows one optional space between JSON tokens.

Determinism. The server keeps the last conversation in its key-value cache and
evaluates only what follows the longest matching prefix. An entry computed for a
lone token differs slightly from the same entry computed in a batch, and two
kinds of entry are computed alone: the tokens the model generated, and the last
prompt token when a prompt is asked for again. So before a request the cache is
cut back, with a one-token request, to entries computed in batches of two or
more prompt tokens (see :func:`_cut_cache`); the same turns then give the same
reply whatever ran before.
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from langchain_core.exceptions import ContextOverflowError

from agentproc.errors import ConfigError


def default_threads() -> int:
    """CPU threads for the model: one fewer than the cores this process may use.

    llama.cpp's threads wait for each other at every layer by spinning, so one of
    them descheduled stalls the rest: the harness's own thread, or any other
    program, would then slow decoding several times over (on a busy two-core
    machine, 2 threads decoded 5-30x slower than 1).
    """
    return max(1, len(os.sched_getaffinity(0)) - 1)


@dataclass(frozen=True)
class Sampling:
    """How one reply is decoded."""

    max_tokens: int
    temperature: float
    top_k: int
    seed: int


@dataclass(frozen=True)
class Completion:
    """One reply of the model, with its token counts."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int
    finish_reason: str


UBATCH = 2048
"""Prompt tokens evaluated in one batch: a suffix longer than this is split, and a
last piece of one token would be a lone entry, so it is kept large."""

Turns = list[dict[str, str]]


@lru_cache(maxsize=64)
def grammar(schema_json: str) -> str:
    """The llguidance grammar for ``schema_json``: JSON with at most one space between tokens."""
    schema = {"x-guidance": {"whitespace_pattern": " ?"}, **json.loads(schema_json)}
    return "%llguidance {}\nstart: %json " + json.dumps(schema)


@dataclass
class _Runtime:
    """One loaded model; ``last`` is the turns of the last request, whose prompt
    and generated tokens the cache holds (``None``: nothing to cut)."""

    server: Any
    n_ctx: int
    lock: threading.Lock = field(default_factory=threading.Lock)
    last: Turns | None = None


_RUNTIMES: dict[tuple[str, int, int], _Runtime] = {}
_LOAD_LOCK = threading.Lock()


def load(path: Path, n_ctx: int, n_threads: int | None = None) -> _Runtime:
    """The model in ``path`` with a context of ``n_ctx``, loaded once per process."""
    threads = n_threads or default_threads()
    key = (str(path), n_ctx, threads)
    with _LOAD_LOCK:
        if key not in _RUNTIMES:
            import xllamacpp

            params = xllamacpp.CommonParams()
            params.model.path = str(path)
            params.n_ctx = n_ctx
            params.n_parallel = 1
            params.n_batch = params.n_ubatch = min(UBATCH, n_ctx)
            params.cpuparams.n_threads = params.cpuparams_batch.n_threads = threads
            params.cache_ram_mib = 0  # no prompt states restored from RAM: only the slot's own
            params.prefill_assistant = False  # an empty assistant turn is a turn (_cut_cache)
            params.warmup = False
            params.verbosity = -1
            params.hostnames = ["127.0.0.1"]
            try:
                server = xllamacpp.Server(params)
            except Exception as e:  # the binding raises RuntimeError with llama.cpp's text
                said = str(e).splitlines()[0] if str(e).strip() else type(e).__name__
                said = f"local model '{path}': xllamacpp could not load it ({said})"
                raise ConfigError(said) from e
            _RUNTIMES[key] = _Runtime(server, n_ctx)
        return _RUNTIMES[key]


def _ask(rt: _Runtime, request: dict[str, Any]) -> dict[str, Any]:
    reply: dict[str, Any] = rt.server.handle_chat_completions(request)
    error = reply.get("error") if isinstance(reply, dict) else None
    if error is not None:
        message = error.get("message", "") if isinstance(error, dict) else str(error)
        kind = error.get("type", "") if isinstance(error, dict) else ""
        if "context" in kind or "context" in message:
            raise ContextOverflowError(
                f"{message}: n_ctx is {rt.n_ctx}; raise n_ctx or set describe_tools=False"
            )
        raise ConfigError(f"xllamacpp refused the request: {message}")
    return reply


def _cut_cache(rt: _Runtime, turns: Turns) -> None:
    """Leave in the cache only entries computed in batches, before ``turns`` is asked.

    If ``turns`` continues the last conversation, the cache holds the model's
    generated tokens after the last prompt: asking for the last turns plus an
    empty assistant turn keeps the prompt and replaces them with the two or more
    tokens that close a turn (a reply is JSON, never such a token). If ``turns``
    is the last conversation again or its beginning, a whole match would
    re-evaluate its last prompt token alone: asking for a conversation whose first
    turn differs cuts the cache back to the template's opening.
    """
    last = rt.last
    if last is None:
        return
    if len(turns) > len(last) and turns[: len(last)] == last:
        probe = [*last, {"role": "assistant", "content": ""}]  # a continuation
    elif last[: len(turns)] == turns:
        # The same conversation again, or its beginning (a new episode of the same
        # scenario): the whole prompt may be in the cache, its last token computed alone.
        first = turns[0]
        probe = [{"role": first["role"], "content": "" if first["content"] else "."}]
    else:
        return  # the match ends inside the last prompt: every entry before it is batched
    _ask(rt, {"messages": probe, "max_tokens": 1, "temperature": 0, "cache_prompt": True})
    rt.last = None


def complete(rt: _Runtime, turns: Turns, schema_json: str, sampling: Sampling) -> Completion:
    """One reply to ``turns`` that satisfies the JSON schema ``schema_json``."""
    request: dict[str, Any] = {
        "messages": turns,
        "grammar": grammar(schema_json),
        "max_tokens": sampling.max_tokens,
        "temperature": sampling.temperature,
        "top_k": sampling.top_k,
        "seed": sampling.seed,
        "cache_prompt": True,
    }
    # Only top-k and temperature; at temperature 0
    # the most likely token that the grammar allows.
    request["samplers"] = ["top_k"] if sampling.temperature <= 0 else ["top_k", "temperature"]
    with rt.lock:
        _cut_cache(rt, turns)
        reply = _ask(rt, request)
        rt.last = [dict(t) for t in turns]
    usage = reply.get("usage", {})
    prompt, generated = int(usage.get("prompt_tokens", 0)), int(usage.get("completion_tokens", 0))
    choice = reply["choices"][0]
    finish = str(choice.get("finish_reason") or "stop")
    if finish == "length" and prompt + sampling.max_tokens > rt.n_ctx:
        raise ContextOverflowError(
            f"the conversation needs {prompt} + {sampling.max_tokens} tokens but n_ctx is "
            f"{rt.n_ctx}; raise n_ctx or set describe_tools=False"
        )
    if finish == "stop":
        generated = max(0, generated - 1)  # the end-of-turn token is counted; it is not text
    cached = int(usage.get("prompt_tokens_details", {}).get("cached_tokens", 0))
    text = str(choice["message"].get("content") or "")
    return Completion(text.strip(), prompt, generated, cached, finish)
