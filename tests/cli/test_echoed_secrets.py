"""A credential an endpoint echoes reaches no artefact, in any form, whatever field it lands
in (a tool call's arguments or name, the assistant's text, an error), while the run stays
one that replay and relabel agree with.

The endpoint is :class:`~tests.fakes.echo_server.CredentialEcho` on 127.0.0.1: the oracle,
quoting the ``Bearer`` key or the ``Basic`` header of a ``user:password@`` base URL (and the
pair and password it encodes) in every reply and in an extra ``note`` argument.
"""

from __future__ import annotations

import base64
import importlib
import json
import urllib.parse
from pathlib import Path

import pytest
from helpers import cli, records

from agentproc.cli import main
from tests.fakes.echo_server import CredentialEcho, forms

KEY = "sk-live-Ab3dEf6hIj9kLm2nOp5qRs8tUv1w"  # 36 characters
PASSWORD = "päss/w0rd-Long"  # non-ASCII and a '/': JSON-escaped and percent-encoded differ
USER = "bob"


@pytest.fixture(autouse=True)
def no_secrets_from_other_tests(monkeypatch: pytest.MonkeyPatch) -> None:
    module = importlib.import_module("agentproc.runs.redact")  # the package has redact()
    monkeypatch.setattr(module, "_values", set())
    monkeypatch.setattr(module, "_key_envs", set())
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("echo") / "suite"
    assert main(["generate", "--steps", "3", "--count", "2", "--out", str(out)]) == 0
    return out


def every_form() -> set[str]:
    """Each credential of the test in every form an echo or an artefact might hold."""
    pair = f"{USER}:{PASSWORD}"
    secrets = [KEY, KEY.removeprefix("sk-"), KEY.removeprefix("sk-live-"), PASSWORD, pair]
    found = {f for s in secrets for f in forms(s)}
    return found | {base64.b64encode(pair.encode()).decode()}


def artefacts(capsys, run: Path, tmp_path: Path) -> list[str]:
    """What every reading command prints of ``run`` and every file it writes."""
    sid = records(run)[0]["scenario_id"]
    html, otel, relabelled = tmp_path / "r.html", tmp_path / "otel.json", tmp_path / "re.jsonl"
    texts = [run.read_text()]
    for argv in (
        ["replay", run],
        ["replay", run, "--json"],
        ["replay", run, "--episode", sid],
        ["report", run],
        ["report", run, "--json"],
        ["report", run, "--html", html],
        ["export", run, "--otel", otel],
        ["relabel", run, "--out", relabelled],
    ):
        code, out, err = cli(capsys, *argv)
        assert code == 0, (argv, err)
        texts += [out, err]
    return texts + [p.read_text() for p in (html, otel, relabelled)]


@pytest.mark.parametrize("faults", [False, True], ids=["echo", "faults"])
@pytest.mark.parametrize("how", ["bearer", "url"])
def test_no_form_of_an_echoed_credential_reaches_an_artefact(
    capsys, suite, tmp_path, monkeypatch, how, faults
):
    run, cached, cache = tmp_path / "run.jsonl", tmp_path / "cached.jsonl", tmp_path / "cache"
    with CredentialEcho(faults) as srv:
        base = srv.base_url
        if how == "bearer":
            monkeypatch.setenv("OPENAI_API_KEY", KEY)
        else:
            base = base.replace(
                "http://", f"http://{USER}:{urllib.parse.quote(PASSWORD, safe='')}@"
            )
        argv = ["run", suite, "--agent", "openai:m", "--base-url", base, "--cache", cache]
        code, out, err = cli(capsys, *argv, "--out", run)
        assert code == 0, err
        sent = srv.completions[0].headers["authorization"]
        # Again through the cache: its first turns are hits (a later request, whose history
        # holds a redacted reply, is no longer the one stored, and asks the endpoint).
        code, out2, err2 = cli(capsys, *argv, "--out", cached)
        assert code == 0, err2
    assert (KEY if how == "bearer" else "Basic ") in sent  # the credential really was sent

    texts = [out, err, out2, err2, *artefacts(capsys, run, tmp_path)]
    texts.append(b"".join(p.read_bytes() for p in cache.iterdir()).decode("utf-8", "replace"))
    leaks = sorted(f for f in every_form() if any(f in t for t in texts))
    assert not leaks

    recs = records(run)
    # The echo was there, and what it landed in was cut before the call ran.
    noted = [c for r in recs for c in r["calls"] if "note" in c["arguments"]]
    assert len(noted) == len(recs) and all("[REDACTED]" in c["arguments"] for c in noted)
    assert all(json.loads(c["arguments"])["note"] for c in noted)  # still JSON
    for r in recs:
        assert r["redacted"]["calls"] == [
            c["index"] for c in r["calls"] if "[REDACTED]" in c["name"] + c["arguments"]
        ]
        assert r["verdict"] != "faithful"  # the refused call counts against the agent
    # A reply served by the cache runs what the first run ran.
    assert any(c.get("cache_hit") for r in records(cached) for c in r["model_calls"])
    kept = ("calls", "labels", "metrics", "redacted")
    assert [[r[k] for k in kept] for r in records(cached)] == [[r[k] for k in kept] for r in recs]


@pytest.mark.parametrize("faults", [False, True], ids=["echo", "faults"])
def test_replay_and_relabel_agree_with_the_stored_labels_of_redacted_calls(
    capsys, suite, tmp_path, monkeypatch, faults
):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    run = tmp_path / "run.jsonl"
    with CredentialEcho(faults) as srv:
        argv = ["run", suite, "--agent", "openai:m", "--base-url", srv.base_url, "--out", run]
        assert cli(capsys, *argv)[0] == 0
    code, out, err = cli(capsys, "replay", run)
    assert code == 0, err
    assert "0 differ from the recording" in " ".join(out.split())
    code, out, _ = cli(capsys, "relabel", run)
    assert code == 0 and " 0 changed" in out, out

    code, out, _ = cli(capsys, "replay", run, "--json")
    replays = [json.loads(line) for line in out.splitlines()]
    for rec, replay in zip(records(run), replays, strict=True):
        marked = [c["index"] for c in replay["calls"] if c.get("redacted")]
        assert marked == rec["redacted"]["calls"]
        for i in marked:
            stored = [lab for lab in rec["labels"] if lab["call_index"] == i]
            assert stored == replay["calls"][i]["labels"]
            assert stored and all(
                lab["kind"] in ("invalid_arguments", "hallucinated_call") for lab in stored
            )
    code, out, _ = cli(capsys, "replay", run, "--episode", records(run)[0]["scenario_id"])
    assert "a credential in the name or arguments was replaced by [REDACTED]" in " ".join(
        out.split()
    )
