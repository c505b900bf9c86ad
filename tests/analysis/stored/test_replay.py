"""Replay: recorded calls re-executed on fresh mock tools, or relabelled as recorded."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from helpers import ORACLE, step, submit, tiny_scenario

from agentproc.agents.sim import SIM_AGENTS, run_sim_episode
from agentproc.analysis import label_record, replay_calls, replay_messages, replay_record
from agentproc.analysis.stored.replay import calls_from_messages, labels_by_call
from agentproc.errors import InputError, RunFileError
from agentproc.labelling import Label
from agentproc.procedures import Cell, generate_procedure
from agentproc.runs import (
    EpisodeSession,
    RunWriter,
    episode_record,
    read_run,
    scenario_of_record,
)
from agentproc.workflow import Scenario, scenario_of

WHERE = Path("messages.json")


def scenario(i: int = 0, **cell: Any) -> Scenario:
    return scenario_of(generate_procedure(Cell(**{"steps": 5, **cell}), 0, i))


def sim_record(agent: str, i: int = 0, guard: str = "observe", **cell: Any) -> dict[str, Any]:
    """A simulated episode's run-file line, as a reader gets it back."""
    ep = run_sim_episode(scenario(i, **cell), agent, guard=guard)  # type: ignore[arg-type]
    return json.loads(json.dumps(episode_record(ep)))


def replay(rec: dict[str, Any]):
    return replay_record(rec, scenario_of_record("run.jsonl", 1, rec), "run.jsonl")  # type: ignore[arg-type]


# -- replay_calls --------------------------------------------------------------


def test_replay_of_the_oracle_trace_is_faithful():
    r = replay_calls(tiny_scenario(), ORACLE)
    assert r.labels == [] and r.metrics["verdict"] == "faithful"
    assert [c.result for c in r.calls][-1] == "Answer recorded: 3."


def test_replay_calls_executes_every_call_in_order():
    r = replay_calls(tiny_scenario(), [step(1), step(2, S3=4), submit(12)])
    assert [c.result for c in r.calls] == ["S3 = 5.000", "S4 = 12.000", "Answer recorded: 12."]
    assert [lab.kind.value for lab in labels_by_call(r.labels)[1]] == ["wrong_argument"]


def test_labels_by_call_keeps_each_calls_labels_in_order_and_leaves_out_episode_labels():
    r = replay_calls(tiny_scenario(), [step(1), step(2, S3=4), step(2, S3=4)])
    by_call = labels_by_call(r.labels)
    assert any(lab.call_index is None for lab in r.labels)
    assert [lab for labs in by_call.values() for lab in labs] == [
        lab for lab in r.labels if lab.call_index is not None
    ]
    assert all(lab.call_index == i for i, labs in by_call.items() for lab in labs)


def test_replay_calls_without_a_recording_compares_nothing():
    r = replay_calls(tiny_scenario(), ORACLE)
    assert r.compared is False and r.differences == []
    assert r.agent == "replay"


def test_replay_calls_honours_the_guard():
    r = replay_calls(tiny_scenario(), [step(2), *ORACLE], guard="enforce")
    assert r.calls[0].refused == "dependency"


# -- replay_record -------------------------------------------------------------


def test_replay_of_a_run_file_record_has_no_differences(tmp_path: Path):
    path = tmp_path / "run.jsonl"
    with RunWriter(path) as w:
        for agent in ("sim:oracle", "sim:decay", "sim:wrong_argument", "sim:reordered"):
            w.write(episode_record(run_sim_episode(scenario(), agent)))
    for n, rec in read_run(path):
        r = replay_record(rec, scenario_of_record(path, n, rec), str(path))
        assert r.compared and r.differences == [], rec["agent"]


@pytest.mark.parametrize("agent", sorted(SIM_AGENTS))
@pytest.mark.parametrize("guard", ["observe", "enforce"])
def test_replay_of_every_simulated_agent_matches_its_recording(agent: str, guard: str):
    assert replay(sim_record(agent, 2, guard)).differences == []


def test_replay_reports_a_tampered_result():
    rec = sim_record("sim:oracle")
    real = rec["calls"][1]["result"]
    rec["calls"][1]["result"] = "S4 = 0.000"
    assert replay(rec).differences == [
        f"call 1: result was 'S4 = 0.000', replay gives {real!r}",
    ]


