"""Choosing the engine of the local model: by name, or the first one installed."""

from __future__ import annotations

import importlib.util
from types import ModuleType

import pytest

from agentproc.agents import runtimes
from agentproc.errors import ConfigError

PACKAGES = {"xllamacpp", "llama_cpp"}


def installed(monkeypatch: pytest.MonkeyPatch, *present: str) -> None:
    """Make only ``present`` of the engine packages look installed."""
    real = importlib.util.find_spec

    def find_spec(name: str) -> object:
        if name in PACKAGES:
            return object() if name in present else None
        return real(name)

    monkeypatch.setattr(runtimes.importlib.util, "find_spec", find_spec)


@pytest.mark.parametrize("name", ["auto", "xllamacpp"])
def test_auto_and_xllamacpp_are_the_xllamacpp_engine(
    monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    installed(monkeypatch, "xllamacpp")
    module = runtimes.engine(name)
    assert isinstance(module, ModuleType)
    assert module.NAME == "xllamacpp"
    assert callable(module.load) and callable(module.complete)


@pytest.mark.parametrize("name", ["auto", "xllamacpp"])
def test_a_missing_engine_names_the_local_extra(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    installed(monkeypatch)
    with pytest.raises(ConfigError, match=r"needs xllamacpp; .*pip install 'agentproc\[local\]'"):
        runtimes.engine(name)


def test_the_dropped_llama_cpp_engine_names_its_replacement(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    installed(monkeypatch, "xllamacpp", "llama_cpp")  # even with llama-cpp-python installed
    with pytest.raises(ConfigError, match=r"no longer supported.*xllamacpp.*agentproc\[local\]"):
        runtimes.engine("llama-cpp")


def test_an_unknown_engine_lists_the_valid_names() -> None:
    with pytest.raises(ConfigError, match="unknown local runtime 'vllm'") as info:
        runtimes.engine("vllm")
    assert "auto, xllamacpp, llama-cpp" in str(info.value)


@pytest.mark.parametrize(("cores", "threads"), [(1, 1), (2, 1), (8, 7)])
def test_threads_leave_one_core_to_the_rest_of_the_process(
    monkeypatch: pytest.MonkeyPatch, cores: int, threads: int
) -> None:
    monkeypatch.setattr(runtimes.os, "sched_getaffinity", lambda pid: set(range(cores)))
    assert runtimes.default_threads() == threads
