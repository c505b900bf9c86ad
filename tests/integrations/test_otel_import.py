"""``import-traces`` and ``replay --otel``: OpenTelemetry GenAI traces, made here with the
OpenTelemetry SDK, labelled as ``replay`` labels the same calls."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import ORACLE, cli, records, tiny_scenario
from mcp_script import SKIPPED_AND_HALLUCINATED

from agentproc.analysis import replay_calls

pytest.importorskip("opentelemetry.sdk")
from otel_traces import (
    chat_message_traces,
    spans_without_tools,
    tool_span_traces,
)


def as_text(calls: list[tuple[str, Any]]) -> list[tuple[str, str]]:
    return [(n, a if isinstance(a, str) else json.dumps(a)) for n, a in calls]


def replayed(calls: list[tuple[str, Any]], **kw: Any) -> list[dict[str, Any]]:
    return [lab.to_json() for lab in replay_calls(tiny_scenario(), as_text(calls), **kw).labels]


@pytest.fixture
def scenario_file(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(tiny_scenario().model_dump(mode="json")), encoding="utf-8")
    return path


def write(tmp_path: Path, data: Any, name: str = "trace.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


MALFORMED = [("step_1", '{"S1": 2, "S2":'), ("step_1", {"S1": 2, "S2": 3})]
"""A call whose arguments are cut off, then the call done right."""


def test_import_traces_writes_one_episode_per_trace_with_replays_labels(
    tmp_path: Path, scenario_file: Path, capsys
):
    episodes = [ORACLE, SKIPPED_AND_HALLUCINATED, MALFORMED]
    trace = write(tmp_path, tool_span_traces(tiny_scenario(), episodes))
    run = tmp_path / "run.jsonl"
    code, out, err = cli(capsys, "import-traces", trace, "--scenario", scenario_file, "--out", run)
    assert code == 0, err
    assert "wrote 3 episodes" in out and "faithful" in out
    eps = records(run)
    assert [e["labels"] for e in eps] == [replayed(calls) for calls in episodes]
    assert [e["agent"] for e in eps] == ["my-agent"] * 3  # gen_ai.agent.name
    assert [e["trial"] for e in eps] == [0, 1, 2]  # one agent's traces: its trials
    assert "invalid_arguments" in {lab["kind"] for lab in eps[2]["labels"]}
    assert cli(capsys, "replay", run)[0] == 0  # the run file replays without a difference


def test_replay_otel_prints_the_labels_replay_gives(tmp_path: Path, scenario_file: Path, capsys):
    trace = write(tmp_path, tool_span_traces(tiny_scenario(), [SKIPPED_AND_HALLUCINATED]))
    code, out, _ = cli(capsys, "replay", "--scenario", scenario_file, "--otel", trace, "--json")
    assert code == 0
    got = json.loads(out)
    assert got["labels"] == replayed(SKIPPED_AND_HALLUCINATED)
    assert got["agent"] == "my-agent" and got["differences"] == []


def test_replay_otel_says_where_recorded_tool_results_differ(
    tmp_path: Path, scenario_file: Path, capsys
):
    data = tool_span_traces(tiny_scenario(), [ORACLE])
    span = data["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    for attr in span["attributes"]:
        if attr["key"] == "gen_ai.tool.call.result":
            attr["value"] = {"stringValue": "S3 = 6"}
    code, out, _ = cli(
        capsys, "replay", "--scenario", scenario_file, "--otel", write(tmp_path, data)
    )
    assert code == 1
    assert "tool result was 'S3 = 6'" in out


def test_tool_calls_in_chat_messages_are_read_when_there_are_no_tool_spans(
    tmp_path: Path, scenario_file: Path, capsys
):
    # steps 3 and 4 both read step 2's output only: sent together once it has returned
    turns = [[ORACLE[0]], [ORACLE[1]], [ORACLE[2], ORACLE[3]], [ORACLE[4]]]
    trace = write(tmp_path, chat_message_traces(tiny_scenario(), turns))
    argv = ["--scenario", scenario_file, "--otel", trace, "--json", "--order", "dependency"]
    code, out, _ = cli(capsys, "replay", *argv)
    assert code == 0
    calls = [c for turn in turns for c in turn]
    assert json.loads(out)["labels"] == replayed(calls, order="dependency", batches=[1, 1, 2, 1])
    assert json.loads(out)["verdict"] == "faithful"


@pytest.mark.parametrize(
    ("data", "said"),
    [
        (spans_without_tools, "holds no tool call"),
        (lambda: [1, 2], "not OTLP JSON"),
        (
            lambda: tool_span_traces(tiny_scenario(), [[("lookup_order", {"id": 7})]]),
            "calls none of scenario 'tiny''s tools (it calls lookup_order)",
        ),
        (
            lambda: {
                "resourceSpans": [
                    {
                        "scopeSpans": [
                            {
                                "spans": [
                                    {
                                        "attributes": [
                                            {
                                                "key": "gen_ai.operation.name",
                                                "value": {"stringValue": "execute_tool"},
                                            },
                                            {
                                                "key": "gen_ai.tool.name",
                                                "value": {"stringValue": "step_1"},
                                            },
                                        ]
                                    }
                                ]
                            }
                        ]
                    }
                ]
            },
            "resourceSpans[0].scopeSpans[0].spans[0].attributes: tool span 'step_1' has no "
            "gen_ai.tool.call.arguments",
        ),
        (lambda: {"resourceSpans": {"x": 1}}, "resourceSpans: expected a list"),
    ],
)
@pytest.mark.parametrize("command", ["import-traces", "replay"])
def test_a_trace_that_cannot_be_labelled_is_one_error(
    tmp_path: Path, scenario_file: Path, capsys, data: Any, said: str, command: str
):
    trace = write(tmp_path, data())
    run = tmp_path / "run.jsonl"
    if command == "replay":
        argv = ["replay", "--scenario", scenario_file, "--otel", trace]
    else:
        argv = ["import-traces", trace, "--scenario", scenario_file, "--out", run]
    code, _out, err = cli(capsys, *argv)
    assert code == 2
    assert said in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert not run.exists()


def test_replay_otel_needs_a_scenario(tmp_path: Path, capsys):
    code, _, err = cli(capsys, "replay", "--otel", tmp_path / "t.json")
    assert code == 2 and "takes --scenario S.json" in err


def test_an_imported_trace_sends_the_calls_of_one_chat_message_as_one_batch(tmp_path: Path):
    from agentproc.integrations.imported import label_trace
    from agentproc.integrations.otel_traces import read_traces

    turns = [[ORACLE[0]], [ORACLE[2], ORACLE[1]], [ORACLE[3]], [ORACLE[4]]]
    trace = read_traces(write(tmp_path, chat_message_traces(tiny_scenario(), turns)))[0]
    assert trace.batches == [1, 2, 1, 1]
    episode = label_trace(tiny_scenario(), trace, order="dependency").episode
    calls = [c for turn in turns for c in turn]
    expected = replayed(calls, order="dependency", batches=[1, 2, 1, 1])
    assert [lab.to_json() for lab in episode.labels] == expected
    assert [[c.name for c in m] for m in trace.messages()] == [
        [name for name, _ in turn] for turn in turns
    ]


def one_span(value: Any, key: str = "gen_ai.tool.call.arguments") -> dict[str, Any]:
    """An OTLP file of one tool span whose attribute ``key`` has the OTLP value ``value``."""
    attrs = [
        {"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}},
        {"key": "gen_ai.tool.name", "value": {"stringValue": "step_1"}},
        {"key": "gen_ai.tool.call.arguments", "value": {"stringValue": '{"S1": 2, "S2": 3}'}},
    ]
    attrs = [a for a in attrs if a["key"] != key] + [{"key": key, "value": value}]
    span = {"traceId": "ab", "spanId": "cd", "attributes": attrs}
    return {"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}


def nested(depth: int) -> str:
    """An array value ``depth`` arrays deep, as JSON text."""
    return '{"arrayValue": {"values": [' * depth + '{"stringValue": "x"}' + "]}}" * depth


WHERE = "resourceSpans[0].scopeSpans[0].spans[0].attributes"


@pytest.mark.parametrize(
    ("value", "key", "said"),
    [
        ({"arrayValue": {"values": 5}}, "x.list", f"{WHERE}[x.list]: arrayValue holds"),
        ({"kvlistValue": {"values": [7]}}, "x.map", f"{WHERE}[x.map]: kvlistValue holds"),
        ({"stringValue": 5}, "gen_ai.tool.name", "stringValue holds 5, not a valid stringValue"),
        ({"intValue": "seven"}, "x.n", f"{WHERE}[x.n]: intValue holds 'seven'"),
        ({"doubleValue": "x"}, "x.d", "doubleValue holds 'x'"),
        ({"boolValue": "yes"}, "x.b", "boolValue holds 'yes'"),
        ({"bytesValue": "**"}, "x.bytes", "bytesValue holds '**'"),
        ({"fooValue": 1}, "x.f", "unknown AnyValue field 'fooValue'"),
        ({"stringValue": "a", "intValue": "1"}, "x.two", "not an OTLP AnyValue"),
        (
            {"arrayValue": {"values": [{"intValue": 3}, None]}},
            "x.list",
            f"{WHERE}[x.list][1]: arrayValue holds null: each item is an AnyValue",
        ),
        (
            {
                "kvlistValue": {
                    "values": [{"key": "a", "value": {"arrayValue": {"values": [None]}}}]
                }
            },
            "x.map",
            f"{WHERE}[x.map].a[0]: arrayValue holds null",
        ),
        (nested(300), "x.deep", "nests deeper than 32"),
        (nested(40), "x.deep", "nests deeper than 32"),
        ("[" * 100_000 + "]" * 100_000, "x.s", "not valid JSON (nested too deeply)"),
    ],
    ids=lambda v: v[:30] if isinstance(v, str) else None,
)
def test_a_malformed_otlp_value_is_one_error_naming_the_file(
    tmp_path: Path, scenario_file: Path, capsys, value: Any, key: str, said: str
):
    trace = tmp_path / "trace.json"
    text = json.dumps(one_span("VALUE", key))
    trace.write_text(
        text.replace('"VALUE"', value if isinstance(value, str) else json.dumps(value))
    )
    run = tmp_path / "run.jsonl"
    code, _out, err = cli(capsys, "import-traces", trace, "--scenario", scenario_file, "--out", run)
    assert code == 2, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert str(trace) in err and said in err
    assert not run.exists()


@pytest.mark.parametrize(
    "value",
    [
        None,
        {},
        {"arrayValue": {}},
        {"arrayValue": None},
        {"arrayValue": {"values": None}},
        {"kvlistValue": {"values": None}},
        {"arrayValue": {"values": [{}, {"intValue": 3}, {"doubleValue": "NaN"}]}},
        {"kvlistValue": {"values": [{"key": "a", "value": {"bytesValue": "AAE="}}]}},
        {"int_value": 4},
    ],
)
def test_every_well_formed_otlp_value_shape_is_read(
    tmp_path: Path, scenario_file: Path, capsys, value: Any
):
    trace = write(tmp_path, one_span(value, "x.other"))
    run = tmp_path / "run.jsonl"
    code, _, err = cli(capsys, "import-traces", trace, "--scenario", scenario_file, "--out", run)
    assert code == 0, err
    assert [c["name"] for c in records(run)[0]["calls"]] == ["step_1"]


def test_null_where_otlp_holds_objects_is_read_as_absent(
    tmp_path: Path, scenario_file: Path, capsys
):
    data = one_span({"stringValue": "x"}, "x.s")
    data["resourceSpans"][0]["resource"] = None
    data["resourceSpans"][0]["scopeSpans"][0]["scope"] = None
    data["resourceSpans"].append({"resource": {"attributes": None}, "scopeSpans": None})
    run = tmp_path / "run.jsonl"
    code, _, err = cli(
        capsys, "import-traces", write(tmp_path, data), "--scenario", scenario_file, "--out", run
    )
    assert code == 0, err


def test_json_lines_of_export_requests_are_one_file(tmp_path: Path, scenario_file: Path, capsys):
    first = tool_span_traces(tiny_scenario(), [ORACLE])
    second = tool_span_traces(tiny_scenario(), [SKIPPED_AND_HALLUCINATED])
    trace = tmp_path / "traces.jsonl"
    trace.write_text(json.dumps(first) + "\n\n" + json.dumps(second) + "\n", encoding="utf-8")
    run = tmp_path / "run.jsonl"
    code, _out, err = cli(capsys, "import-traces", trace, "--scenario", scenario_file, "--out", run)
    assert code == 0, err
    assert [e["labels"] for e in records(run)] == [
        replayed(ORACLE),
        replayed(SKIPPED_AND_HALLUCINATED),
    ]


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('{"resourceSpans": []}\n{"resourceSpans": [}\n', "line 2: not valid JSON"),
        ('{"resourceSpans": []}\n[1]\n', "line 2: not OTLP JSON"),
        ('{"resourceSpans": [1]}\n{"resourceSpans": []}\n', "line 1: resourceSpans[0]: expected"),
        ('{\n "resourceSpans": [\n  {},\n  {]\n}\n', "not valid JSON (line 4, column"),
    ],
)
def test_a_bad_line_of_json_lines_is_one_error_naming_it(
    tmp_path: Path, scenario_file: Path, capsys, text: str, said: str
):
    trace = tmp_path / "traces.jsonl"
    trace.write_text(text, encoding="utf-8")
    run = tmp_path / "run.jsonl"
    code, _, err = cli(capsys, "import-traces", trace, "--scenario", scenario_file, "--out", run)
    assert code == 2
    assert said in err and str(trace) in err and len(err.strip().splitlines()) == 1


def test_a_trace_calling_none_of_the_scenarios_tools_is_skipped_beside_one_that_does(
    tmp_path: Path, scenario_file: Path, capsys
):
    episodes = [ORACLE, [("lookup_order", {"id": 7}), ("refund", {"id": 7})]]
    trace = write(tmp_path, tool_span_traces(tiny_scenario(), episodes))
    run = tmp_path / "run.jsonl"
    code, out, err = cli(capsys, "import-traces", trace, "--scenario", scenario_file, "--out", run)
    assert code == 0 and "wrote 1 episode to" in out
    (note,) = err.strip().splitlines()
    assert "skipped: the trace calls none of scenario 'tiny''s tools (it calls " in note
    assert "lookup_order, refund)" in note
    assert [e["labels"] for e in records(run)] == [replayed(ORACLE)]