def test_replay_reports_a_tampered_state_hash():
    rec = sim_record("sim:oracle")
    rec["calls"][0]["state_hash"] = "0" * 16
    [difference] = replay(rec).differences
    assert difference.startswith("call 0: state_hash was '0000000000000000'")


def test_replay_reports_a_label_recorded_but_not_found():
    rec = sim_record("sim:oracle")
    rec["labels"].append({"kind": "repeated_step", "call_index": 2, "step": 3})
    assert replay(rec).differences == [
        "label recorded but not found on replay: "
        "{'call_index': 2, 'kind': 'repeated_step', 'step': 3}",
    ]


def test_replay_reports_a_label_found_but_not_recorded():
    rec = sim_record("sim:wrong_answer")
    dropped = rec["labels"].pop()
    differences = replay(rec).differences
    assert len(differences) == 1
    assert differences[0].startswith("label found on replay but not recorded: ")
    assert f"'kind': '{dropped['kind']}'" in differences[0]


def test_replay_reports_a_changed_label_attribute_as_two_differences():
    rec = sim_record("sim:wrong_argument")
    label = next(lab for lab in rec["labels"] if lab.get("cause"))
    label["cause"] = "invented"
    differences = replay(rec).differences
    assert len(differences) == 2
    assert "'cause': 'invented'" in differences[0] and "not found on replay" in differences[0]
    assert "not recorded" in differences[1]


def test_replay_reports_a_tampered_verdict():
    rec = sim_record("sim:oracle")
    rec["verdict"] = "wrong"
    assert replay(rec).differences == ["verdict was 'wrong', replay gives 'faithful'"]


def test_replay_of_a_record_with_an_unknown_guard_names_the_field():
    rec = sim_record("sim:oracle")
    rec["guard"] = "strict"
    with pytest.raises(InputError) as err:
        replay(rec)
    assert err.value.field == "guard"


def test_replay_of_a_call_without_a_name_names_the_call():
    rec = sim_record("sim:oracle")
    del rec["calls"][2]["name"]
    with pytest.raises(InputError) as err:
        replay(rec)
    assert err.value.field == "calls[2].name"


def text_record(output: str | None) -> dict[str, Any]:
    s = EpisodeSession(tiny_scenario(), "mine", mode="text")
    if output is not None:
        s.read_text(output)
    return json.loads(json.dumps(episode_record(s.finish("answer"))))


def test_replay_of_a_text_record_relabels_its_output():
    rec = text_record("S3 = 5\nS4 = 16\nS5 = 12\nS6 = 3\nAnswer: 3")
    r = replay(rec)
    assert r.differences == [] and r.compared
    assert r.calls == []
    assert r.text_entries == ["S3 = 5", "S4 = 16", "S5 = 12", "S6 = 3", "Answer: 3"]


def test_replay_of_a_text_record_without_output_names_the_field():
    rec = text_record("Answer: 3")
    del rec["output"]
    with pytest.raises(InputError) as err:
        replay(rec)
    assert err.value.field == "output"


# -- label_record --------------------------------------------------------------


@pytest.mark.parametrize("agent", sorted(SIM_AGENTS))
@pytest.mark.parametrize("guard", ["observe", "enforce"])
def test_label_record_gives_the_recorded_labels_and_metrics(agent: str, guard: str):
    for i in range(3):
        rec = sim_record(agent, i, guard)
        labels, metrics = label_record(rec)
        assert [lab.to_json() for lab in labels] == rec["labels"]
        assert metrics == rec["metrics"]


def test_label_record_in_integer_mode_gives_the_recorded_labels():
    rec = sim_record("sim:decay", 1, steps=8, mode="integer")
    labels, metrics = label_record(rec)
    assert [lab.to_json() for lab in labels] == rec["labels"] and metrics == rec["metrics"]


@pytest.mark.parametrize("step", [0, -1, 99])
def test_label_record_of_a_call_for_a_step_the_scenario_has_not_names_the_call(step: int):
    rec = sim_record("sim:oracle")
    rec["calls"][1]["step"] = step
    with pytest.raises(RunFileError) as err:
        label_record(rec)
    assert err.value.field == "calls[1]" and "not a recorded call" in str(err.value)


