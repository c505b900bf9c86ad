"""llama-cpp-python underneath the local model (the ``llama-cpp`` extra): loading
once per process, and a greedy decoding loop constrained by a JSON-schema grammar,
repeatable whatever ran before."""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from langchain_core.exceptions import ContextOverflowError

from agentproc.agents.runtimes import Completion, Sampling, default_threads
from agentproc.errors import ConfigError

NAME = "llama-cpp"
INSTALL_HINT = "install the llama-cpp extra: pip install 'agentproc[llama-cpp]'"


@lru_cache(maxsize=64)
def grammar(schema_json: str) -> str:
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    try:
        return str(json_schema_to_gbnf(schema_json))
    except Exception as e:  # the converter raises bare Exceptions on unsupported keywords
        raise ConfigError(f"the tool schemas cannot be turned into a grammar: {e}") from e


# --- the loaded model ------------------------------------------------------------


@dataclass
class _Runtime:
    """One loaded model: not thread-safe, so every use holds ``lock``."""

    llama: Any
    lock: threading.Lock
    format_chat: Callable[..., Any]
    n_vocab: int


_RUNTIMES: dict[tuple[str, int, int], _Runtime] = {}
_LOAD_LOCK = threading.Lock()


@atexit.register
def _close_all() -> None:
    # Free the models while llama.cpp's bindings still exist: left to the garbage
    # collector at interpreter exit, Llama.__del__ finds them gone and prints a traceback.
    while _RUNTIMES:
        _, rt = _RUNTIMES.popitem()
        with contextlib.suppress(Exception):
            rt.llama.close()


def load(path: Path, n_ctx: int, n_threads: int | None = None) -> _Runtime:
    """The model loaded from ``path`` with ``n_ctx``, loaded once per process."""
    threads = n_threads or default_threads()
    key = (str(path), n_ctx, threads)
    with _LOAD_LOCK:
        if key not in _RUNTIMES:
            try:
                import llama_cpp
                from llama_cpp.llama_chat_format import Jinja2ChatFormatter
            except ImportError as e:
                raise ConfigError(f"the local model needs llama-cpp-python; {INSTALL_HINT}") from e
            llama = llama_cpp.Llama(
                model_path=str(path),
                n_ctx=n_ctx,
                n_threads=threads,
                n_threads_batch=threads,
                seed=0,
                verbose=False,
            )

            def special(token: int) -> str:
                return bytes(llama.detokenize([token], special=True)).decode()

            formatter = Jinja2ChatFormatter(
                template=llama.metadata["tokenizer.chat_template"],
                eos_token=special(llama.token_eos()),
                bos_token=special(llama.token_bos()),
            )
            _RUNTIMES[key] = _Runtime(llama, threading.Lock(), formatter, llama.n_vocab())
        return _RUNTIMES[key]


# --- decoding --------------------------------------------------------------------


def _chunks(tokens: list[int], size: int) -> list[list[int]]:
    """Split into batches of at most ``size``, none of them a lone token."""
    out: list[list[int]] = []
    i = 0
    while i < len(tokens):
        step = size - 1 if len(tokens) - i - size == 1 else size
        out.append(tokens[i : i + step])
        i += step
    return out


def _sync(llama: Any, prompt: list[int]) -> int:
    """Evaluate ``prompt``, reusing the cached prefix; returns how many tokens were reused."""
    cached = llama.input_ids[: llama.n_tokens].tolist()
    n = 0
    for a, b in zip(cached, prompt, strict=False):
        if a != b:
            break
        n += 1
    # Re-evaluate at least two tokens so that no cache entry comes from a lone token.
    n = max(0, min(n, len(prompt) - 2))
    llama.n_tokens = n
    for chunk in _chunks(prompt[n:], llama.n_batch):
        llama.eval(chunk)
    return n


