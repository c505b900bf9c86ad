"""A harness error names where the agent's own code raised it: redacted, capped."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from agentproc.runs.frames import MAX_FRAMES, own_frames
from agentproc.runs.redact import REDACTED, secret_value
from agentproc.runs.session import harness_error

USER = """\
def deep(n):
    if n == 0:
        raise KeyError("S7")
    return deep(n - 1)


def leaky():
    token = "{secret}"; raise ValueError("bad " + token)
"""


@pytest.fixture(autouse=True)
def in_the_users_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def load(tmp_path: Path, secret: str = "x"):
    path = tmp_path / "user_code.py"
    path.write_text(USER.format(secret=secret))
    spec = importlib.util.spec_from_file_location("user_code", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def raised(fn, *args) -> BaseException:
    try:
        fn(*args)
    except Exception as exc:
        return exc
    raise AssertionError("did not raise")


def test_the_frames_are_the_users_file_and_line_innermost_last(tmp_path):
    exc = raised(load(tmp_path).deep, 1)
    frames = own_frames(exc)
    assert frames[-2:] == (
        "user_code.py:4 in deep: return deep(n - 1)",
        'user_code.py:3 in deep: raise KeyError("S7")',
    )  # named from the current folder, the user's folder here


def test_a_deep_stack_keeps_only_the_innermost_frames(tmp_path):
    frames = own_frames(raised(load(tmp_path).deep, 50))
    assert len(frames) == MAX_FRAMES
    assert ":3 in deep" in frames[-1]


def test_a_secret_in_the_message_or_the_source_line_is_redacted(tmp_path):
    secret = "sk-" + "q" * 30
    secret_value(secret)
    error = harness_error(raised(load(tmp_path, secret).leaky))
    written = json.dumps(error.to_json())
    assert secret not in written
    assert REDACTED in error.frames[-1] and REDACTED in error.message


def test_the_run_file_form_has_the_type_and_the_frames(tmp_path):
    error = harness_error(raised(load(tmp_path).deep, 0))
    form = error.to_json()
    assert form["kind"] == "harness" and form["type"] == "KeyError"
    assert form["message"] == "KeyError: 'S7'"
    assert form["frames"][-1] == 'user_code.py:3 in deep: raise KeyError("S7")'


def test_library_and_agentproc_frames_are_not_the_agents():
    exc = raised(json.loads, "{")
    frames = own_frames(exc)
    assert frames and not any("json" in f or "agentproc/" in f for f in frames)