def test_label_record_trusts_the_recorded_values_without_executing():
    rec = sim_record("sim:oracle")
    assert rec["metrics"]["progress_rate"] == 1.0
    rec["calls"][0]["value"] += 1  # the record says step 1 produced a wrong value
    _, metrics = label_record(rec)
    assert metrics["progress_rate"] == 0.8  # 4 of the 5 steps end with the right value


def test_label_record_of_a_text_record_labels_its_output():
    rec = text_record("S3 = 5\nS4 = 16\nS5 = 12\nS6 = 3\nAnswer: 3")
    labels, metrics = label_record(rec)
    assert [lab.to_json() for lab in labels] == rec["labels"] and metrics == rec["metrics"]


def test_label_record_of_a_bad_scenario_names_the_field():
    rec = sim_record("sim:oracle")
    del rec["procedure"]
    rec["scenario"] = scenario().model_dump(mode="json", exclude={"tools", "prompt"})
    del rec["scenario"]["answer"]
    with pytest.raises(RunFileError) as err:
        label_record(rec, "run.jsonl: line 4")
    assert err.value.field == "scenario.answer"
    assert err.value.path == "run.jsonl: line 4"


def test_label_record_of_a_call_without_a_name_names_the_call():
    rec = sim_record("sim:oracle")
    del rec["calls"][1]["name"]
    with pytest.raises(RunFileError) as err:
        label_record(rec)
    assert err.value.field == "calls[1]"


def test_label_record_of_a_call_that_is_not_an_object_names_the_call():
    rec = sim_record("sim:oracle")
    rec["calls"][0] = "step_1"
    with pytest.raises(RunFileError) as err:
        label_record(rec)
    assert err.value.field == "calls[0]"


def test_label_record_of_executed_arguments_that_are_not_an_object_names_them():
    rec = sim_record("sim:oracle")
    rec["calls"][0]["arguments"] = "[2, 3]"
    with pytest.raises(RunFileError) as err:
        label_record(rec)
    assert err.value.field == "calls[0].arguments"


# -- replay_messages / calls_from_messages -------------------------------------


def oracle_messages() -> list[dict[str, Any]]:
    return copy.deepcopy(run_sim_episode(tiny_scenario(), "sim:oracle").messages)


def test_replay_of_recorded_messages_has_no_differences():
    r = replay_messages(tiny_scenario(), oracle_messages(), WHERE)
    assert r.compared and r.differences == []
    assert r.metrics["verdict"] == "faithful" and r.agent == "messages"


def test_replay_of_messages_with_a_tampered_tool_result_reports_it():
    messages = oracle_messages()
    tool = [m for m in messages if m["role"] == "tool"][1]
    tool["content"] = "S4 = 99.000"
    r = replay_messages(tiny_scenario(), messages, WHERE)
    assert r.differences == ["call 1: tool result was 'S4 = 99.000', replay gives 'S4 = 15.000'"]


def test_replay_of_messages_without_tool_results_compares_nothing_per_call():
    messages = [m for m in oracle_messages() if m["role"] != "tool"]
    r = replay_messages(tiny_scenario(), messages, WHERE)
    assert r.differences == [] and len(r.calls) == 5


def test_calls_from_messages_reads_tool_calls_and_their_results():
    messages = [
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "a", "function": {"name": "step_1", "arguments": '{"S1":2,"S2":3}'}},
                {"id": "b", "function": {"name": "step_2", "arguments": '{"S3":5,"S2":3}'}},
            ],
        },
        {"role": "tool", "tool_call_id": "b", "content": [{"type": "text", "text": "S4 = 15"}]},
    ]
    calls, results = calls_from_messages(messages, WHERE)
    assert calls == [("step_1", '{"S1":2,"S2":3}'), ("step_2", '{"S3":5,"S2":3}')]
    assert results == [None, "S4 = 15"]


def test_calls_from_messages_accepts_an_object_holding_the_messages():
    calls, _ = calls_from_messages({"messages": oracle_messages()}, WHERE)
    assert [name for name, _ in calls] == [name for name, _ in ORACLE]


def test_calls_from_messages_of_something_not_a_list_names_messages():
    with pytest.raises(InputError) as err:
        calls_from_messages({"chat": []}, WHERE)
    assert err.value.field == "messages"


