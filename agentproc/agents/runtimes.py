"""The engine that runs the local model, and what it is asked and answers.

One engine runs a GGUF file in process: ``xllamacpp`` (the ``local`` extra),
llama.cpp's own server linked into the process and installed from a wheel, with
replies constrained by llguidance (:mod:`agentproc.agents.xllama_runtime`:
``load(path, n_ctx, n_threads)`` and ``complete(rt, turns, schema, sampling)``).
The ``llama-cpp`` engine (llama-cpp-python, which pip compiles from source) was
dropped: naming it is an error that names xllamacpp instead.
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from types import ModuleType
from typing import Literal, get_args

from agentproc.errors import ConfigError, unknown_key

RuntimeName = Literal["auto", "xllamacpp", "llama-cpp"]
"""How :class:`~agentproc.agents.local.LocalChatModel` picks its engine."""

INSTALL_HINT = "install the local extra: pip install 'agentproc[local]'"

DROPPED = (
    "the llama-cpp runtime (llama-cpp-python) is no longer supported: the local model "
    "runs on xllamacpp (runtime 'xllamacpp' or 'auto'); " + INSTALL_HINT
)


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
    prompt_ms: float = 0.0
    """Time spent evaluating the prompt tokens that were not cached."""
    decode_ms: float = 0.0
    """Time spent generating the reply."""


def engine(name: str) -> ModuleType:
    """The module that drives engine ``name`` (``auto`` and ``xllamacpp`` are the same).

    Raises:
        ConfigError: the name is unknown or ``llama-cpp`` (dropped: the message names
            xllamacpp), or xllamacpp is not installed.
    """
    if name not in get_args(RuntimeName):
        raise unknown_key("local runtime", name, list(get_args(RuntimeName)))
    if name == "llama-cpp":
        raise ConfigError(DROPPED)
    if importlib.util.find_spec("xllamacpp") is None:
        raise ConfigError(f"the local model needs xllamacpp; {INSTALL_HINT}")
    from agentproc.agents import xllama_runtime

    return xllama_runtime
