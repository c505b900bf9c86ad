"""``import-traces`` of traces recorded from the real instrumentation packages
(``record_otel_fixtures.py``): one conversation of the demo endpoint's skipper, which
leaves out step 2 of the scenario, read as a person reading the trace reads it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import cli, records

from agentproc.errors import counted
from agentproc.integrations.imported import label_trace
from agentproc.integrations.otel_traces import read_traces
from agentproc.workflow import load_scenario

FIXTURES = Path(__file__).parent / "fixtures" / "otel"
SCENARIO = FIXTURES / "scenario.json"
OTHER = FIXTURES / "other-scenario.json"
CONVERSATION = ["step_1", "step_3", "step_4", "step_5", "submit_answer"]
"""The calls of the recorded conversation: step 2 left out."""
ARGUMENTS = [{"S2": 7.477}, {"S4": -4.672}, {"S5": -9.344}, {"S6": 87.31}, {"answer": 7623.036}]
RESULTS = [
    "S3 = -2.336",
    "S5 = -9.344",
    "S6 = 87.310",
    "S7 = 7623.036",
    "Answer recorded: 7623.036.",
]
SKIPPED_STEP_2 = [{"kind": "skipped_step", "call_index": None, "step": 2, "live": True}]

PRODUCERS = {
    "openai-v2-no-parent.json": 2,  # two trials, each a trace per chat call
    "openai-v2-parent.json": 1,  # and a conversation of the other scenario, skipped
    "traceloop-openai.json": 1,
    "traceloop-langchain.json": 1,
    "openinference-openai.json": 1,
    "openinference-langchain.json": 1,
    "collector-openai-v2.jsonl": 1,
}
"""Each recorded file and how many conversations of the scenario it holds."""


def imported(capsys: Any, tmp_path: Path, fixture: str, scenario: Path = SCENARIO) -> tuple:
    run = tmp_path / "run.jsonl"
    code, out, err = cli(
        capsys, "import-traces", FIXTURES / fixture, "--scenario", scenario, "--out", run
    )
    assert code == 0, err
    return records(run), out, err


@pytest.mark.parametrize(("fixture", "conversations"), PRODUCERS.items())
def test_a_recorded_conversation_is_one_episode_with_the_labels_of_its_calls(
    capsys, tmp_path: Path, fixture: str, conversations: int
):
    eps, out, err = imported(capsys, tmp_path, fixture)
    assert len(eps) == conversations
    assert f"wrote {counted(conversations, 'episode')} to" in out
    for trial, ep in enumerate(eps):
        assert [c["name"] for c in ep["calls"]] == CONVERSATION
        assert [json.loads(c["arguments"]) for c in ep["calls"]] == ARGUMENTS
        assert [c["step"] for c in ep["calls"]] == [1, 3, 4, 5, None]
        assert ep["labels"] == SKIPPED_STEP_2
        assert ep["verdict"] == "unfaithful_correct"
        assert ep["stop_reason"] == "answer"
        assert ep["trial"] == trial
    assert "tool result was" not in err  # the results a trace recorded are the mock tools'


@pytest.mark.parametrize("fixture", ["traceloop-langchain.json", "openinference-langchain.json"])
def test_chat_spans_give_the_arguments_and_tool_spans_the_results(fixture: str):
    (trace,) = read_traces(FIXTURES / fixture)
    assert [json.loads(c.arguments) for c in trace.calls] == ARGUMENTS
    assert [c.result for c in trace.calls] == RESULTS
    assert trace.batches == [1, 1, 1, 1, 1]


def test_langchains_tool_spans_alone_are_read_through_its_callback_wrapper(tmp_path: Path):
    data = json.loads((FIXTURES / "traceloop-langchain.json").read_text())
    for rs in data["resourceSpans"]:
        for ss in rs["scopeSpans"]:  # the chat spans' record gone: the tool spans remain
            ss["spans"] = [s for s in ss["spans"] if not s["name"].startswith("ChatOpenAI")]
    path = tmp_path / "tools-only.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    (trace,) = read_traces(path)
    assert [json.loads(c.arguments) for c in trace.calls] == ARGUMENTS
    episode = label_trace(load_scenario(SCENARIO), trace).episode
    assert [lab.to_json() for lab in episode.labels] == SKIPPED_STEP_2


def test_chat_calls_without_a_parent_span_are_joined_by_their_message_prefix():
    traces = read_traces(FIXTURES / "openai-v2-no-parent.json")
    assert [[c.name for c in t.calls] for t in traces] == [CONVERSATION, CONVERSATION]
    assert len({c.batch for t in traces for c in t.calls}) == 10  # one message a call


def test_a_recorded_conversation_of_another_scenario_is_skipped_with_a_note(capsys, tmp_path: Path):
    eps, _, err = imported(capsys, tmp_path, "openai-v2-parent.json")
    (note,) = err.strip().splitlines()
    assert "openai-v2-parent.json: trace " in note
    assert "skipped: its messages do not give scenario 'n5-L1-r1_10-mixed-decimal-0002''s " in (
        note
    )
    other, _, err = imported(capsys, tmp_path / "other", "openai-v2-parent.json", OTHER)
    assert [e["scenario_id"] for e in eps + other] == [
        "n5-L1-r1_10-mixed-decimal-0002",
        "n5-L1-r1_10-mixed-decimal-0000",
    ]
    assert other[0]["verdict"] == "faithful" and len(other[0]["calls"]) == 6
    assert "skipped" in err


def test_an_export_of_several_scenarios_imports_only_the_scenarios_own_episodes(
    capsys, tmp_path: Path
):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    mine, _, _ = imported(capsys, tmp_path / "a", "openai-v2-parent.json")
    imported(capsys, tmp_path / "b", "openai-v2-parent.json", OTHER)
    both = tmp_path / "both.jsonl"
    both.write_text(
        (tmp_path / "b" / "run.jsonl").read_text() + (tmp_path / "a" / "run.jsonl").read_text()
    )
    exported = tmp_path / "both-otel.json"
    assert cli(capsys, "export", both, "--otel", exported)[0] == 0
    run = tmp_path / "again.jsonl"
    code, out, err = cli(capsys, "import-traces", exported, "--scenario", SCENARIO, "--out", run)
    assert code == 0
    assert "wrote 1 episode to" in out
    assert "skipped: it is of scenario 'n5-L1-r1_10-mixed-decimal-0000', not " in err
    (again,) = records(run)
    assert again["labels"] == mine[0]["labels"] and again["trial"] == 0
    code, _, err = cli(capsys, "replay", "--scenario", SCENARIO, "--otel", exported)
    assert code == 0 and "skipped: it is of scenario" in err


def test_a_file_of_only_other_scenarios_is_one_error(capsys, tmp_path: Path):
    run = tmp_path / "run.jsonl"
    fixture = FIXTURES / "openinference-openai.json"
    code, _, err = cli(capsys, "import-traces", fixture, "--scenario", OTHER, "--out", run)
    assert code == 2
    (line,) = err.strip().splitlines()
    assert line.startswith(f"agentproc: error: {fixture}: its messages do not give scenario")
    assert "Traceback" not in err and not run.exists()


def test_select_traces_keeps_a_trace_that_names_no_scenario_and_calls_its_tools():
    from agentproc.integrations.imported import select_traces

    scenario = load_scenario(SCENARIO)
    traces = read_traces(FIXTURES / "traceloop-openai.json")
    notes: list[str] = []
    assert select_traces(scenario, traces, SCENARIO, notes.append) == traces
    assert notes == []


def rewritten(tmp_path: Path, fixture: str, change: Any) -> Path:
    """The fixture with ``change(attributes)`` applied to every span's attributes."""
    data = json.loads((FIXTURES / fixture).read_text())
    for rs in data["resourceSpans"]:
        for ss in rs["scopeSpans"]:
            for span in ss["spans"]:
                span["attributes"] = change({a["key"]: a["value"] for a in span["attributes"]})
                span["attributes"] = [{"key": k, "value": v} for k, v in span["attributes"].items()]
    path = tmp_path / fixture
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def legacy_traceloop(attrs: dict[str, Any]) -> dict[str, Any]:
    """traceloop's attributes as its releases before the GenAI messages wrote them."""
    out = {k: v for k, v in attrs.items() if not k.startswith("gen_ai.")}
    inputs = json.loads(attrs["gen_ai.input.messages"]["stringValue"])
    for n, msg in enumerate(inputs):
        text = " ".join(p.get("content", "") for p in msg["parts"] if p["type"] == "text")
        out[f"gen_ai.prompt.{n}.role"] = {"stringValue": msg["role"]}
        out[f"gen_ai.prompt.{n}.content"] = {"stringValue": text}
    outputs = json.loads(attrs["gen_ai.output.messages"]["stringValue"])
    for m, part in enumerate(p for p in outputs[0]["parts"] if p["type"] == "tool_call"):
        at = f"gen_ai.completion.0.tool_calls.{m}"
        out[f"{at}.name"] = {"stringValue": part["name"]}
        out[f"{at}.arguments"] = {"stringValue": json.dumps(part["arguments"])}
    return out


