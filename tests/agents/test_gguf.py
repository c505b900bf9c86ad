"""A GGUF file's header checked before a run (``--agent local:PATH.gguf``), and weights
the engine cannot load refused before the first episode.

The files are made here, a few bytes each: no model weights are needed but for the
one test that loads the packaged model.
"""

from __future__ import annotations

import importlib.util
import os
import random
from pathlib import Path

import pytest
from helpers import cli

from agentproc.agents import xllama_runtime
from agentproc.agents.gguf import HEADER, NotGguf, read_header
from agentproc.agents.spec import AgentSpec
from agentproc.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
PINNED = ROOT / "scenarios" / "pinned" / "n5-L3-r1_10-mixed-decimal-0000.json"
needs_engine = pytest.mark.skipif(
    importlib.util.find_spec("xllamacpp") is None, reason="the local extra is not installed"
)


def header(version: int = 3, tensors: int = 1, kvs: int = 1) -> bytes:
    return HEADER.pack(b"GGUF", version, tensors, kvs)


NOISE = b"GGUF" + random.Random(7).randbytes(200)
"""The magic bytes, then noise."""
LOOKS_RIGHT = header() + bytes(64)
"""A header that reads well over a body no engine loads."""


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (NOISE, "not a GGUF model: GGUF version "),
        (b"GGUF" + bytes(10), "not a GGUF model: it ends inside its 24-byte header"),
        (b"PK\x03\x04" + bytes(60), "not a GGUF model: it does not start with the GGUF magic"),
        (header(version=1) + bytes(64), "GGUF version 1 (llama.cpp reads versions 2 and 3)"),
        (header(tensors=0) + bytes(64), "its header declares no tensor"),
        (header(tensors=2**63) + bytes(64), "declares 9223372036854775808 tensors and 1 metadata"),
        (header(tensors=3, kvs=1) + bytes(70), "more than a file of 94 bytes can hold"),
    ],
    ids=["noise", "cut", "zip", "v1", "no-tensor", "huge-count", "too-many"],
)
def test_a_header_that_is_no_gguf_models_says_what_is_wrong(tmp_path, content, said):
    path = tmp_path / "m.gguf"
    path.write_bytes(content)
    with pytest.raises(NotGguf) as caught:
        read_header(path)
    assert said in str(caught.value)


def test_a_header_that_reads_well_gives_its_counts(tmp_path):
    path = tmp_path / "m.gguf"
    path.write_bytes(header(tensors=2, kvs=3) + bytes(2 * 24 + 3 * 13))
    got = read_header(path)
    assert (got.version, got.tensors, got.kvs, got.size) == (3, 2, 3, 24 + 87)


def test_a_folder_and_a_fifo_are_not_files_and_the_fifo_is_never_opened(tmp_path):
    (tmp_path / "dir.gguf").mkdir()
    os.mkfifo(tmp_path / "pipe.gguf")  # opening it to read would block: never opened
    for name, kind in [("dir.gguf", "a folder"), ("pipe.gguf", "a FIFO")]:
        with pytest.raises(NotGguf, match=rf"^not a file \({kind}\)$"):
            read_header(tmp_path / name)
    with pytest.raises(FileNotFoundError):
        read_header(tmp_path / "missing.gguf")


def run_with(capsys, tmp_path: Path, weights: Path, *extra: str) -> tuple[int, str, Path]:
    out = tmp_path / "run.jsonl"
    code, _, err = cli(capsys, "run", PINNED, "--agent", f"local:{weights}", "--out", out, *extra)
    return code, err, out


@needs_engine
@pytest.mark.parametrize(
    ("make", "said"),
    [
        (lambda p: p.write_bytes(NOISE), "not a GGUF model: GGUF version "),
        (lambda p: p.mkdir(), "not a file (a folder)"),
        (os.mkfifo, "not a file (a FIFO)"),
    ],
    ids=["noise", "folder", "fifo"],
)
def test_run_refuses_weights_that_are_no_gguf_model_in_one_line_before_the_run(
    capsys, tmp_path, make, said
):
    weights = tmp_path / "x.gguf"
    make(weights)
    code, err, out = run_with(capsys, tmp_path, weights)
    assert code == 2, err
    (line,) = err.splitlines()
    assert line.startswith(f"agentproc: error: local model '{weights}': {said}")
    assert not out.exists()


@needs_engine
def test_weights_the_engine_cannot_load_are_one_error_before_the_first_episode(capsys, tmp_path):
    weights = tmp_path / "looks-right.gguf"
    weights.write_bytes(LOOKS_RIGHT)
    code, err, out = run_with(capsys, tmp_path, weights)
    assert code == 2, err  # not 3: no episode ran, so none errored
    (line,) = err.splitlines()
    assert line.startswith(f"agentproc: error: local model '{weights}': xllamacpp could not load")
    assert not out.exists()


@needs_engine
def test_the_spec_loads_the_model_but_its_check_does_not(tmp_path, monkeypatch):
    """Over workers the parent only checks (each worker loads its own model)."""
    weights = tmp_path / "looks-right.gguf"
    weights.write_bytes(LOOKS_RIGHT)
    loaded: list[Path] = []

    def load(path: Path, n_ctx: int, n_threads: int | None = None) -> None:
        loaded.append(path)
        raise ConfigError(f"cannot load {path}")

    monkeypatch.setattr(xllama_runtime, "load", load)
    spec = AgentSpec(f"local:{weights}")
    spec.check()
    assert loaded == []
    with pytest.raises(ConfigError, match="cannot load"):
        spec.model()
    assert loaded == [weights]


def test_the_header_of_the_packaged_model_reads():
    from agentproc.agents.local import model_path

    try:
        path = model_path()
    except ConfigError as exc:
        pytest.skip(str(exc))
    got = read_header(path)
    assert got.version in (2, 3) and got.tensors > 0 and got.kvs > 0
