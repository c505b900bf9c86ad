"""``agentproc serve-demo``: prints where it listens and how to use it, answers as an
OpenAI server does, stops cleanly, and refuses a port it cannot take."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import urllib.request

import pytest
from helpers import cli

from agentproc.agents.demo import PROFILES
from agentproc.cli.serve_demo import PROFILE_CHOICES


def start(*argv: str) -> tuple[subprocess.Popen[str], list[str]]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentproc", "serve-demo", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    return proc, [proc.stdout.readline().rstrip("\n") for _ in range(3)]


def test_it_prints_its_url_and_how_to_use_it_answers_and_stops_on_ctrl_c():
    proc, lines = start("--profile", "skipper", "--port", "0", "--seed", "3")
    try:
        assert lines[0].startswith("demo endpoint (skipper, seed 3) listening on http://127.0.0.1:")
        url = lines[0].rsplit(" ", 1)[1]
        assert lines[1] == (
            f"use it: agentproc run SUITE --agent openai:demo --base-url {url} --out RUN.jsonl"
        )
        assert lines[2] == "stop it with Ctrl-C"
        with urllib.request.urlopen(f"{url}/models", timeout=10) as resp:
            assert json.load(resp)["data"][0]["id"] == "demo"
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=20)
    assert proc.returncode == 0
    assert err == "demo endpoint stopped\n"


def test_it_stops_cleanly_on_sigterm_as_kill_sends():
    proc, _ = start("--port", "0")
    proc.terminate()
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 0 and err == "demo endpoint stopped\n"


def test_a_port_in_use_is_one_line_naming_the_option(capsys):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, out, err = cli(capsys, "serve-demo", "--port", port)
    assert code == 2 and out == ""
    assert err.startswith(f"agentproc: error: --port {port}: cannot listen on 127.0.0.1 (")
    assert err.count("\n") == 1


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--profile", "lazy"], "invalid choice: 'lazy'"),
        (["--port", "70000"], "a port is 0 to 65535 (not 70000)"),
        (["--port", "http"], "expected a port number, not 'http'"),
        (["--seed", "x"], "invalid int value: 'x'"),
    ],
)
def test_bad_options_are_refused_in_one_line(capsys, argv, message):
    code, _, err = cli(capsys, "serve-demo", *argv)
    assert code == 2 and message in err and err.count("\n") == 1


def test_the_parser_offers_every_profile_the_package_has():
    assert PROFILE_CHOICES == PROFILES
