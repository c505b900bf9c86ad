"""A credential in a call or a text reply is cut out before the episode runs and is labelled:
the run file stores what ran, says what was cut, and replay and relabel find what the run
found. A short key leaves every call as it came."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

import pytest
from helpers import tiny_scenario

from agentproc.analysis import label_record, replay_record
from agentproc.runs import EpisodeSession, RunWriter, read_run
from agentproc.runs.records import episode_record
from agentproc.runs.redact import REDACTED, secret_env, secret_value

LONG = "5551234567890123"  # a credential of digits, long enough not to occur by chance
TEXT_REPLY = "S3 = 5.000\nS4 = 16.000\nS5 = 12.000\nS6 = 3.000\nAnswer: 3"


@pytest.fixture(autouse=True)
def no_secrets_from_other_tests(monkeypatch: pytest.MonkeyPatch) -> None:
    module = importlib.import_module("agentproc.runs.redact")  # the package has redact()
    monkeypatch.setattr(module, "_values", set())
    monkeypatch.setattr(module, "_key_envs", set())
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def stored(session: EpisodeSession, tmp_path: Path) -> dict[str, Any]:
    """The finished episode as a run file holds it: written, and read back whole."""
    path = tmp_path / "run.jsonl"
    with RunWriter(path) as writer:
        writer.write(episode_record(session.finish("answer")))
    assert LONG not in path.read_text()
    [(_, rec)] = read_run(path)
    return dict(rec)


def agree(rec: dict[str, Any]) -> None:
    """Replay and relabel find the labels and verdict the run stored."""
    scenario = tiny_scenario()
    replayed = replay_record(rec, scenario, "run")  # type: ignore[arg-type]
    assert replayed.differences == []
    labels, metrics = label_record(rec, "run")  # type: ignore[arg-type]
    assert [lab.to_json() for lab in labels] == rec["labels"]
    assert metrics["verdict"] == rec["verdict"]


@pytest.mark.parametrize(
    "arguments",
    [
        f'{{"S1": {LONG}, "S2": 3}}',  # a number: executed, it would have run the step
        f'{{"S1": 2, "S2": 3, "note": "the key is {LONG}"}}',
        f'{{"S1": 2, "S2": 3, "note": "{LONG}"',  # not JSON
    ],
    ids=["number", "note", "not-json"],
)
def test_a_credential_in_a_call_is_cut_before_it_runs(tmp_path, arguments):
    secret_value(LONG)
    s = EpisodeSession(tiny_scenario(), "mine")
    rec = s.call("step_1", arguments)
    assert LONG not in rec.arguments and REDACTED in rec.arguments
    assert rec.refused == "invalid_arguments"  # "[REDACTED]" is no value of a step
    assert s.monitor.labels[0].kind.value == "invalid_arguments"
    s.call("step_1", '{"S1": 2, "S2": 3}')
    record = stored(s, tmp_path)
    assert record["redacted"] == {"calls": [0]}
    assert record["calls"][0]["arguments"] == rec.arguments
    agree(record)


def test_a_credential_as_a_tool_name_is_cut_before_it_runs(tmp_path):
    secret_value(LONG)
    s = EpisodeSession(tiny_scenario(), "mine")
    rec = s.call(f"tool_{LONG}", "{}")
    assert rec.name == f"tool_{REDACTED}" and rec.refused == "unknown_tool"
    assert LONG not in rec.result
    agree(stored(s, tmp_path))


@pytest.mark.parametrize("key", ["1", "ok", "12345678", "2.000"])
def test_a_short_key_leaves_a_call_as_it_came(tmp_path, monkeypatch, key):
    monkeypatch.setenv("OPENAI_API_KEY", key)
    secret_env("OPENAI_API_KEY")
    s = EpisodeSession(tiny_scenario(), "mine")
    arguments = '{"S1": 2.000, "S2": 3, "note": "ok 1 12345678"}'
    rec = s.call("step_1", arguments)
    assert rec.arguments == arguments and s.redacted == []
    rec = s.call("step_1", '{"S1": 2, "S2": 3}')
    assert rec.value == 5000
    assert "redacted" not in stored(s, tmp_path)


def test_a_credential_in_a_text_reply_is_cut_before_it_is_labelled(tmp_path):
    secret_value(LONG)
    s = EpisodeSession(tiny_scenario(), "mine", mode="text")
    s.read_text(f"{TEXT_REPLY}\nS1 = {LONG}")
    assert s.output is not None and LONG not in s.output
    record = stored(s, tmp_path)
    assert record["redacted"] == {"output": True}
    labels, metrics = label_record(record, "run")  # type: ignore[arg-type]
    assert [lab.to_json() for lab in labels] == record["labels"]
    assert metrics["verdict"] == record["verdict"]


def test_relabel_reads_an_argument_redacted_after_its_call_ran_as_a_value_of_no_step(tmp_path):
    # A call stored with an argument cut out after it ran (the step's value recorded):
    # relabelled, never refused as no call, and labelled a wrong argument of no step.
    s = EpisodeSession(tiny_scenario(), "mine")
    s.call("step_1", '{"S1": 2, "S2": 3}')
    record = stored(s, tmp_path)
    record["calls"][0]["arguments"] = json.dumps({"S1": REDACTED, "S2": 3})
    labels, _ = label_record(record, "run")  # type: ignore[arg-type]
    wrong = [lab.to_json() for lab in labels if lab.call_index == 0]
    assert wrong == [
        {
            "kind": "wrong_argument",
            "call_index": 0,
            "step": 1,
            "cause": "other",
            "argument": "S1",
            "expected": 2,
            "got": REDACTED,
        }
    ]
