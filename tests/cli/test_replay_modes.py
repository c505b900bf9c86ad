"""``replay --scenario S.json --messages M.json`` reads every trace kind: tool calls (under a
variant, the calculator's too) and text-mode replies; a trace whose shape does not match the
mode is refused with one line naming the mode to use."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import cli

from agentproc import Cell, generate_procedure, run_sim_episode, scenario_of
from agentproc.labelling import run_text_episode
from agentproc.workflow import Scenario
from agentproc.workflow.variant import load_variant


def scenario() -> Scenario:
    return scenario_of(generate_procedure(Cell(steps=4, lookback=2), 0, 0))


def text_reply(s: Scenario, slip: bool = False) -> str:
    lines = [f"{step.output} = {step.value:.3f}" for step in s.steps]
    if slip:
        lines[1] = f"{s.steps[1].output} = {s.steps[1].value + 1:.3f}"
    return "\n".join([*lines, f"Answer: {s.answer:.3f}"])


def conversation(reply: str) -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": "You are a careful calculator."},
        {"role": "user", "content": "Execute the procedure."},
        {"role": "assistant", "content": reply},
    ]


def files(tmp_path: Path, s: Scenario, messages: Any) -> tuple[Path, Path]:
    (tmp_path / "s.json").write_text(json.dumps(s.model_dump(mode="json")))
    (tmp_path / "m.json").write_text(json.dumps(messages))
    return tmp_path / "s.json", tmp_path / "m.json"


def replay(capsys, tmp_path: Path, s: Scenario, messages: Any, *extra: str):
    s_path, m_path = files(tmp_path, s, messages)
    return cli(capsys, "replay", "--scenario", s_path, "--messages", m_path, *extra)


@pytest.mark.parametrize("slip", [False, True])
def test_a_text_conversation_replays_in_text_mode_as_its_run_labelled_it(capsys, tmp_path, slip):
    s = scenario()
    reply = text_reply(s, slip)
    code, out, _ = replay(capsys, tmp_path, s, conversation(reply), "--mode", "text", "--json")
    data = json.loads(out)
    labels, metrics, _ = run_text_episode(s, reply)
    assert code == 0 and data["mode"] == "text"
    assert data["labels"] == [lab.to_json() for lab in labels]
    assert data["verdict"] == metrics["verdict"] == ("unfaithful_correct" if slip else "faithful")


def test_a_text_conversation_replayed_as_tools_is_refused_naming_text_mode(capsys, tmp_path):
    s = scenario()
    code, out, err = replay(capsys, tmp_path, s, conversation(text_reply(s)))
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert "m.json" in err and "--mode text" in err and "Traceback" not in err


def test_a_tool_trace_replayed_as_text_is_refused_naming_tools_mode(capsys, tmp_path):
    s = scenario()
    ep = run_sim_episode(s, "sim:oracle")
    code, _, err = replay(capsys, tmp_path, s, ep.messages, "--mode", "text")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "m.json" in err and "--mode tools" in err


def test_a_tool_conversation_without_any_reply_still_replays_as_tools(capsys, tmp_path):
    """No tool call and no step line: a tool-mode agent that did nothing, scored as such."""
    s = scenario()
    code, out, _ = replay(capsys, tmp_path, s, conversation("I cannot help."), "--json")
    assert code == 0 and json.loads(out)["verdict"] == "no_answer"


def test_a_calculator_trace_replays_under_its_variant(capsys, tmp_path):
    s = scenario()
    ep = run_sim_episode(s, "sim:wrong_argument", variant=load_variant("calculator"))
    code, out, _ = replay(capsys, tmp_path, s, ep.messages, "--variant", "calculator", "--json")
    data = json.loads(out)
    assert code == 0 and data["differences"] == []
    assert data["labels"] == [lab.to_json() for lab in ep.labels]
    assert data["labels"] and any(lab["kind"] == "wrong_argument" for lab in data["labels"])


def test_a_calculator_trace_without_its_variant_is_no_faithful_episode(capsys, tmp_path):
    s = scenario()
    ep = run_sim_episode(s, "sim:oracle", variant=load_variant("calculator"))
    code, out, _ = replay(capsys, tmp_path, s, ep.messages, "--json")
    assert json.loads(out)["verdict"] != "faithful"
    code, out, _ = replay(capsys, tmp_path, s, ep.messages, "--variant", "calculator", "--json")
    assert code == 0 and json.loads(out)["verdict"] == "faithful"


def test_text_mode_takes_no_variant_that_changes_the_tools(capsys, tmp_path):
    s = scenario()
    argv = ("--mode", "text", "--variant", "calculator")
    code, _, err = replay(capsys, tmp_path, s, conversation(text_reply(s)), *argv)
    assert code == 2 and "--variant" in err and len(err.strip().splitlines()) == 1


def test_mode_and_variant_are_refused_beside_a_run_file(capsys, tmp_path):
    (tmp_path / "r.jsonl").write_text("")
    code, _, err = cli(capsys, "replay", tmp_path / "r.jsonl", "--mode", "text")
    assert code == 2 and "--messages" in err
