"""The command line: exact outputs, exit codes, and one clear line for bad input."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import records

from agentproc.cli import main
from agentproc.procedures.suites import distance_summary
from agentproc.runs.layout import line_of


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()  # drop what fixtures printed
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    assert (
        main(
            [
                "generate",
                "--steps",
                "3,5",
                "--lookback",
                "1,3",
                "--count",
                "2",
                "--out",
                str(tmp_path / "s"),
            ]
        )
        == 0
    )
    return tmp_path / "s"


def test_generate_writes_a_grid_of_cells(capsys, tmp_path: Path):
    code, out, _ = cli(
        capsys,
        "generate",
        "--steps",
        "5,25,95",
        "--lookback",
        "1,7",
        "--count",
        "3",
        "--seed",
        "4",
        "--out",
        tmp_path / "g",
    )
    lines = out.strip().splitlines()
    assert code == 0 and lines[0] == f"wrote 18 procedures in 6 cells to {tmp_path / 'g'}"
    assert lines[1] == "look-back 1: realised distance at most 1; steps by distance 1: 100.0%"
    assert lines[2].startswith("look-back 7: realised distance at most ")
    grid = json.loads((tmp_path / "g" / "suite.json").read_text())["grid"]
    assert grid["seed"] == 4 and grid["count"] == 3
    assert len((tmp_path / "g" / "procedures.jsonl").read_text().splitlines()) == 18


def test_generate_is_byte_identical_for_the_same_arguments(tmp_path: Path):
    for name in ("a", "b"):
        main(["generate", "--preset", "quick", "--count", "2", "--out", str(tmp_path / name)])
    assert (tmp_path / "a" / "procedures.jsonl").read_bytes() == (
        tmp_path / "b" / "procedures.jsonl"
    ).read_bytes()


def test_generate_takes_ranges_ops_and_modes(capsys, tmp_path: Path):
    code, _, _ = cli(
        capsys,
        "generate",
        "--steps",
        "4",
        "--range",
        "0:1,10:100",
        "--ops",
        "mixed,add+sub",
        "--mode",
        "decimal,integer",
        "--count",
        "1",
        "--out",
        tmp_path / "g",
    )
    assert code == 0
    cells = {
        json.loads(line)["id"].rsplit("-", 1)[0]
        for line in (tmp_path / "g" / "procedures.jsonl").open()
    }
    assert "n4-L3-r10_100-add+sub-integer" in cells and len(cells) == 8


def test_run_then_report_and_replay(capsys, suite: Path, tmp_path: Path):
    run = tmp_path / "run.jsonl"
    code, out, _ = cli(capsys, "run", suite, "--agent", "sim:skipped_step", "--out", run)
    assert code == 0 and out.startswith(f"wrote 8 episodes to {run}")
    code, out, _ = cli(capsys, "report", run)
    assert code == 0 and "sim:skipped_step" in out and "skipped" in out
    code, out, _ = cli(capsys, "report", run, "--json")
    data = json.loads(out)
    assert data["episodes"] == 8
    code, out, _ = cli(capsys, "replay", run)
    assert code == 0 and "8 episodes replayed; 0 differ from the recording" in out


def test_replay_json_labels_every_call_with_kind_call_index_and_step(
    capsys, suite: Path, tmp_path: Path
):
    run = tmp_path / "run.jsonl"
    cli(capsys, "run", suite, "--agent", "sim:premature_finish", "--out", run)
    first = json.loads(run.read_text().splitlines()[0])
    code, out, _ = cli(capsys, "replay", run, "--episode", first["scenario_id"], "--json")
    data = json.loads(out)
    assert code == 0 and data["verdict"] == first["verdict"] and data["differences"] == []
    for lab in data["labels"]:
        assert {"kind", "call_index", "step"} <= lab.keys()
    assert any(
        lab["kind"] == "premature_finish" and "missing_steps" in lab for lab in data["labels"]
    )


def test_replay_reports_a_tampered_recording(capsys, suite: Path, tmp_path: Path):
    run = tmp_path / "run.jsonl"
    cli(capsys, "run", suite, "--agent", "sim:oracle", "--out", run)
    lines = run.read_text().splitlines()
    rec = records(run)[0]
    rec["calls"][0]["result"] = "S3 = 999.000"
    rec["labels"] = [{"kind": "skipped_step", "call_index": None, "step": 1}]
    run.write_text("\n".join([line_of(rec).rstrip("\n"), *lines[1:]]) + "\n")
    code, out, _ = cli(capsys, "replay", run, "--episode", rec["scenario_id"])
    assert code == 1
    assert "call 0: result was 'S3 = 999.000'" in out
    assert "label recorded but not found on replay" in out
    assert "first divergence" not in out  # a faithful trace has none


def test_replay_timeline_marks_the_first_divergence(capsys, suite: Path, tmp_path: Path):
    run = tmp_path / "run.jsonl"
    cli(capsys, "run", suite, "--agent", "sim:wrong_answer", "--out", run)
    rec = records(run)[0]
    code, out, _ = cli(capsys, "replay", run, "--episode", rec["scenario_id"])
    n = len(rec["calls"]) - 1
    assert code == 0 and f"▶ {n}" in out
    assert f"first divergence: call {n} at the answer: wrong_answer" in out


def test_replay_messages_from_an_openai_message_list(capsys, tmp_path: Path):
    from agentproc import Cell, generate_procedure, run_sim_episode, scenario_of

    s = scenario_of(generate_procedure(Cell(steps=4, lookback=2), 0, 0))
    (tmp_path / "s.json").write_text(json.dumps(s.model_dump(mode="json")))
    ep = run_sim_episode(s, "sim:reordered")
    (tmp_path / "m.json").write_text(json.dumps(ep.messages))
    code, out, _ = cli(
        capsys,
        "replay",
        "--scenario",
        tmp_path / "s.json",
        "--messages",
        tmp_path / "m.json",
        "--json",
    )
    data = json.loads(out)
    assert code == 0 and data["differences"] == []
    assert [lab["kind"] for lab in data["labels"]] == [lab.kind.value for lab in ep.labels]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["generate", "--preset", "huge", "--out", "{tmp}/x"],
            "unknown preset 'huge' (expected one of: quick, reference, sop)",
        ),
        (["generate", "--steps", "0", "--out", "{tmp}/x"], "steps"),
        (
            ["run", "{tmp}/nope", "--agent", "sim:oracle", "--out", "{tmp}/r.jsonl"],
            "{tmp}/nope: no such file",
        ),
        (
            ["run", "{suite}", "--agent", "sim:nope", "--out", "{tmp}/r.jsonl"],
            "unknown agent 'sim:nope'",
        ),
        (
            ["run", "{suite}", "--agent", "sim:oracle", "--shard", "3/2", "--out", "{tmp}/r.jsonl"],
            "--shard 3/2",
        ),
        (["report", "{tmp}/missing.jsonl"], "{tmp}/missing.jsonl: no such file"),
        (["replay", "{tmp}/bad.jsonl"], "{tmp}/bad.jsonl: line 1: not valid JSON"),
        (["replay", "{tmp}/nofield.jsonl"], "{tmp}/nofield.jsonl: line 1: calls: missing"),
        (
            ["report", "{tmp}/badkind.jsonl"],
            "{tmp}/badkind.jsonl: line 1: labels[0].kind: unknown label kind 'oops'",
        ),
        (
            ["replay", "--scenario", "{tmp}/broken.json", "--messages", "{tmp}/m.json"],
            "{tmp}/broken.json: steps.0.op",
        ),
        (
            ["replay", "--scenario", "{tmp}/s.json", "--messages", "{tmp}/badm.json"],
            "messages[1].tool_calls[0].function.name",
        ),
    ],
)
def test_bad_input_gives_one_line_naming_file_and_field_and_exit_2(
    capsys, tmp_path: Path, suite: Path, argv, message
):
    from agentproc import Cell, generate_procedure, scenario_of

    s = scenario_of(generate_procedure(Cell(steps=2), 0, 0)).model_dump(mode="json")
    (tmp_path / "s.json").write_text(json.dumps(s))
    s["steps"][0]["op"] = "pow"
    (tmp_path / "broken.json").write_text(json.dumps(s))
    (tmp_path / "m.json").write_text("[]")
    (tmp_path / "badm.json").write_text(
        json.dumps(
            [
                {"role": "user", "content": "hi"},
                {"role": "assistant", "tool_calls": [{"function": {}}]},
            ]
        )
    )
    (tmp_path / "bad.jsonl").write_text("{not json\n{}\n")
    (tmp_path / "nofield.jsonl").write_text(
        json.dumps({"scenario_id": "x", "agent": "a", "cell": "c", "params": {}, "scenario": {}})
        + "\n"
    )
    good = {
        "scenario_id": "x",
        "agent": "a",
        "cell": "c",
        "params": {},
        "scenario": {},
        "calls": [],
        "labels": [{"kind": "oops"}],
        "metrics": {},
        "verdict": "wrong",
    }
    (tmp_path / "badkind.jsonl").write_text(json.dumps(good) + "\n")
    argv = [a.format(tmp=tmp_path, suite=suite) for a in argv]
    code, _, err = cli(capsys, *argv)
    assert code == 2
    assert message.format(tmp=tmp_path) in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_run_refuses_to_overwrite_an_existing_run_file(capsys, suite: Path, tmp_path: Path):
    run = tmp_path / "run.jsonl"
    run.write_text("precious\n")
    code, _, err = cli(capsys, "run", suite, "--agent", "sim:oracle", "--out", run)
    assert code == 2 and "--resume" in err and run.read_text() == "precious\n"


def test_torn_last_line_is_reported_and_skipped(capsys, suite: Path, tmp_path: Path):
    run = tmp_path / "run.jsonl"
    cli(capsys, "run", suite, "--agent", "sim:oracle", "--out", run)
    with open(run, "a") as fh:
        fh.write('{"scenario_id": "torn", "agent"')
    code, out, err = cli(capsys, "report", run, "--json")
    assert code == 0 and json.loads(out)["episodes"] == 8
    assert f"{run}: line 9: torn last line (an interrupted write) skipped" in err


def test_resume_skips_done_episodes_and_repairs_a_torn_tail(capsys, suite: Path, tmp_path: Path):
    run = tmp_path / "run.jsonl"
    cli(capsys, "run", suite, "--agent", "sim:oracle", "--out", run, "--limit", "3")
    with open(run, "a") as fh:
        fh.write('{"scenario_id": "torn"')
    code, out, err = cli(capsys, "run", suite, "--agent", "sim:oracle", "--out", run, "--resume")
    assert code == 0 and "wrote 5 episodes" in out and "(3 already done)" in out
    assert f"{run}: cut off a torn last line (22 bytes of an interrupted write)" in err
    ids = [json.loads(line)["scenario_id"] for line in run.read_text().splitlines()]
    assert len(ids) == len(set(ids)) == 8


def shard_ids(capsys, suite: Path, spec: str, out: Path) -> list[str]:
    """The scenarios ``run --shard spec`` writes, in file order."""
    code, _, _ = cli(
        capsys, "run", suite, "--agent", "sim:oracle", "--shard", spec, "--overwrite", "--out", out
    )
    assert code == 0
    return [json.loads(line)["scenario_id"] for line in out.open()]


def test_shards_split_a_suite_without_overlap(capsys, suite: Path, tmp_path: Path):
    ids: set[str] = set()
    for i in (1, 2, 3):
        part = set(shard_ids(capsys, suite, f"{i}/3", tmp_path / f"r{i}.jsonl"))
        assert not part & ids
        ids |= part
    assert len(ids) == 8
    _, out, _ = cli(capsys, "report", *(tmp_path / f"r{i}.jsonl" for i in (1, 2, 3)), "--json")
    assert json.loads(out)["episodes"] == 8


def test_a_span_of_shards_runs_the_shards_it_spans(capsys, suite: Path, tmp_path: Path):
    def ids(spec: str) -> list[str]:
        return shard_ids(capsys, suite, spec, tmp_path / f"r{spec.replace('/', '_')}.jsonl")

    order = ids("1-4/4")  # every shard: the whole suite, in suite order
    assert len(order) == 8
    two = ids("2-3/4")
    assert set(two) == set(ids("2/4")) | set(ids("3/4")) and two == [i for i in order if i in two]
    assert ids("3/4") == ids("3-3/4")


def test_commands_that_run_no_agent_do_not_import_langchain_or_langgraph(
    suite: Path, tmp_path: Path
):
    run = tmp_path / "run.jsonl"
    main(["run", str(suite), "--agent", "sim:oracle", "--out", str(run)])
    for argv in (
        ["--help"],
        ["generate", "--steps", "3", "--count", "1", "--out", str(tmp_path / "g")],
        ["replay", str(run)],
        ["report", str(run)],
    ):
        code = (
            "import sys\nfrom agentproc.cli import main\n"
            f"try:\n    main({argv!r})\nexcept SystemExit:\n    pass\n"
            "print(sorted({m.split('.')[0] for m in sys.modules"
            " if m.startswith(('langchain', 'langgraph'))}))"
        )
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout
        assert out.strip().splitlines()[-1] == "[]", argv


def test_selfcheck_json_reports_precision_and_recall(capsys, monkeypatch):
    from agentproc.agents.sim import INJECTORS, selfcheck

    monkeypatch.setattr(
        selfcheck,
        "GRID",
        {"steps": (3, 25), "lookback": (1, 7), "range": ((1.0, 10.0),), "mode": ("decimal",)},
    )
    monkeypatch.setattr(selfcheck.run_selfcheck, "__defaults__", (5, 0, selfcheck.GRID, None))
    monkeypatch.setattr(selfcheck.cells, "__defaults__", (selfcheck.GRID,))
    code, out, _ = cli(capsys, "selfcheck", "--count", "2", "--json")
    data = json.loads(out)
    assert code == 0 and data["perfect"] is True and data["episodes"] == 4 * 2 * len(INJECTORS)
    assert all(v["precision"] == 1.0 and v["recall"] == 1.0 for v in data["labels"].values())


def test_generate_refuses_to_replace_a_suite_unless_told(capsys, suite: Path):
    before = (suite / "procedures.jsonl").read_bytes()
    code, _, err = cli(capsys, "generate", "--steps", "7", "--count", "1", "--out", suite)
    assert (
        code == 2 and "--overwrite" in err and (suite / "procedures.jsonl").read_bytes() == before
    )
    code, _, _ = cli(
        capsys, "generate", "--steps", "7", "--count", "1", "--out", suite, "--overwrite"
    )
    assert code == 0 and len((suite / "procedures.jsonl").read_text().splitlines()) == 1


def test_timeline_rendering_matches_golden(suite: Path, tmp_path: Path):
    import io
    import os

    from helpers import step, submit, tiny_scenario
    from rich.console import Console

    from agentproc.analysis import replay_calls
    from agentproc.analysis.render.timeline import render_timeline

    replay = replay_calls(
        tiny_scenario(), [step(1), step(2, S3=3), ("step_9", {}), step(4, S4=9, S3=5), submit(1.8)]
    )
    console = Console(file=io.StringIO(), width=120, color_system=None, force_terminal=False)
    render_timeline(replay, console)
    text = console.file.getvalue()
    golden = Path(__file__).parents[1] / "golden" / "timeline_tiny.txt"
    if os.environ.get("AGENTPROC_UPDATE_GOLDEN"):
        golden.write_text(text)
    assert text == golden.read_text()


@pytest.mark.parametrize("command", [["replay"], ["report", "--html"]])
def test_replay_and_the_html_report_read_the_run_with_the_collector_paused(
    capsys, suite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: list[str]
):
    import gc

    import agentproc.analysis as analysis
    import agentproc.analysis.html as html

    run = tmp_path / "run.jsonl"
    assert cli(capsys, "run", suite, "--agent", "sim:skipped_step", "--out", run)[0] == 0
    seen: list[bool] = []
    replay_record, build = analysis.replay_record, html.write_html_report
    monkeypatch.setattr(
        analysis, "replay_record", lambda *a: seen.append(gc.isenabled()) or replay_record(*a)
    )
    monkeypatch.setattr(
        html, "write_html_report", lambda *a, **k: seen.append(gc.isenabled()) or build(*a, **k)
    )
    argv = [command[0], run, *(["--html", tmp_path / "r.html"] if command[1:] else [])]
    assert gc.isenabled()
    code, _, _ = cli(capsys, *argv)
    assert code == 0 and seen and not any(seen)  # paused while reading
    assert gc.isenabled()  # and resumed after


def test_report_shows_the_realised_look_back_beside_each_look_back(
    capsys, suite: Path, tmp_path: Path
):
    run = tmp_path / "run.jsonl"
    assert cli(capsys, "run", suite, "--agent", "sim:oracle", "--out", run)[0] == 0
    manifest = json.loads((suite / "suite.json").read_text())
    realised = {r["lookback"]: r["realised"] for r in distance_summary(manifest)}
    assert realised[1] == 1 and 1 < realised[3] <= 3
    code, out, _ = cli(capsys, "report", run, "--json")
    rows = json.loads(out)["agents"]["sim:oracle"]["by_lookback"]
    assert {r["lookback"]: r["realised"]["max"] for r in rows} == realised
    assert all(1 <= r["realised"]["mean"] <= r["realised"]["max"] for r in rows)
    code, out, _ = cli(capsys, "report", run, "--by", "lookback")
    assert code == 0
    table = out[out.index("by look-back") :].split("└")[0]
    cells = [line.split("│")[1:3] for line in table.splitlines() if line.startswith("│")]
    shown = [(lb.strip(), dist.strip()) for lb, dist in cells if lb.strip()]
    assert shown == [("1", "1"), ("3", str(realised[3])), ("all", str(realised[3]))]
    assert "dist: the realised look-back" in out


def test_report_of_a_run_file_without_the_realised_look_back_shows_a_dash(
    capsys, suite: Path, tmp_path: Path
):
    run = tmp_path / "run.jsonl"
    assert cli(capsys, "run", suite, "--agent", "sim:oracle", "--out", run)[0] == 0
    text = run.read_text()
    old = re.sub(r'"realised_lookback":\d+,', "", text)
    assert old != text
    run.write_text(old)
    code, out, _ = cli(capsys, "report", run, "--by", "lookback")
    assert code == 0
    table = out[out.index("by look-back") :].split("└")[0]
    cells = [line.split("│")[1:3] for line in table.splitlines() if line.startswith("│")]
    assert [(lb.strip(), d.strip()) for lb, d in cells if lb.strip()] == [
        ("1", "-"),
        ("3", "-"),
        ("all", "-"),
    ]
    code, out, _ = cli(capsys, "report", run, "--json")
    rows = json.loads(out)["agents"]["sim:oracle"]["by_lookback"]
    assert code == 0 and [r["realised"] for r in rows] == [None, None]
