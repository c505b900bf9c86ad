"""``export --otel``: a run file's episodes as GenAI spans (OTLP JSON) with the labels as
span events; ``import-traces`` reads them back to the same labels."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import ORACLE, cli, records, tiny_scenario
from mcp_script import SKIPPED_AND_HALLUCINATED

pytest.importorskip("opentelemetry.sdk")
from otel_traces import tool_span_traces


@pytest.fixture
def labelled_run(tmp_path: Path, capsys) -> tuple[Path, Path]:
    """A run file of two episodes (one faithful, one with mistakes) and its scenario file."""
    scenario = tmp_path / "tiny.json"
    scenario.write_text(json.dumps(tiny_scenario().model_dump(mode="json")), encoding="utf-8")
    trace = tmp_path / "in.json"
    data = tool_span_traces(tiny_scenario(), [ORACLE, SKIPPED_AND_HALLUCINATED])
    trace.write_text(json.dumps(data), encoding="utf-8")
    run = tmp_path / "run.jsonl"
    assert cli(capsys, "import-traces", trace, "--scenario", scenario, "--out", run)[0] == 0
    return run, scenario


def spans(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for rs in data["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]]


def test_every_label_is_an_event_on_its_calls_span(labelled_run, tmp_path: Path, capsys):
    run, _ = labelled_run
    out = tmp_path / "out.json"
    code, said, _ = cli(capsys, "export", run, "--otel", out)
    assert code == 0 and "wrote 2 episodes" in said
    data = json.loads(out.read_text())
    events = [e for s in spans(data) for e in s["events"] if e["name"] == "agentproc.label"]
    assert len(events) == sum(len(e["labels"]) for e in records(run))
    roots = [s for s in spans(data) if "parentSpanId" not in s]
    verdicts = [
        a["value"]["stringValue"]
        for s in roots
        for a in s["attributes"]
        if a["key"] == "agentproc.verdict"
    ]
    assert verdicts == [e["verdict"] for e in records(run)]


def test_the_export_is_otlp_that_the_protobuf_schema_accepts(labelled_run, tmp_path: Path, capsys):
    from google.protobuf.json_format import ParseDict
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    run, _ = labelled_run
    out = tmp_path / "out.json"
    cli(capsys, "export", run, "--otel", out)
    request = ParseDict(json.loads(out.read_text()), ExportTraceServiceRequest())
    assert len(request.resource_spans[0].scope_spans[0].spans) == 2 + 5 + 5


def test_import_traces_reads_an_export_back_to_the_same_labels(
    labelled_run, tmp_path: Path, capsys
):
    run, scenario = labelled_run
    out, again = tmp_path / "out.json", tmp_path / "again.jsonl"
    cli(capsys, "export", run, "--otel", out)
    assert cli(capsys, "import-traces", out, "--scenario", scenario, "--out", again)[0] == 0
    assert [e["labels"] for e in records(again)] == [e["labels"] for e in records(run)]
    assert [e["agent"] for e in records(again)] == [e["agent"] for e in records(run)]


def test_the_same_run_exports_to_the_same_bytes(labelled_run, tmp_path: Path, capsys):
    run, _ = labelled_run
    cli(capsys, "export", run, "--otel", tmp_path / "a.json")
    cli(capsys, "export", run, "--otel", tmp_path / "b.json")
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()


def test_an_existing_output_is_kept_without_overwrite(labelled_run, tmp_path: Path, capsys):
    run, _ = labelled_run
    out = tmp_path / "out.json"
    out.write_text("keep")
    code, _, err = cli(capsys, "export", run, "--otel", out)
    assert code == 2 and "--otel" in err and out.read_text() == "keep"
    assert cli(capsys, "export", run, "--otel", out, "--overwrite")[0] == 0


def test_a_missing_run_file_is_one_error(tmp_path: Path, capsys):
    code, _, err = cli(capsys, "export", tmp_path / "nope.jsonl", "--otel", tmp_path / "o.json")
    assert code == 2 and "nope.jsonl" in err and "Traceback" not in err
