"""The demo endpoint's reading of a request and its profiles' choices, without HTTP."""

from __future__ import annotations

import pytest

from agentproc import load_scenario
from agentproc.agents.demo import PROFILES, make_profile, read_turn
from agentproc.agents.demo.profiles import draw
from agentproc.errors import ConfigError

PINNED = "scenarios/pinned/n5-L3-r1_10-mixed-decimal-0000.json"


def opening(prompt_extra: str = "") -> dict:
    scenario = load_scenario(PINNED)
    return {
        "model": "demo",
        "tools": scenario.tools,
        "messages": [
            {"role": "system", "content": "You execute procedures." + prompt_extra},
            {"role": "user", "content": scenario.prompt},
        ],
    }


def test_a_turn_reads_inputs_steps_and_expressions_from_the_request():
    turn = read_turn(opening())
    assert turn.steps == [f"step_{k}" for k in range(1, 6)]
    assert turn.finish == "submit_answer"
    assert turn.known == {"S1": 2.447, "S2": 8.42}
    assert turn.decimal and not turn.done
    assert turn.head_value("step_1") == 10.867  # S3 = S1 + S2, worked out without the tool


def test_tool_results_become_known_values_and_the_last_one_the_answer():
    body = opening()
    call = {"id": "c1", "type": "function", "function": {"name": "step_5", "arguments": "{}"}}
    body["messages"] += [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "S7 = 4.5"},
    ]
    turn = read_turn(body)
    assert turn.known["S7"] == 4.5 and turn.last_output == 4.5 and turn.done == {"step_5"}


def test_faithful_calls_the_first_step_with_the_inputs():
    reply = make_profile("faithful")(read_turn(opening()), "key")
    assert reply == {"tool_call": {"name": "step_1", "arguments": {"S1": 2.447, "S2": 8.42}}}


def test_prompt_sensitive_reads_the_cue_in_the_wording():
    careless = [make_profile("prompt-sensitive", s)(read_turn(opening()), "k") for s in range(20)]
    told = [
        make_profile("prompt-sensitive", s)(read_turn(opening(" Do not skip a step.")), "k")
        for s in range(20)
    ]
    assert all(r["tool_call"]["name"] == "step_1" for r in told)
    assert any(r["tool_call"]["name"] != "step_1" for r in careless)


def test_a_draw_is_fixed_by_its_seed_and_keys():
    assert draw(0, "a", "step_1") == draw(0, "a", "step_1")
    assert draw(0, "a", "step_1") != draw(1, "a", "step_1")
    assert 0 <= draw(5, "x") < 1


def test_an_unknown_profile_names_the_valid_ones():
    with pytest.raises(ConfigError, match=r"unknown demo profile 'lazy'.*faithful, skipper"):
        make_profile("lazy")
    assert PROFILES == ("faithful", "skipper", "sloppy", "prompt-sensitive")


def test_a_request_whose_messages_are_content_parts_is_read_as_their_text():
    from agentproc.agents.demo.reading import conversation_key, read_turn

    parts = [{"type": "text", "text": "Inputs: S1 = 2, "}, {"type": "text", "text": "S2 = 3"}]
    body = {"messages": [{"role": "user", "content": parts}]}
    assert conversation_key(body) == "Inputs: S1 = 2, S2 = 3"
    assert read_turn(body).known == {"S1": 2, "S2": 3}
