"""The response cache's store is checked before the first episode: an unusable one is one
error that names it (exit 2), never a run of errored episodes; ``--cache-mode read`` opens
it read-only and never creates it; ``--out`` never replaces it."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import cli, records

from agentproc.agents.cache import CACHE_FILE
from agentproc.cli import main
from tests.fakes.openai_server import ScriptedServer


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("store") / "s"
    assert main(["generate", "--steps", "2", "--count", "2", "--out", str(out)]) == 0
    return out


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer() as srv:  # the oracle: a perfect agent
        yield srv


def run(capsys, suite: Path, server: ScriptedServer, out: Path, *more: object):
    argv = ["run", suite, "--agent", "openai:fake", "--base-url", server.base_url, "--out", out]
    return cli(capsys, *argv, *more)


@pytest.fixture
def read_only() -> Iterator[object]:
    """Make a path read-only for this process, root included (``chattr +i``)."""
    made: list[Path] = []

    def make(path: Path) -> None:
        if os.geteuid() != 0:
            path.chmod(0o555 if path.is_dir() else 0o444)
        elif (
            shutil.which("chattr") is None
            or subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode
        ):
            pytest.skip("cannot make a file read-only for root here (no chattr +i)")
        made.append(path)

    yield make
    for path in made:
        if os.geteuid() == 0:
            subprocess.run(["chattr", "-i", str(path)], check=True)
        else:
            path.chmod(0o755 if path.is_dir() else 0o644)


def refused(code: int, err: str, store: Path, said: str, server: ScriptedServer, out: Path):
    assert code == 2, err
    assert f"{store}: --cache: {said}" in err, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not server.completions  # no model was asked
    assert not out.exists() or records(out) == []  # no errored episodes


def test_a_store_that_is_garbage_is_one_error_naming_it(capsys, suite, server, tmp_path):
    store = tmp_path / "c" / CACHE_FILE
    store.parent.mkdir()
    store.write_bytes(b"this is not a database, just bytes " * 100)
    out = tmp_path / "run.jsonl"
    code, _, err = run(capsys, suite, server, out, "--cache", store.parent)
    refused(code, err, store, "cannot use it as a response cache", server, out)
    assert store.read_bytes().startswith(b"this is not a database")


def test_a_store_that_is_a_folder_is_one_error_naming_it(capsys, suite, server, tmp_path):
    store = tmp_path / "c" / CACHE_FILE
    store.mkdir(parents=True)
    out = tmp_path / "run.jsonl"
    code, _, err = run(capsys, suite, server, out, "--cache", store.parent)
    refused(code, err, store, "is a folder, not a response cache's store", server, out)


def test_another_sqlite_file_is_not_taken_for_a_store(capsys, suite, server, tmp_path):
    store = tmp_path / "c" / CACHE_FILE
    store.parent.mkdir()
    with sqlite3.connect(store) as db:
        db.execute("CREATE TABLE mine (x)")
    out = tmp_path / "run.jsonl"
    code, _, err = run(capsys, suite, server, out, "--cache", store.parent)
    refused(code, err, store, "is an SQLite file but not a response cache's store", server, out)
    with sqlite3.connect(store) as db:  # nothing was added to it
        tables = {n for (n,) in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert tables == {"mine"}


def test_a_store_of_the_old_keys_is_refused_with_what_to_do(capsys, suite, server, tmp_path):
    store = tmp_path / "c" / CACHE_FILE
    store.parent.mkdir()
    with sqlite3.connect(store) as db:  # a store as the first key version wrote it
        db.execute("CREATE TABLE responses (key TEXT PRIMARY KEY, digest TEXT, value BLOB)")
    out = tmp_path / "run.jsonl"
    code, _, err = run(capsys, suite, server, out, "--cache", store.parent)
    refused(code, err, store, "holds replies under keys of another agentproc version", server, out)
    assert "remove it or give --cache another folder" in err


def test_an_unwritable_store_is_one_error_naming_it(capsys, suite, server, tmp_path, read_only):
    cache = tmp_path / "c"
    assert run(capsys, suite, server, tmp_path / "a.jsonl", "--cache", cache)[0] == 0
    read_only(cache / CACHE_FILE)
    asked = len(server.completions)
    out = tmp_path / "run.jsonl"
    code, _, err = run(capsys, suite, server, out, "--cache", cache)
    assert code == 2 and f"{cache / CACHE_FILE}: --cache: cannot use it" in err, err
    assert len(server.completions) == asked and not out.exists()


def test_read_mode_serves_a_read_only_store_and_changes_nothing(
    capsys, suite, server, tmp_path, read_only
):
    filled = tmp_path / "filled"
    assert run(capsys, suite, server, tmp_path / "a.jsonl", "--cache", filled)[0] == 0
    asked = len(server.completions)
    cache = tmp_path / "c"  # as a CI cache restores it: the one file, in WAL mode
    cache.mkdir()
    with sqlite3.connect(filled / CACHE_FILE) as src, sqlite3.connect(cache / CACHE_FILE) as dst:
        src.backup(dst)
    read_only(cache / CACHE_FILE)
    read_only(cache)
    before = sorted(p.name for p in cache.iterdir()), (cache / CACHE_FILE).read_bytes()
    out = tmp_path / "b.jsonl"
    code, _, err = run(capsys, suite, server, out, "--cache", cache, "--cache-mode", "read")
    assert code == 0, err
    assert len(server.completions) == asked  # every reply from the store
    assert all(c["cache_hit"] for r in records(out) for c in r["model_calls"])
    assert (sorted(p.name for p in cache.iterdir()), (cache / CACHE_FILE).read_bytes()) == before


def test_read_mode_never_creates_a_store(capsys, suite, server, tmp_path):
    out = tmp_path / "run.jsonl"
    code, _, err = run(
        capsys, suite, server, out, "--cache", tmp_path / "c", "--cache-mode", "read"
    )
    refused(code, err, tmp_path / "c" / CACHE_FILE, "no response cache here", server, out)
    assert not (tmp_path / "c").exists()


def test_an_empty_cache_path_is_refused(capsys, suite, server, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, suite, server, tmp_path / "run.jsonl", "--cache", "")
    assert code == 2 and "argument --cache: an empty path" in err
    assert not (tmp_path / CACHE_FILE).exists() and not server.completions


@pytest.mark.parametrize("exists", [True, False])
def test_out_naming_the_store_is_refused(capsys, suite, server, tmp_path, exists):
    cache = tmp_path / "c"
    if exists:
        assert run(capsys, suite, server, tmp_path / "a.jsonl", "--cache", cache)[0] == 0
    before = (cache / CACHE_FILE).read_bytes() if exists else None
    asked = len(server.completions)
    store = cache / CACHE_FILE
    for out in (store, cache / "." / CACHE_FILE):
        code, _, err = run(capsys, suite, server, out, "--cache", cache, "--overwrite")
        assert code == 2, err
        assert f"--out: is the response cache's store {store}" in err
    assert len(server.completions) == asked
    assert (store.read_bytes() if exists else store.exists()) == (before if exists else False)
