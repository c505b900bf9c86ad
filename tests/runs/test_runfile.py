"""Run files: one flushed JSON line per episode, read back one line at a time."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentproc.errors import InputError, RunFileError
from agentproc.runs import ReadReport, completed_ids, read_at, read_lines, read_run


def record(scenario_id: str = "s-0000", agent: str = "sim:oracle", **override: Any) -> dict:
    """A minimal record with every required field."""
    rec: dict[str, Any] = {
        "schema_version": 1,
        "scenario_id": scenario_id,
        "agent": agent,
        "cell": "n3-L3-r1_10-mixed-decimal",
        "params": {"steps": 3, "lookback": 3},
        "scenario": {},
        "calls": [],
        "labels": [],
        "metrics": {
            "verdict": "faithful",
            "total_steps": 3,
            "first_answer_correct": True,
            "final_answer_correct": True,
            "progress_rate": 1.0,
            "longest_correct_prefix": 4,
        },
        "verdict": "faithful",
    }
    rec.update(override)
    return rec


def line(rec: dict) -> bytes:
    return (json.dumps(rec) + "\n").encode()


def write_bytes(path: Path, *chunks: bytes) -> Path:
    path.write_bytes(b"".join(chunks))
    return path


def test_read_run_yields_line_numbers_and_records(tmp_path: Path):
    path = write_bytes(tmp_path / "run.jsonl", line(record("a")), line(record("b")))
    got = [(n, r["scenario_id"]) for n, r in read_run(path)]
    assert got == [(1, "a"), (2, "b")]


def test_read_run_skips_blank_lines_but_counts_them(tmp_path: Path):
    path = write_bytes(
        tmp_path / "run.jsonl", b"\n", line(record("a")), b"   \n\n", line(record("b")), b"\n"
    )
    assert [(n, r["scenario_id"]) for n, r in read_run(path)] == [(2, "a"), (5, "b")]


def test_read_run_of_an_empty_file_yields_nothing(tmp_path: Path):
    path = write_bytes(tmp_path / "run.jsonl")
    report = ReadReport()
    assert list(read_run(path, report)) == []
    assert report.torn_last_line is None and report.warnings == []


def test_torn_last_line_is_skipped_and_reported(tmp_path: Path):
    torn = line(record("c"))[:40]
    path = write_bytes(tmp_path / "run.jsonl", line(record("a")), line(record("b")), torn)
    report = ReadReport()
    assert [r["scenario_id"] for _, r in read_run(path, report)] == ["a", "b"]
    assert report.torn_last_line == 3
    assert len(report.warnings) == 1
    assert "line 3" in report.warnings[0] and "torn" in report.warnings[0]


def test_torn_last_line_is_skipped_without_a_report(tmp_path: Path):
    path = write_bytes(tmp_path / "run.jsonl", line(record("a")), b'{"scenario_id": "b", "ag')
    assert [r["scenario_id"] for _, r in read_run(path)] == ["a"]


def test_torn_last_line_cut_inside_a_multibyte_character_is_skipped(tmp_path: Path):
    whole = json.dumps(record("é" * 5), ensure_ascii=False).encode()
    cut = whole[: whole.index("é".encode()) + 1]  # the first of the two UTF-8 bytes of é
    path = write_bytes(tmp_path / "run.jsonl", line(record("a")), cut)
    report = ReadReport()
    assert [r["scenario_id"] for _, r in read_run(path, report)] == ["a"]
    assert report.torn_last_line == 2


def test_complete_last_line_without_newline_is_kept(tmp_path: Path):
    path = write_bytes(tmp_path / "run.jsonl", line(record("a")), line(record("b"))[:-1])
    report = ReadReport()
    assert [r["scenario_id"] for _, r in read_run(path, report)] == ["a", "b"]
    assert report.torn_last_line is None


def test_bad_middle_line_raises_naming_the_line(tmp_path: Path):
    path = write_bytes(tmp_path / "run.jsonl", line(record("a")), b"{not json\n", line(record()))
    with pytest.raises(RunFileError) as err:
        list(read_run(path))
    assert err.value.field == "line 2"
    assert err.value.path == str(path)
    assert "not valid JSON" in str(err.value)


def test_bad_last_line_with_a_newline_is_an_error_not_a_torn_line(tmp_path: Path):
    path = write_bytes(tmp_path / "run.jsonl", line(record("a")), b"{not json\n")
    with pytest.raises(RunFileError) as err:
        list(read_run(path, ReadReport()))
    assert err.value.field == "line 2"


def test_a_line_that_is_not_an_object_raises(tmp_path: Path):
    path = write_bytes(tmp_path / "run.jsonl", b"[1, 2]\n")
    with pytest.raises(RunFileError, match="must be a JSON object") as err:
        list(read_run(path))
    assert err.value.field == "line 1"


@pytest.mark.parametrize("key", ["scenario_id", "agent", "calls", "labels", "metrics", "verdict"])
def test_a_missing_required_field_raises_naming_it(tmp_path: Path, key: str):
    rec = record()
    del rec[key]
    path = write_bytes(tmp_path / "run.jsonl", line(record()), line(rec))
    with pytest.raises(RunFileError, match="missing") as err:
        list(read_run(path))
    assert err.value.field == f"line 2: {key}"


def test_an_unknown_verdict_raises_naming_the_field(tmp_path: Path):
    path = write_bytes(tmp_path / "run.jsonl", line(record(verdict="great")))
    with pytest.raises(RunFileError, match="unknown verdict 'great'") as err:
        list(read_run(path))
    assert err.value.field == "line 1: verdict"
    assert "faithful" in str(err.value)


def test_an_unknown_label_kind_raises_naming_the_label(tmp_path: Path):
    labels = [
        {"kind": "wrong_answer", "call_index": 3, "step": None},
        {"kind": "typo", "call_index": 0, "step": 1},
    ]
    path = write_bytes(tmp_path / "run.jsonl", line(record(labels=labels)))
    with pytest.raises(RunFileError, match="unknown label kind 'typo'") as err:
        list(read_run(path))
    assert err.value.field == "line 1: labels[1].kind"


def test_a_label_that_is_not_an_object_raises_naming_it(tmp_path: Path):
    path = write_bytes(tmp_path / "run.jsonl", line(record(labels=["wrong_answer"])))
    with pytest.raises(RunFileError) as err:
        list(read_run(path))
    assert err.value.field == "line 1: labels[0].kind"


def test_labels_that_are_not_a_list_raise(tmp_path: Path):
    path = write_bytes(tmp_path / "run.jsonl", line(record(labels={"kind": "wrong_answer"})))
    with pytest.raises(RunFileError, match="expected a list"):
        list(read_run(path))


def test_a_missing_run_file_is_an_input_error_naming_it(tmp_path: Path):
    with pytest.raises(InputError, match="no such file") as err:
        list(read_run(tmp_path / "nope.jsonl"))
    assert str(tmp_path / "nope.jsonl") in str(err.value)


# -- completed_ids -------------------------------------------------------------


def test_completed_ids_are_keyed_by_scenario_agent_mode_variant_and_trial(tmp_path: Path):
    path = write_bytes(
        tmp_path / "run.jsonl",
        line(record("a", "x")),
        line(record("a", "y")),
        line(record("b", "x")),
        line(record("a", "x")),
        line({**record("a", "x"), "variant": "prose", "trial": 2}),
    )
    assert completed_ids(path) == {
        ("a", "x", "tools", "default", 0),
        ("a", "y", "tools", "default", 0),
        ("b", "x", "tools", "default", 0),
        ("a", "x", "tools", "prose", 2),
    }


def test_an_episode_whose_last_record_is_an_error_is_not_complete(tmp_path: Path):
    failed = {**record("a", "x"), "stop_reason": "error"}
    path = write_bytes(
        tmp_path / "run.jsonl",
        line(record("b", "x")),
        line(record("a", "x")),
        line(failed),
        line({**record("b", "x"), "stop_reason": "error"}),
        line(record("b", "x")),
    )
    assert completed_ids(path) == {("b", "x", "tools", "default", 0)}


def test_completed_ids_leave_out_a_torn_last_line(tmp_path: Path):
    path = write_bytes(tmp_path / "run.jsonl", line(record("a")), line(record("b"))[:30])
    assert completed_ids(path) == {("a", "sim:oracle", "tools", "default", 0)}


def test_completed_ids_of_a_missing_file_are_empty(tmp_path: Path):
    assert completed_ids(tmp_path / "nope.jsonl") == set()


# -- views -------------------------------------------------------------------------


def sim_record(agent: str = "sim:wrong_argument") -> dict[str, Any]:
    from agentproc.agents.sim import run_sim_episode
    from agentproc.procedures import Cell, generate_procedure
    from agentproc.runs import episode_record
    from agentproc.workflow import scenario_of

    scenario = scenario_of(generate_procedure(Cell(steps=5), 0, 0))
    return dict(episode_record(run_sim_episode(scenario, agent)))


def test_every_view_of_a_version_1_line_has_the_fields_of_the_same_version_2_line(
    tmp_path: Path,
):
    from agentproc.runs.layout import line_of

    rec = sim_record()
    v2 = tmp_path / "v2.jsonl"
    v2.write_text(line_of(rec))
    v1 = tmp_path / "v1.jsonl"
    v1.write_text(json.dumps({**rec, "schema_version": 1}) + "\n")

    def bare(r: Any) -> dict[str, Any]:
        return {k: v for k, v in r.items() if k != "schema_version" and v is not None}

    for view in ("head", "whole"):
        (new,) = [bare(r) for _, r in read_run(v2, view=view)]
        (old,) = [bare(r) for _, r in read_run(v1, view=view)]
        assert old == new, view
    (head,) = [r for _, r in read_run(v1, view="head")]
    assert not {"calls", "procedure", "scenario", "messages", "injected", "bulk"} & head.keys()


def test_the_labelling_view_leaves_the_bulk_and_rewrites_only_the_head(tmp_path: Path):
    from agentproc.runs.layout import line_of

    rec = sim_record()
    raw = line_of(rec)
    path = tmp_path / "run.jsonl"
    path.write_text(raw)
    (line,) = read_lines(path, view="labelling")
    assert line.cut and "bulk" not in line.rec and "messages" not in line.rec
    assert type(line.rec["labels"]) is bytes  # compared as text before it is parsed
    assert line.recorded_labels(rec["labels"]) is rec["labels"]  # the same text: not parsed
    assert line.recorded_labels([]) == rec["labels"]  # another text: parsed
    metrics = {**rec["metrics"], "verdict": "wrong"}
    again = line.relabelled([], metrics)  # type: ignore[arg-type]
    tail = raw[raw.index(',"calls":[') :]
    assert again.endswith(tail) and json.loads(again)["labels"] == []
    assert json.loads(again)["verdict"] == "wrong"


def test_a_whole_record_is_read_again_where_it_lies(tmp_path: Path):
    path = write_bytes(tmp_path / "run.jsonl", b"\n", line(record("a")), b"  \n", line(record("b")))
    lines = list(read_lines(path, view="head"))
    assert [x.where.lineno for x in lines] == [2, 4]
    assert [read_at(x.where)["scenario_id"] for x in lines] == ["a", "b"]


def test_a_head_whose_labels_hold_an_unknown_kind_names_the_field(tmp_path: Path):
    from agentproc.runs.layout import line_of

    rec = sim_record()
    rec["labels"] = [{"kind": "napping"}]
    path = tmp_path / "run.jsonl"
    path.write_text(line_of(rec))
    for view in ("head", "labelling", "whole"):
        with pytest.raises(RunFileError) as err:
            for x in read_lines(path, view=view):  # type: ignore[arg-type]
                x.recorded_labels([])
        assert err.value.field == "line 1: labels[0].kind", view


def test_no_module_but_the_reader_spells_a_run_file_key_in_bytes():
    # The cut of a line at its keys lives in one place (runs/runfile.py).
    import ast

    import agentproc

    package = Path(agentproc.__file__).parent
    found = []
    for path in package.rglob("*.py"):
        if path.name == "runfile.py" and path.parent.name == "runs":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            keys = (b'"calls"', b'"bulk"', b'"labels"', b'"schema_version"', b'"procedure"')
            if isinstance(node, ast.Constant) and isinstance(node.value, bytes):
                found += [f"{path.name}: {node.value!r}" for k in keys if k in node.value]
    assert found == []


def test_an_unknown_view_is_refused_naming_the_views(tmp_path: Path):
    path = write_bytes(tmp_path / "run.jsonl", line(record("a")))
    with pytest.raises(ValueError, match="expected one of: head, labelling, whole"):
        list(read_run(path, view="calls"))  # type: ignore[arg-type]
