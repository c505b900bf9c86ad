"""A response cache keyed by everything that changes a reply: the request body as sent
(length limits included, at any depth), the endpoint, the trial and the seed; only the
named credential fields left out; replies redacted before they are stored."""

from __future__ import annotations

import base64
import importlib
from pathlib import Path
from typing import Any

import pytest
from helpers import cli, records

from agentproc.agents.cache import (
    CACHE_FILE,
    CacheConfig,
    CachedConversation,
    CacheUse,
    cached,
)
from agentproc.agents.completions import OpenAIChat
from agentproc.cli import main
from tests.fakes.openai_server import ScriptedServer

OPENING = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
TOOLS = [{"type": "function", "function": {"name": "step_1", "parameters": {"type": "object"}}}]


def key_of(tmp_path: Path, trial: int = 0, seed: int = 0, **options: Any) -> str:
    """The key of the first request of a conversation with an ``openai:`` model."""
    given = {"model": "m", "api_key": "k", "base_url": "http://127.0.0.1:9/v1", **options}
    use = CacheUse(CacheConfig(tmp_path), trial, seed)
    chat = cached(OpenAIChat(**given), TOOLS, OPENING, use)
    assert isinstance(chat, CachedConversation)
    return chat._key()


@pytest.mark.parametrize(
    "change",
    [
        {"max_tokens": 7},
        {"model_kwargs": {"max_completion_tokens": 7}},
        {"model_kwargs": {"max_tokens": 7}},
        {"extra_body": {"thinking": {"type": "enabled", "budget_tokens": 1024}}},
        {"extra_body": {"top_k": 3}},
        {"temperature": 0.7},
        {"stop": ["END"]},
        {"model": "n"},
        {"base_url": "http://127.0.0.1:10/v1"},
        {"base_url": "https://127.0.0.1:9/v1"},
        {"base_url": "http://localhost:9/v1"},
        {"base_url": "http://127.0.0.1:9/v2"},
        {"base_url": "http://127.0.0.1:9/v1?api-version=2024-06-01"},
    ],
)
def test_every_field_that_changes_a_reply_changes_the_key(tmp_path, change):
    assert key_of(tmp_path, **change) != key_of(tmp_path)


def test_the_trial_and_the_seed_change_the_key(tmp_path):
    assert len({key_of(tmp_path), key_of(tmp_path, trial=1), key_of(tmp_path, seed=1)}) == 3


@pytest.mark.parametrize(
    "change",
    [
        {"api_key": "another-key-entirely"},
        {"base_url": "http://ann:pw@127.0.0.1:9/v1"},
        {"base_url": "http://127.0.0.1:9/v1?api_key=abc&sig=xyz"},
        {"base_url": "http://127.0.0.1:9/v1/"},
        {"organization": "org-1"},
        {"default_headers": {"X-Request-Tag": "t"}},
        {"extra_body": {"api_key": "in-the-body"}},
    ],
)
def test_only_credentials_are_left_out_of_the_key(tmp_path, change):
    assert key_of(tmp_path, **change) == key_of(tmp_path)


def test_the_key_follows_the_body_as_sent_turn_by_turn(tmp_path):
    use = CacheUse(CacheConfig(tmp_path))
    model = OpenAIChat(model="m", api_key="k", base_url="http://127.0.0.1:9/v1")
    chat = cached(model, TOOLS, OPENING, use)
    first = chat._key()  # type: ignore[attr-defined]
    chat.tool_result("call_0", "S1 = 4")
    assert chat._key() != first  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("keys") / "s"
    assert (
        main(["generate", "--steps", "3", "--lookback", "1", "--count", "2", "--out", str(out)])
        == 0
    )
    return out


def test_a_length_limit_is_never_served_the_replies_of_an_uncapped_run(capsys, suite, tmp_path):
    cache = tmp_path / "cache"
    with ScriptedServer() as srv:
        argv = ["run", suite, "--agent", "openai:fake", "--base-url", srv.base_url]
        assert cli(capsys, *argv, "--out", tmp_path / "a.jsonl", "--cache", cache)[0] == 0
        uncapped = len(srv.completions)
        capped = tmp_path / "b.jsonl"
        code, _, err = cli(capsys, *argv, "--out", capped, "--cache", cache, "--max-tokens", "7")
        assert code == 0, err
        sent = srv.completions[uncapped:]
    assert len(sent) == uncapped  # every request went to the model
    assert all(r.body["max_completion_tokens"] == 7 for r in sent)
    assert not any(c["cache_hit"] for r in records(capped) for c in r["model_calls"])


KEY = "sk-echoKey0123456789"


@pytest.fixture
def no_secrets_from_other_tests(monkeypatch: pytest.MonkeyPatch) -> None:
    module = importlib.import_module("agentproc.runs.redact")  # the package has redact()
    monkeypatch.setattr(module, "_values", set())
    monkeypatch.setattr(module, "_key_envs", set())


@pytest.mark.usefixtures("no_secrets_from_other_tests")
def test_credentials_a_server_echoes_are_never_stored(capsys, suite, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    b64 = base64.b64encode(KEY.encode()).decode()
    echo = f"you sent {KEY} ({b64}) and Authorization: Bearer {KEY}"
    cache = tmp_path / "cache"
    with ScriptedServer([{"content": echo}] * 2) as srv:
        argv = [
            "run",
            suite,
            "--agent",
            "openai:fake",
            "--base-url",
            srv.base_url,
            "--cache",
            cache,
        ]
        code, _, err = cli(capsys, *argv, "--out", tmp_path / "a.jsonl", "--mode", "text")
        assert code == 0, err
    stored = b"".join(p.read_bytes() for p in cache.iterdir())
    assert b"[REDACTED]" in stored  # the echo was stored, without its secrets
    for form in (KEY, KEY.removeprefix("sk-"), b64, b64.rstrip("=")):
        assert form.encode() not in stored
    assert (cache / CACHE_FILE).exists()


def test_a_tool_parameter_named_like_a_credential_is_part_of_the_key(tmp_path):
    def key(name: str) -> str:
        tools = [{"type": "function", "function": {"name": "f", "parameters": {
            "type": "object", "properties": {name: {"type": "number"}}}}}]  # fmt: skip
        model = OpenAIChat(model="m", api_key="k", base_url="http://127.0.0.1:9/v1")
        chat = cached(model, tools, OPENING, CacheUse(CacheConfig(tmp_path)))
        return chat._key()  # type: ignore[attr-defined]

    assert key("password") != key("headers")