class _Decoder:
    """Greedy (or seeded) decoding under a grammar, checking the chosen token first.

    Applying the grammar to the whole vocabulary at every token (what
    ``create_chat_completion(response_format=...)`` does) about doubles the time
    per token with ~100 tools. Here the unconstrained choice is checked first and
    the grammar is applied to the whole vocabulary only when it rejects that
    choice, as llama.cpp's own ``common_sampler`` does; for greedy decoding the
    result is the same. Our own loop also lets :func:`_sync` decide what the
    cache keeps.
    """

    def __init__(self, rt: _Runtime, grammar: str, sampling: Sampling) -> None:
        import llama_cpp
        import numpy as np

        self.lib, self.np = llama_cpp, np
        self.rt = rt
        self.vocab = llama_cpp.llama_model_get_vocab(rt.llama.model)
        self.grammar = llama_cpp.llama_sampler_init_grammar(self.vocab, grammar.encode(), b"root")
        if not self.grammar:
            raise ConfigError("llama.cpp rejected the grammar built from the tool schemas")
        self.chain = None
        if sampling.temperature > 0:
            self.chain = llama_cpp.llama_sampler_chain_init(
                llama_cpp.llama_sampler_chain_default_params()
            )
            for s in (
                llama_cpp.llama_sampler_init_top_k(sampling.top_k),
                llama_cpp.llama_sampler_init_temp(sampling.temperature),
                llama_cpp.llama_sampler_init_dist(sampling.seed),
            ):
                llama_cpp.llama_sampler_chain_add(self.chain, s)
        dtype = np.dtype([("id", np.intc), ("logit", np.single), ("p", np.single)], align=True)
        self.all = np.zeros(rt.n_vocab, dtype=dtype)
        self.one = np.zeros(1, dtype=dtype)

    def close(self) -> None:
        self.lib.llama_sampler_free(self.grammar)
        if self.chain is not None:
            self.lib.llama_sampler_free(self.chain)

    def _apply(self, sampler: Any, data: Any) -> int:
        """Run ``sampler`` over ``data`` in place; returns the selected index."""
        arr = self.lib.llama_token_data_array(
            data=data.ctypes.data_as(self.lib.llama_token_data_p),
            size=len(data),
            selected=-1,
            sorted=False,
        )
        self.lib.llama_sampler_apply(sampler, ctypes.byref(arr))
        return int(arr.selected)

    def _choose(self, logits: Any, constrained: bool) -> int:
        np = self.np
        data = self.all
        data["id"] = np.arange(len(logits), dtype=np.intc)
        data["logit"] = logits
        data["p"] = 0
        if constrained:
            self._apply(self.grammar, data)
        if self.chain is None:
            return int(np.argmax(data["logit"]))
        return int(data["id"][self._apply(self.chain, data)])

    def _allowed(self, token: int, logit: float) -> bool:
        self.one["id"], self.one["logit"], self.one["p"] = token, logit, 0
        self._apply(self.grammar, self.one)
        return bool(self.np.isfinite(self.one["logit"][0]))

    def next_token(self) -> int:
        llama = self.rt.llama
        ptr = self.lib.llama_get_logits_ith(llama.ctx, -1)
        logits = self.np.ctypeslib.as_array(ptr, shape=(self.rt.n_vocab,))
        if self.chain is None:
            token = int(self.np.argmax(logits))
        else:
            token = self._choose(logits, constrained=False)
        if not self._allowed(token, float(logits[token])):
            token = self._choose(logits, constrained=True)
        self.lib.llama_sampler_accept(self.grammar, token)
        if self.chain is not None:
            self.lib.llama_sampler_accept(self.chain, token)
        return token

    def is_end(self, token: int) -> bool:
        return bool(self.lib.llama_vocab_is_eog(self.vocab, token))


def complete(
    rt: _Runtime, turns: list[dict[str, str]], schema_json: str, sampling: Sampling
) -> Completion:
    """One reply to ``turns`` that satisfies the JSON schema ``schema_json``."""
    gbnf = grammar(schema_json)
    with rt.lock:
        return _complete(rt, turns, gbnf, sampling)


def _complete(
    rt: _Runtime, turns: list[dict[str, str]], gbnf: str, sampling: Sampling
) -> Completion:
    llama = rt.llama
    text = rt.format_chat(messages=turns).prompt
    prompt = llama.tokenize(text.encode(), add_bos=False, special=True)
    if len(prompt) + sampling.max_tokens > llama.n_ctx():
        raise ContextOverflowError(
            f"the conversation needs {len(prompt)} + {sampling.max_tokens} tokens but n_ctx is "
            f"{llama.n_ctx()}; raise n_ctx or set describe_tools=False"
        )
    decoder = _Decoder(rt, gbnf, sampling)
    out: list[int] = []
    finish = "length"
    try:
        start = time.perf_counter()
        cached = _sync(llama, prompt)
        evaluated = time.perf_counter()
        while len(out) < sampling.max_tokens:
            if out:
                llama.eval(out[-1:])
            token = decoder.next_token()
            if decoder.is_end(token):
                finish = "stop"
                break
            out.append(token)
        done = time.perf_counter()
    finally:
        decoder.close()
        # Forget the generated tokens: their cache entries were computed one at a time.
        llama.n_tokens = min(llama.n_tokens, len(prompt))
    reply = bytes(llama.detokenize(out)).decode("utf-8", errors="replace")
    prompt_ms, decode_ms = (evaluated - start) * 1e3, (done - evaluated) * 1e3
    return Completion(reply.strip(), len(prompt), len(out), cached, finish, prompt_ms, decode_ms)
