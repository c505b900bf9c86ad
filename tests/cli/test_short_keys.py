"""Whatever the key, a run file stays readable and replays unchanged: short keys and URL
credentials of one character against the real ``agentproc serve-demo`` on 127.0.0.1, and
query-string credentials kept out of every artefact."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import cli, records

from tests.fakes.openai_server import ScriptedServer


@pytest.fixture(autouse=True)
def no_secrets_from_other_tests(monkeypatch: pytest.MonkeyPatch) -> None:
    module = importlib.import_module("agentproc.runs.redact")  # the package has redact()
    monkeypatch.setattr(module, "_values", set())
    monkeypatch.setattr(module, "_key_envs", set())
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


@pytest.fixture(scope="module")
def demo() -> Iterator[str]:
    """``agentproc serve-demo`` on a free port: its base URL."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentproc", "serve-demo", "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        yield first[first.index("http://") :].split()[0]
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from agentproc.cli import main

    out = tmp_path_factory.mktemp("keys") / "suite"
    assert (
        main(["generate", "--steps", "3", "--lookback", "1", "--count", "2", "--out", str(out)])
        == 0
    )
    return out


_VOLATILE = {"usage", "model_calls", "messages"}  # timings, and the server's own call ids


def data(path: Path) -> list[dict[str, Any]]:
    """What a run file records of its episodes, timings and server-made ids left out."""
    return sorted(
        (
            {k: v for k, v in r.items() if k not in _VOLATILE and k != "metrics"}
            for r in records(path)
        ),
        key=lambda r: r["scenario_id"],
    )


def contents(path: Path) -> list[Any]:
    return [[m.get("content") for m in r["messages"]] for r in records(path)]


def run_and_replay(capsys, suite: Path, base_url: str, out: Path) -> None:
    code, _, err = cli(
        capsys, "run", suite, "--agent", "openai:demo", "--base-url", base_url, "--out", out
    )
    assert code == 0, err
    text = out.read_text()
    assert "[REDACTED]" not in text
    for line in text.splitlines():
        assert json.loads(line)["schema_version"] == 2  # field names untouched
    code, shown, err = cli(capsys, "replay", out)
    assert code == 0, err
    assert "0 differ from the recording" in " ".join(shown.split())
    code, _, err = cli(capsys, "report", out)
    assert code == 0, err


@pytest.mark.parametrize("key", ["a", "x", "e", "1", "ok", "na", "id", "true", "123"])
def test_a_short_key_never_changes_a_run_file(capsys, suite, demo, tmp_path, monkeypatch, key):
    plain = tmp_path / "plain.jsonl"
    run_and_replay(capsys, suite, demo, plain)
    monkeypatch.setenv("OPENAI_API_KEY", key)
    keyed = tmp_path / "keyed.jsonl"
    run_and_replay(capsys, suite, demo, keyed)
    assert data(keyed) == data(plain)
    assert contents(keyed) == contents(plain)


@pytest.mark.parametrize(("user", "password"), [("u", "p"), ("e", "a"), ("1", "2")])
def test_url_credentials_of_one_character_never_change_a_run_file(
    capsys, suite, demo, tmp_path, user, password
):
    plain = tmp_path / "plain.jsonl"
    run_and_replay(capsys, suite, demo, plain)
    creds = demo.replace("http://", f"http://{user}:{password}@")
    keyed = tmp_path / "keyed.jsonl"
    run_and_replay(capsys, suite, creds, keyed)
    assert data(keyed) == data(plain)
    assert contents(keyed) == contents(plain)


QK, SIG = "q7Key", "s1g"  # short: only their place in a URL gives them away


def test_query_string_credentials_reach_no_artefact(capsys, suite, tmp_path):
    echoed = f"http://127.0.0.1/v1/chat/completions?api_key={QK}&sig={SIG}&api-version=2"
    replies = [
        {"status": 500, "message": f"failed for {echoed}"},
        {"content": f"you called {echoed}"},
    ]
    with ScriptedServer(replies) as srv:
        base = f"{srv.base_url}?api_key={QK}&sig={SIG}&api-version=2"
        out = tmp_path / "run.jsonl"
        argv = ["run", suite, "--agent", "openai:fake", "--base-url", base, "--out", out]
        code, o1, e1 = cli(capsys, *argv, "--retries", "0", "--limit", "1", "--trials", "2")
        sent = srv.requests[0].path
    assert f"api_key={QK}" in sent  # the credential really was sent
    assert code == 3, e1
    texts = [o1, e1, out.read_text()]
    for command in (["report", out], ["report", out, "--json"], ["replay", out, "--json"]):
        texts += cli(capsys, *command)[1:]
    everything = "\n".join(texts)
    assert "api_key=[REDACTED]&sig=[REDACTED]&api-version=2" in everything
    assert QK not in everything and f"sig={SIG}" not in everything


@pytest.mark.parametrize(
    "url",
    ["ftp://u:pw@127.0.0.1/v1?api_key=q7Key&n=1", "http://127.0.0.1:99999/v1?access_token=q7Key"],
)
def test_a_refused_base_url_is_echoed_without_its_credentials(capsys, suite, tmp_path, url):
    argv = ["run", suite, "--agent", "openai:m", "--base-url", url, "--out", tmp_path / "r.jsonl"]
    code, out, err = cli(capsys, *argv)
    assert code == 2 and "[REDACTED]" in err
    assert QK not in out + err and ":pw@" not in err


def test_a_base_url_whose_password_breaks_its_parse_is_echoed_without_it(capsys, suite, tmp_path):
    # a "/" in the password makes the rest read as a path and "pa" as the port: the
    # reason urllib gives quotes it, so neither the reason nor the URL's userinfo is shown
    url = "http://bob:pa/55w0rdLONGsecret@127.0.0.1:9/v1"
    argv = ["run", suite, "--agent", "openai:m", "--base-url", url, "--out", tmp_path / "r.jsonl"]
    code, out, err = cli(capsys, *argv)
    assert code == 2 and "not a valid URL" in err and "[REDACTED]@127.0.0.1" in err
    assert "55w0rd" not in out + err and "'pa'" not in err and "bob" not in err
