"""No credential of a run, of any length, in any artefact, in any form: a real episode
against an OpenAI-compatible server on 127.0.0.1 that echoes them back."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import urllib.parse
from pathlib import Path

from agentproc import Cell, generate_procedure, scenario_of
from tests.fakes.openai_server import ScriptedServer

KEY = "k3yAB7x"  # seven characters each: below the old floor of eight
USER = "u5erQzx"
PASSWORD = "hunt/r2"


def forms(value: str) -> set[str]:
    """``value`` raw, JSON-escaped, percent-encoded and base64-encoded."""
    coded = {enc(value.encode()).decode() for enc in (base64.b64encode, base64.urlsafe_b64encode)}
    return {
        value,
        json.dumps(value)[1:-1],
        urllib.parse.quote(value, safe=""),
        *coded,
        *(c.rstrip("=") for c in coded),
    }


SECRETS = {v: forms(v) for v in (KEY, USER, PASSWORD, f"{USER}:{PASSWORD}")}


def agentproc(*argv: object, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OPENAI_API_KEY": KEY}
    return subprocess.run(
        [sys.executable, "-m", "agentproc", *map(str, argv)],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
    )


def test_a_seven_character_key_user_and_password_reach_no_artefact_in_any_form(tmp_path: Path):
    scenario = scenario_of(generate_procedure(Cell(steps=2, lookback=1), 0, 0))
    (tmp_path / "s.json").write_text(json.dumps(scenario.model_dump(mode="json")))
    echo = " | ".join(sorted(f for fs in SECRETS.values() for f in fs))
    replies = [
        {"status": 500, "echo_headers": True, "message": f"denied {echo}"},
        {"content": f"you sent {echo}"},
    ]
    with ScriptedServer(replies) as srv:
        host = srv.base_url.split("://", 1)[1]
        base = f"http://{USER}:{urllib.parse.quote(PASSWORD, safe='')}@{host}"
        ran = agentproc(
            "run", "s.json", "--agent", "openai:fake", "--base-url", base,
            "--out", "run.jsonl", "--retries", "0", "--trials", "2", cwd=tmp_path,
        )  # fmt: skip
        sent = [r.headers.get("authorization") for r in srv.completions]
    assert ran.returncode == 3, ran.stderr  # one trial errored at the endpoint, one ran
    basic = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
    assert sent == [f"Basic {basic}"] * 2  # the URL's credentials really were sent
    steps = [
        ran,
        agentproc("relabel", "run.jsonl", "--out", "relabelled.jsonl", cwd=tmp_path),
        agentproc("replay", "run.jsonl", "--json", cwd=tmp_path),
        agentproc("report", "run.jsonl", cwd=tmp_path),
        agentproc("report", "run.jsonl", "--json", cwd=tmp_path),
        agentproc("report", "run.jsonl", "--html", "r.html", "--csv", "tables", cwd=tmp_path),
    ]
    artefacts = {f"step {i} {s.args[3]} {o}": text for i, s in enumerate(steps)
                 for o, text in (("stdout", s.stdout), ("stderr", s.stderr))}  # fmt: skip
    for path in tmp_path.rglob("*"):
        if path.is_file() and path.name != "s.json":
            artefacts[str(path.relative_to(tmp_path))] = path.read_text(errors="replace")
    assert "[REDACTED]" in (tmp_path / "run.jsonl").read_text()  # the echoes were there
    leaks = [
        (name, secret, form)
        for name, text in artefacts.items()
        for secret, fs in SECRETS.items()
        for form in fs
        if form in text
    ]
    assert leaks == []
