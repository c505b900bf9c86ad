"""The response cache: a re-run makes no model call, trials stay independent, no secret is
stored, a corrupted entry is never served; against a real server on 127.0.0.1."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import get_args

import pytest

from agentproc.agents.cache import (
    CACHE_FILE,
    CacheConfig,
    CacheMode,
    CacheUse,
    CacheWarning,
    cached,
    default_cache_dir,
    model_identity,
    request_key,
)
from agentproc.agents.completions import OpenAIChat
from agentproc.cli import main
from tests.fakes.openai_server import ScriptedServer
from tests.helpers import cli, records

KEY = "sk-cacheK3y9"
USER, PASSWORD = "cacheUser7", "cachePw8x"


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("cache") / "s"
    argv = ["generate", "--steps", "3", "--lookback", "1", "--count", "2", "--out", str(out)]
    assert main(argv) == 0
    return out


@pytest.fixture
def server():
    with ScriptedServer() as srv:  # the oracle: a perfect agent
        yield srv


def run(capsys, suite, server, out: Path, *more: object) -> tuple[int, str, str]:
    argv = ["run", suite, "--agent", "openai:fake", "--base-url", server.base_url, "--out", out]
    return cli(capsys, *argv, *more)


def labels(path: Path) -> list[object]:
    return [(r["scenario_id"], r.get("trial", 0), r["labels"], r["verdict"]) for r in records(path)]


def hits(path: Path) -> list[bool]:
    return [c["cache_hit"] for r in records(path) for c in r["model_calls"]]


def test_a_rerun_of_an_unchanged_suite_makes_no_model_call(capsys, suite, server, tmp_path):
    cache = tmp_path / "cache"
    code, _, err = run(capsys, suite, server, tmp_path / "a.jsonl", "--cache", cache)
    assert code == 0, err
    first = len(server.completions)
    assert first > 0 and not any(hits(tmp_path / "a.jsonl"))
    code, _, err = run(capsys, suite, server, tmp_path / "b.jsonl", "--cache", cache)
    assert code == 0, err
    assert len(server.completions) == first  # not one request more
    assert labels(tmp_path / "b.jsonl") == labels(tmp_path / "a.jsonl")
    assert all(hits(tmp_path / "b.jsonl")) and len(hits(tmp_path / "b.jsonl")) == first
    usage = [r["usage"] for r in records(tmp_path / "b.jsonl")]
    assert all(u["cache_hits"] == u["model_calls"] and u["model_seconds"] == 0 for u in usage)


def test_trials_are_keyed_apart_so_a_second_trial_asks_the_model(capsys, suite, server, tmp_path):
    out = tmp_path / "t.jsonl"
    code, _, _ = run(capsys, suite, server, out, "--cache", tmp_path / "c", "--trials", "2")
    assert code == 0
    assert not any(hits(out))
    per_trial = {t: sum(1 for r in records(out) if r.get("trial", 0) == t) for t in (0, 1)}
    assert per_trial == {0: 2, 1: 2}


def test_without_cache_no_cache_hit_is_recorded(capsys, suite, server, tmp_path):
    assert run(capsys, suite, server, tmp_path / "n.jsonl")[0] == 0
    rec = records(tmp_path / "n.jsonl")[0]
    assert "cache_hit" not in rec["model_calls"][0] and "cache_hits" not in rec["usage"]


def test_no_secret_enters_the_store(capsys, suite, server, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    host = server.base_url.split("://", 1)[1]
    for i, base in enumerate((server.base_url, f"http://{USER}:{PASSWORD}@{host}")):
        cache = tmp_path / f"cache{i}"
        argv = ["run", suite, "--agent", "openai:fake", "--base-url", base, "--cache", cache]
        code, _, err = cli(capsys, *argv, "--out", tmp_path / f"s{i}.jsonl")
        assert code == 0, err
        auth = server.completions[-1].headers["authorization"]
        stored = b"".join(p.read_bytes() for p in cache.iterdir())
        assert len(stored) > 0
        for secret in (KEY, USER, PASSWORD, auth, auth.split()[1]):
            assert secret.encode() not in stored
    assert KEY in server.completions[0].headers["authorization"]  # the server did get it


def test_a_corrupted_entry_is_skipped_with_a_warning_and_replaced(capsys, suite, server, tmp_path):
    cache = tmp_path / "cache"
    assert run(capsys, suite, server, tmp_path / "a.jsonl", "--cache", cache)[0] == 0
    first = len(server.completions)
    with sqlite3.connect(cache / CACHE_FILE) as db:
        (key,) = db.execute("SELECT key FROM responses LIMIT 1").fetchone()
        db.execute("UPDATE responses SET value = ? WHERE key = ?", (b'{"content": "evil"}', key))
    with pytest.warns(CacheWarning, match="skipped the corrupted cache entry"):
        code, _, _ = run(capsys, suite, server, tmp_path / "b.jsonl", "--cache", cache)
    assert code == 0
    # asked again, not served (the fresh reply's call ids differ, so the requests after
    # it in that episode are new requests too)
    again = len(server.completions)
    assert again > first
    assert labels(tmp_path / "b.jsonl") == labels(tmp_path / "a.jsonl")
    assert run(capsys, suite, server, tmp_path / "c.jsonl", "--cache", cache)[0] == 0
    assert len(server.completions) == again  # the fresh replies were stored


def test_read_mode_stores_nothing_and_write_mode_serves_nothing(capsys, suite, server, tmp_path):
    cache = tmp_path / "cache"
    code, _, err = run(
        capsys, suite, server, tmp_path / "r.jsonl", "--cache", cache, "--cache-mode", "read"
    )
    assert code == 2 and "no response cache here" in err  # read never creates a store
    assert not (cache / CACHE_FILE).exists() and not server.completions
    run(capsys, suite, server, tmp_path / "w.jsonl", "--cache", cache, "--cache-mode", "write")
    n = len(server.completions)
    run(capsys, suite, server, tmp_path / "w2.jsonl", "--cache", cache, "--cache-mode", "write")
    assert n > 0 and len(server.completions) == 2 * n
    assert not any(hits(tmp_path / "w2.jsonl"))
    before = (cache / CACHE_FILE).read_bytes()
    run(capsys, suite, server, tmp_path / "r2.jsonl", "--cache", cache, "--cache-mode", "read")
    assert len(server.completions) == 2 * n and all(hits(tmp_path / "r2.jsonl"))
    assert (cache / CACHE_FILE).read_bytes() == before


def test_cache_mode_off_uses_no_cache(capsys, suite, server, tmp_path):
    cache = tmp_path / "cache"
    run(capsys, suite, server, tmp_path / "o.jsonl", "--cache", cache, "--cache-mode", "off")
    assert not cache.exists()
    assert "cache_hit" not in records(tmp_path / "o.jsonl")[0]["model_calls"][0]


def test_workers_share_the_cache(capsys, suite, server, tmp_path):
    cache = tmp_path / "cache"
    code, _, err = run(
        capsys, suite, server, tmp_path / "a.jsonl", "--cache", cache, "--workers", "2"
    )
    assert code == 0, err
    n = len(server.completions)
    code, _, err = run(
        capsys, suite, server, tmp_path / "b.jsonl", "--cache", cache, "--workers", "2"
    )
    assert code == 0, err
    assert len(server.completions) == n and all(hits(tmp_path / "b.jsonl"))


@pytest.mark.parametrize(
    ("agent", "said"),
    [
        (
            "sim:oracle",
            "--cache keeps the replies of a model agent (local, openai:MODEL); "
            "sim:oracle is not one",
        ),
    ],
)
def test_cache_with_an_agent_that_makes_no_model_call_is_refused(
    capsys, suite, tmp_path, agent, said
):
    code, out, err = cli(
        capsys, "run", suite, "--agent", agent, "--out", tmp_path / "x.jsonl", "--cache", tmp_path
    )
    assert (code, out) == (2, "")
    assert said in err


def test_a_cache_folder_that_is_a_file_is_refused(capsys, suite, server, tmp_path):
    (tmp_path / "f").write_text("")
    code, _, err = run(capsys, suite, server, tmp_path / "x.jsonl", "--cache", tmp_path / "f")
    assert code == 2 and "--cache: is a file: it must be a folder" in err


def test_the_default_folder_is_under_the_user_cache_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert default_cache_dir() == tmp_path / "agentproc"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert default_cache_dir() == Path.home() / ".cache" / "agentproc"


def test_the_key_changes_with_trial_model_and_messages_only():
    base = {"model": {"model": "m"}, "tools": None, "messages": [], "trial": 0, "seed": 0}
    key = request_key(base)
    assert request_key(dict(base)) == key
    for change in ({"trial": 1}, {"model": {"model": "n"}}, {"messages": [{"role": "user"}]}):
        assert request_key({**base, **change}) != key


def test_an_openai_model_identity_holds_no_key_header_or_query():
    model = OpenAIChat(
        model="m",
        api_key=KEY,
        base_url=f"http://{USER}:{PASSWORD}@127.0.0.1:9/v1?key={KEY}",
        default_headers={"X-Token": KEY},
        temperature=0.5,
    )
    identity = model_identity(model)
    server = {"scheme": "http", "host": "127.0.0.1", "port": 9, "path": "/v1", "query": []}
    assert identity["endpoint"] == server
    assert identity["model"] == "m" and identity["temperature"] == 0.5
    assert KEY not in repr(identity) and USER not in repr(identity)


def test_the_embedded_model_goes_through_the_same_cache(tmp_path):
    from agentproc.agents.conversation import LangChainChat, Turn
    from agentproc.agents.local import LocalChatModel

    model = LocalChatModel(max_tokens=16)
    assert model_identity(model)["kind"] == "local"
    use = CacheUse(CacheConfig(tmp_path))
    opening = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
    chat = cached(model, [], opening, use)
    turn = Turn("", [("call_0", "step_1", '{"S1": 1}')], {})
    chat.take(turn)  # a hit goes into the LangChain history as the model's reply
    assert isinstance(chat.inner, LangChainChat)  # type: ignore[attr-defined]
    (reply,) = chat.inner.history[2:]  # type: ignore[attr-defined]
    assert reply.tool_calls[0]["args"] == {"S1": 1}


def test_report_counts_the_cache_hits(capsys, suite, server, tmp_path):
    cache = tmp_path / "cache"
    run(capsys, suite, server, tmp_path / "a.jsonl", "--cache", cache)
    run(capsys, suite, server, tmp_path / "b.jsonl", "--cache", cache)
    n = len(server.completions)
    code, out, _ = cli(capsys, "report", tmp_path / "b.jsonl")
    assert code == 0
    said = f"response cache: {n} of {n} model calls answered from the cache (left out of model"
    assert said in " ".join(out.split())
    code, out, _ = cli(capsys, "report", tmp_path / "a.jsonl", "--json")
    import json

    assert json.loads(out)["agents"]["openai:fake"]["cache"] == {"model_calls": n, "cache_hits": 0}


def test_text_mode_goes_through_the_same_cache(capsys, suite, server, tmp_path):
    cache = tmp_path / "cache"
    run(capsys, suite, server, tmp_path / "a.jsonl", "--cache", cache, "--mode", "text")
    n = len(server.completions)
    run(capsys, suite, server, tmp_path / "b.jsonl", "--cache", cache, "--mode", "text")
    assert n == 2 and len(server.completions) == n
    assert labels(tmp_path / "b.jsonl") == labels(tmp_path / "a.jsonl")
    assert hits(tmp_path / "b.jsonl") == [True, True]


def test_cache_mode_alone_uses_the_user_cache_folder(capsys, suite, server, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    code, _, _ = run(capsys, suite, server, tmp_path / "a.jsonl", "--cache-mode", "readwrite")
    assert code == 0 and (tmp_path / "xdg" / "agentproc" / CACHE_FILE).exists()


def test_the_cache_mode_option_offers_every_cache_mode_and_no_other(capsys):
    code, _, err = cli(capsys, "run", "suite", "--cache-mode", "?")
    modes = ", ".join(map(repr, get_args(CacheMode)))
    assert code == 2 and f"(choose from {modes})" in err