def test_a_message_without_a_role_names_it():
    messages = [{"role": "system", "content": "x"}, {"content": "no role"}]
    with pytest.raises(InputError) as err:
        calls_from_messages(messages, WHERE)
    assert err.value.field == "messages[1].role"
    assert err.value.path == str(WHERE)


def test_a_tool_call_without_a_function_name_names_it():
    messages = [
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "tool_calls": [
                {"id": "a", "function": {"name": "step_1", "arguments": "{}"}},
                {"id": "b", "function": {"arguments": "{}"}},
            ],
        },
    ]
    with pytest.raises(InputError) as err:
        calls_from_messages(messages, WHERE)
    assert err.value.field == "messages[1].tool_calls[1].function.name"


def test_a_tool_call_without_a_function_names_it():
    messages = [{"role": "assistant", "tool_calls": [{"id": "a"}]}]
    with pytest.raises(InputError) as err:
        calls_from_messages(messages, WHERE)
    assert err.value.field == "messages[0].tool_calls[0].function.name"


# -- Replay.to_json ------------------------------------------------------------


def test_replay_json_has_each_call_with_its_own_labels():
    r = replay_calls(tiny_scenario(), [step(1), step(2, S3=3), ("step_9", {}), submit(9)])
    out = r.to_json()
    assert [len(c["labels"]) for c in out["calls"]] == [0, 1, 1, 2]
    assert out["calls"][1]["labels"][0]["kind"] == "wrong_argument"
    hallucinated = {"kind": "hallucinated_call", "call_index": 2, "step": None}
    assert out["calls"][2]["labels"] == [hallucinated]
    assert {lab["kind"] for lab in out["calls"][3]["labels"]} == {
        "premature_finish",
        "wrong_answer",
    }


def test_replay_json_labels_cover_every_label_once_episode_level_included():
    r = replay_calls(tiny_scenario(), [step(1), step(2, S3=3), submit(9)])
    out = r.to_json()
    per_call = [lab for c in out["calls"] for lab in c["labels"]]
    episode = [lab for lab in out["labels"] if lab["call_index"] is None]
    assert sorted(map(str, per_call + episode)) == sorted(map(str, out["labels"]))
    assert [Label.from_json(d) for d in out["labels"]] == r.labels


def test_replay_json_holds_the_verdict_and_the_differences():
    rec = sim_record("sim:oracle")
    rec["verdict"] = "wrong"
    out = replay(rec).to_json()
    assert out["verdict"] == "faithful" and out["metrics"]["verdict"] == "faithful"
    assert out["differences"] == ["verdict was 'wrong', replay gives 'faithful'"]
    assert "mode" not in out


def test_replay_json_of_a_text_record_has_its_entries():
    out = replay(text_record("S3 = 5\nAnswer: 3")).to_json()
    assert out["mode"] == "text" and out["entries"] == ["S3 = 5", "Answer: 3"]
    assert out["calls"] == []


class _CountingList(list):  # type: ignore[type-arg]
    """A list that counts the items read by iterating over it."""

    reads = 0

    def __iter__(self):  # type: ignore[no-untyped-def]
        for item in super().__iter__():
            _CountingList.reads += 1
            yield item


def _label_reads_of_to_json(calls: int) -> int:
    replay = replay_calls(tiny_scenario(), [step(1)] * calls + [submit()])
    replay.labels = _CountingList(replay.labels)
    _CountingList.reads = 0
    replay.to_json()
    return _CountingList.reads


def test_replay_json_reads_each_label_a_constant_number_of_times_whatever_the_calls():
    # Every repeat is labelled, so labels grow with calls; a per-call scan of the
    # labels made the JSON quadratic in calls.
    small, large = _label_reads_of_to_json(500), _label_reads_of_to_json(2000)
    assert large <= 2 * 2004
    assert large / small < 5


def test_replay_json_keeps_huge_argument_text_whole():
    text = '{"S1": 2, "S2": 3, "note": "' + "x" * 1_000_000 + '"}'
    replay = replay_calls(tiny_scenario(), [("step_1", text), *ORACLE[1:]])
    assert replay.to_json()["calls"][0]["arguments"] == text