def test_traceloops_flattened_completion_attributes_are_read(tmp_path: Path):
    traces = read_traces(rewritten(tmp_path, "traceloop-openai.json", legacy_traceloop))
    assert [[c.name for c in t.calls] for t in traces] == [CONVERSATION]
    assert [json.loads(c.arguments) for c in traces[0].calls] == ARGUMENTS


def test_a_prompt_given_as_the_system_message_is_the_scenarios(capsys, tmp_path: Path):
    def as_system(attrs: dict[str, Any]) -> dict[str, Any]:
        key = "llm.input_messages.1.message.role"
        return attrs | ({key: {"stringValue": "system"}} if key in attrs else {})

    path = rewritten(tmp_path, "openinference-openai.json", as_system)
    run = tmp_path / "run.jsonl"
    code, _, err = cli(capsys, "import-traces", path, "--scenario", SCENARIO, "--out", run)
    assert code == 0 and err == ""
    assert records(run)[0]["labels"] == SKIPPED_STEP_2


def test_a_chat_span_without_arguments_leaves_them_to_the_tool_span(tmp_path: Path):
    def without_arguments(attrs: dict[str, Any]) -> dict[str, Any]:
        if "gen_ai.output.messages" not in attrs:
            return attrs
        messages = json.loads(attrs["gen_ai.output.messages"]["stringValue"])
        for msg in messages:
            for part in msg["parts"]:
                part.pop("arguments", None)
        return attrs | {"gen_ai.output.messages": {"stringValue": json.dumps(messages)}}

    path = rewritten(tmp_path, "traceloop-langchain.json", without_arguments)
    (trace,) = read_traces(path)
    assert [json.loads(c.arguments) for c in trace.calls] == ARGUMENTS
    assert [c.result for c in trace.calls] == RESULTS


def test_traces_that_share_a_conversation_id_are_one_episode(tmp_path: Path):
    data = json.loads((FIXTURES / "openai-v2-no-parent.json").read_text())
    spans = sorted(
        (s for rs in data["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]),
        key=lambda s: int(s["startTimeUnixNano"]),
    )
    assert len(spans) == 12  # six chat calls a conversation, each its own trace
    for n, span in enumerate(spans):
        span["attributes"] = [  # no messages to join them by: the conversation id alone
            a for a in span["attributes"] if a["key"] != "gen_ai.input.messages"
        ] + [{"key": "gen_ai.conversation.id", "value": {"stringValue": f"c{n // 6}"}}]
    path = tmp_path / "by-id.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    traces = read_traces(path)
    assert [[c.name for c in t.calls] for t in traces] == [CONVERSATION, CONVERSATION]
