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


@pytest.mark.parametrize(
    ("present", "expected"),
    [
        (("xllamacpp", "llama_cpp"), "xllamacpp"),
        (("xllamacpp",), "xllamacpp"),
        (("llama_cpp",), "llama-cpp"),
    ],
)
def test_auto_takes_xllamacpp_first_then_llama_cpp(
    monkeypatch: pytest.MonkeyPatch, present: tuple[str, ...], expected: str
) -> None:
    installed(monkeypatch, *present)
    module = runtimes.engine("auto")
    assert isinstance(module, ModuleType)
    engine_name = module.NAME
    assert engine_name == expected
    assert callable(module.load) and callable(module.complete)


def test_auto_without_any_engine_names_the_local_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    installed(monkeypatch)
    with pytest.raises(ConfigError, match=r"needs xllamacpp; .*pip install 'agentproc\[local\]'"):
        runtimes.engine("auto")


@pytest.mark.parametrize(("name", "extra"), [("xllamacpp", "local"), ("llama-cpp", "llama-cpp")])
def test_a_named_engine_that_is_missing_names_its_extra(
    monkeypatch: pytest.MonkeyPatch, name: str, extra: str
) -> None:
    installed(monkeypatch)
    with pytest.raises(ConfigError, match=rf"pip install 'agentproc\[{extra}\]'"):
        runtimes.engine(name)


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
