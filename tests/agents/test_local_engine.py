"""The engine of the local model: xllamacpp by name or ``auto``; the dropped llama-cpp
engine refused, naming xllamacpp; how many threads it gets."""

from __future__ import annotations

import importlib.util

import pytest

from agentproc.agents import local, xllama_runtime
from agentproc.errors import ConfigError


def installed(monkeypatch: pytest.MonkeyPatch, *present: str) -> None:
    """Make only ``present`` of the engine packages look installed."""
    real = importlib.util.find_spec

    def find_spec(name: str) -> object:
        if name in {"xllamacpp", "llama_cpp"}:
            return object() if name in present else None
        return real(name)

    monkeypatch.setattr(local.importlib.util, "find_spec", find_spec)


@pytest.mark.parametrize("name", ["auto", "xllamacpp"])
def test_auto_and_xllamacpp_are_accepted_when_xllamacpp_is_installed(
    monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    installed(monkeypatch, "xllamacpp")
    local.check_engine(name)


@pytest.mark.parametrize("name", ["auto", "xllamacpp"])
def test_a_missing_engine_names_the_local_extra(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    installed(monkeypatch)
    with pytest.raises(ConfigError, match=r"needs xllamacpp; .*pip install 'agentproc\[local\]'"):
        local.check_engine(name)


def test_the_dropped_llama_cpp_engine_names_its_replacement(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    installed(monkeypatch, "xllamacpp", "llama_cpp")  # even with llama-cpp-python installed
    with pytest.raises(ConfigError, match=r"no longer supported.*xllamacpp.*agentproc\[local\]"):
        local.check_engine("llama-cpp")


def test_an_unknown_engine_lists_the_valid_names() -> None:
    with pytest.raises(ConfigError, match="unknown local runtime 'vllm'") as info:
        local.check_engine("vllm")
    assert "auto, xllamacpp, llama-cpp" in str(info.value)


@pytest.mark.parametrize(("cores", "threads"), [(1, 1), (2, 1), (8, 7)])
def test_threads_leave_one_core_to_the_rest_of_the_process(
    monkeypatch: pytest.MonkeyPatch, cores: int, threads: int
) -> None:
    monkeypatch.setattr(xllama_runtime.os, "sched_getaffinity", lambda pid: set(range(cores)))
    assert xllama_runtime.default_threads() == threads
