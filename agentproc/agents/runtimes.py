"""The engines that can run the local model, and how one is chosen.

Two engines run a GGUF file in process, behind the same two functions
(``load(path, n_ctx, n_threads)`` and ``complete(rt, turns, schema, sampling)``):

- ``xllamacpp`` (the ``local`` extra): llama.cpp's own server, linked into the
  process and installed from a wheel; replies are constrained by llguidance;
- ``llama-cpp`` (the ``llama-cpp`` extra): llama-cpp-python, which pip builds
  from source, with our own decoding loop under a GBNF grammar.

``auto`` takes the first of them that is installed, in that order. Under greedy
decoding both give the same calls on the same conversation
(``benchmarks/bench_runtime.py`` compares them episode by episode).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from dataclasses import dataclass
from types import ModuleType
from typing import Literal, get_args

from agentproc.errors import ConfigError, unknown_key

RuntimeName = Literal["auto", "xllamacpp", "llama-cpp"]
"""How :class:`~agentproc.agents.local.LocalChatModel` picks its engine."""

INSTALL_HINT = "install the local extra: pip install 'agentproc[local]'"

_MODULES: dict[str, tuple[str, str]] = {
    "xllamacpp": ("xllamacpp", "agentproc.agents.xllama_runtime"),
    "llama-cpp": ("llama_cpp", "agentproc.agents.llama_runtime"),
}
"""Engine -> (the package it needs, the module that drives it), in ``auto`` order."""


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
    """The module that drives engine ``name`` (``auto`` for the first installed).

    Raises:
        ConfigError: the name is unknown, or its package (any, for ``auto``) is
            not installed.
    """
    if name not in get_args(RuntimeName):
        raise unknown_key("local runtime", name, list(get_args(RuntimeName)))
    if name == "auto":
        for package, module in _MODULES.values():
            if importlib.util.find_spec(package) is not None:
                return importlib.import_module(module)
        raise ConfigError(f"the local model needs xllamacpp; {INSTALL_HINT}")
    package, module = _MODULES[name]
    if importlib.util.find_spec(package) is None:
        extra = "local" if name == "xllamacpp" else name
        raise ConfigError(
            f"the {name} runtime needs the {package} package; "
            f"install the {extra} extra: pip install 'agentproc[{extra}]'"
        )
    return importlib.import_module(module)
