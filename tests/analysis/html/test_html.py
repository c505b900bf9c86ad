"""The HTML report as a file: self-contained, escaped, every episode in its data."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from helpers import step, submit
from html_runs import (
    HOSTILE,
    HOSTILE_ID,
    hostile_record,
    scripted_record,
    sim_records,
    write_plain_run,
    write_run,
)

from agentproc.agents.sim import run_sim_episode
from agentproc.analysis import aggregate, report_json
from agentproc.analysis.html import html_report, write_html_report
from agentproc.analysis.html.episodes import scenario_view
from agentproc.analysis.html.figures import position_bin
from agentproc.cli.main import main
from agentproc.errors import RunFileError
from agentproc.procedures import preset, write_suite
from agentproc.runs import RunWriter, episode_record, read_at, read_run, scenario_of_record
from agentproc.runs.runfile import last_heads
from agentproc.workflow import load_scenarios

RECORDED = Path(__file__).parents[3] / "scenarios" / "recorded" / "local-smollm2.jsonl"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("html") / "run.jsonl"
    return write_run(path, [*sim_records(), hostile_record()])


def page_data(html: str) -> dict:
    match = re.search(r"<script type='application/json' id='data'>(.*?)</script>", html, re.S)
    assert match is not None
    return json.loads(match.group(1))


def test_the_report_fetches_nothing_and_forbids_fetching(run: Path):
    html = html_report([run]).html
    assert "Content-Security-Policy" in html and "default-src 'none'" in html
    markup = re.sub(r"<script type='application/json' id='data'>.*?</script>", "", html, flags=re.S)
    urls = re.findall(r"(?:src|href)\s*=\s*['\"]?([^'\" >]+)", markup)
    assert all(u.startswith("#") for u in urls), urls
    assert "<link" not in html and "@import" not in html and "url(http" not in html


def test_model_markup_never_reaches_the_page_as_markup(run: Path):
    html = html_report([run]).html
    assert HOSTILE not in html and "<script>window" not in html
    assert html.count("<script") == 2  # the data and the report's own script
    assert "<i>x</i>" not in html and "<b>0000</b>" not in html
    data = page_data(html)  # the JSON still holds the text exactly
    at = data["rows"]["id"].index(HOSTILE_ID)
    detail = data["details"][str(at)]
    assert detail["calls"][0][1] == HOSTILE and detail["turns"][0][0] == HOSTILE


def test_every_episode_has_a_row_with_verdict_divergence_and_labels(run: Path):
    rows = page_data(html_report([run]).html)["rows"]
    assert len(rows["id"]) == len(sim_records()) + 1
    verdicts = {rows["verdict"][i] for i in range(len(rows["id"]))}
    assert len(verdicts) >= 3
    kinds = rows["kinds"]
    skipped = rows["series_names"].index("sim:skipped_step")
    for i in range(len(rows["id"])):
        if rows["series"][i] == skipped:
            assert str(kinds.index("skipped_step")) in rows["labels"][i]
            assert rows["div"][i] is not None


def test_the_figures_and_the_cell_table_are_in_the_page(run: Path):
    html = html_report([run]).html
    for title in (
        "First-answer accuracy by length",
        "Faithful accuracy by length",
        "First-answer accuracy by look-back",
        "Unfaithful-correct gap by length",
        "Execution by length",
        "Label mix by length",
        "Where the first divergence happens",
    ):
        assert title in html
    assert "<polygon" in html  # interval bands
    cells = re.search(r"<table id='cell-table'.*?<tbody>(.*?)</tbody>", html, re.S)
    assert cells is not None and cells.group(1).count("<tr>") == 4 * 4 + 1  # the hostile one: 1


def test_several_runs_are_compared_side_by_side_with_a_legend(tmp_path: Path):
    a = write_run(tmp_path / "a.jsonl", sim_records(("sim:oracle",), 1))
    b = write_run(tmp_path / "b.jsonl", sim_records(("sim:skipped_step",), 1))
    html = html_report([a, b]).html
    section = html[html.index("<section id='compare'>") :]
    assert "sim:oracle" in section and "sim:skipped_step" in section
    assert "First-answer accuracy by length" in section


def test_a_file_given_twice_counts_each_episode_once_with_a_warning(run: Path):
    result = html_report([run, run])
    assert result.episodes == len(sim_records()) + 1
    assert any("superseded" in w for w in result.warnings)


def test_the_fast_reader_gives_the_report_the_full_reader_gives(run: Path):
    fast = aggregate(rec for _, rec in last_heads([run], []).values())
    full = aggregate(rec for _, rec in read_run(run))
    assert report_json(fast) == report_json(full)
    assert fast.episodes == len(sim_records()) + 1


def test_the_fast_reader_of_a_version_1_file_gives_the_full_readers_report():
    assert b'"schema_version":1,' in RECORDED.read_bytes()[:40]
    fast = aggregate(rec for _, rec in last_heads([RECORDED], []).values())
    full = aggregate(rec for _, rec in read_run(RECORDED))
    assert report_json(fast) == report_json(full) and fast.episodes > 0


def test_the_drill_down_of_a_run_that_refers_to_its_suite_shows_the_procedure(tmp_path: Path):
    suite = tmp_path / "suite"
    write_suite(preset("quick").model_copy(update={"count": 1}), suite)
    run = tmp_path / "run.jsonl"
    scenarios = list(load_scenarios(suite))[:2]
    with RunWriter(run) as writer:
        for scenario in scenarios:
            writer.write(episode_record(run_sim_episode(scenario, "sim:skipped_step")))
    assert all('"scenario_ref":' in line for line in run.read_text().splitlines())
    data = page_data(html_report([run]).html)
    at = data["rows"]["id"].index(scenarios[0].id)
    detail = data["details"][str(at)]
    assert [s[0] for s in detail["steps"]] == [s.text for s in scenarios[0].steps]
    assert detail["answer"] == scenarios[0].answer and detail["inputs"] == scenarios[0].inputs
    assert detail["calls"] and detail["calls"][0][0].startswith("step_")


def test_a_suite_no_longer_at_hand_leaves_the_tables_and_says_why_no_procedure(
    tmp_path: Path,
):
    suite = tmp_path / "suite"
    write_suite(preset("quick").model_copy(update={"count": 1}), suite)
    run = tmp_path / "run.jsonl"
    scenarios = list(load_scenarios(suite))[:2]
    with RunWriter(run) as writer:
        for scenario in scenarios:
            writer.write(episode_record(run_sim_episode(scenario, "sim:oracle")))
    shutil.move(suite, tmp_path / "moved")
    result = html_report([run])
    assert result.episodes == 2 and result.detailed == 2
    assert any("drill-downs show no procedure" in w and "--suite" in w for w in result.warnings)
    detail = page_data(result.html)["details"]["0"]
    assert "is not here" in detail["unavailable"] and detail["steps"] == []
    assert detail["calls"][0][0] == "step_1"


def test_an_unknown_label_kind_is_bad_input_naming_the_line(tmp_path: Path):
    rec = sim_records(("sim:skipped_step",), 1)[0]
    rec["labels"][0]["kind"] = "napping"
    path = write_run(tmp_path / "r.jsonl", [sim_records(("sim:oracle",), 1)[0], rec])
    with pytest.raises(RunFileError, match=r"line 2: labels\[0\]\.kind"):
        last_heads([path], [])


def test_a_torn_last_line_is_skipped_with_a_warning(tmp_path: Path):
    recs = sim_records(("sim:oracle",), 1)[:2]
    path = write_run(tmp_path / "r.jsonl", recs)
    path.write_bytes(path.read_bytes()[:-40])
    warnings: list[str] = []
    heads = last_heads([path], warnings)
    assert len(heads) == 1 and "torn last line" in warnings[0]


def test_a_record_in_another_key_order_is_read_whole(tmp_path: Path):
    rec = {**sim_records(("sim:oracle",), 1)[0], "schema_version": 1}
    reordered = {"labels": rec["labels"], **{k: v for k, v in rec.items() if k != "labels"}}
    path = write_plain_run(tmp_path / "r.jsonl", [reordered])
    assert next(iter(last_heads([path], []).values()))[1]["verdict"] == rec["verdict"]


def test_the_drill_down_keeps_to_its_budget_and_says_how_to_see_the_rest(run: Path):
    full = html_report([run])
    small = html_report([run], budget=20_000)
    assert full.detailed == full.episodes
    assert 0 < small.detailed < full.episodes
    assert "agentproc replay" in small.html  # the script names the command for the others
    header = small.html[small.html.index("<header>") : small.html.index("</header>")]
    assert f"<code>agentproc replay {run} --episode ID</code>" in header
    assert "agentproc replay" not in full.html[: full.html.index("</header>")]


def test_divergence_positions_fall_in_tenths_and_the_answer_apart():
    assert [position_bin(k, 95) for k in (1, 10, 50, 95)] == [0, 0, 5, 9]
    assert position_bin(None, 5) == 10


def test_the_cli_writes_the_report_and_says_so(run: Path, tmp_path: Path, capsys):
    out = tmp_path / "report.html"
    assert main(["report", str(run), "--html", str(out)]) == 0
    assert out.read_text().startswith("<!DOCTYPE html>")
    assert f"wrote {out}" in capsys.readouterr().out


def test_bad_run_file_exits_2_naming_the_line_and_keeps_the_old_report(tmp_path: Path, capsys):
    out = tmp_path / "report.html"
    out.write_text("old report")
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({**sim_records(("sim:oracle",), 1)[0], "verdict": "great"}) + "\n")
    assert main(["report", str(bad), "--html", str(out), "--overwrite"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("agentproc: error: ") and "line 1: verdict" in err
    assert len(err.strip().splitlines()) == 1 and out.read_text() == "old report"


def test_a_folder_as_output_is_bad_input(run: Path, tmp_path: Path, capsys):
    assert main(["report", str(run), "--html", str(tmp_path)]) == 2
    assert "is a folder" in capsys.readouterr().err


def test_the_recorded_run_of_the_embedded_model_has_its_turns_and_tokens(tmp_path: Path):
    result = write_html_report([RECORDED], tmp_path / "r.html")
    data = page_data(result.html)
    turns = data["details"]["0"]["turns"]
    assert turns and all(t[2] is not None and t[3] is not None for t in turns)


def test_html_with_json_prints_the_json_and_writes_the_page(run: Path, tmp_path: Path, capsys):
    out = tmp_path / "report.html"
    assert main(["report", str(run), "--json", "--html", str(out)]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["episodes"] == len(sim_records()) + 1
    assert f"wrote {out}" in captured.err and out.stat().st_size > 0


def test_the_procedure_read_straight_shows_what_its_compiled_scenario_shows(tmp_path: Path):
    recs = sim_records(("sim:oracle",), 2)
    path = write_run(tmp_path / "r.jsonl", recs)
    for key, (where, _) in last_heads([path], []).items():
        rec = dict(read_at(where))
        assert "procedure" in rec and "scenario" not in rec
        compiled = scenario_of_record(path, where.lineno, rec).model_dump(mode="json")  # type: ignore[arg-type]
        view = scenario_view(where, rec)
        for field in ("inputs", "answer", "answer_variable", "finish"):
            assert view[field] == compiled[field], (key, field)
        assert [(s["text"], s["live"], s["expected_call"]) for s in view["steps"]] == [
            (s["text"], s["live"], s["expected_call"]) for s in compiled["steps"]
        ]


def test_the_call_table_lines_calls_up_by_step_past_a_reordering_a_skip_and_an_extra_call(
    tmp_path: Path,
):
    calls = [step(2), step(1), step(4), ("finish", {"x": 1}), submit()]  # step 3 never runs
    run = write_run(tmp_path / "run.jsonl", [scripted_record(calls)])
    detail = page_data(html_report([run]).html)["details"]["0"]
    assert [r[:3] for r in detail["rows"]] == [
        ["1", detail["steps"][0][2], 1],
        ["2", detail["steps"][1][2], 0],  # reordered: on its own step's row
        ["3", detail["steps"][2][2], None],  # skipped: no call
        ["4", detail["steps"][3][2], 2],
        ["", "", 3],  # invented: no expected call
        ["answer", 'submit_answer({"answer":3.0})', 4],
    ]
    assert [chip[1] for chip in detail["rows"][2][3]] == ["skipped_step"]
    assert detail["episode_labels"] == []  # the skip is on its step's row, not repeated
    assert detail["mark"] == 1  # the first divergence: the reordered call, on step 2's row


def test_a_first_divergence_at_a_skipped_step_marks_that_steps_row(tmp_path: Path):
    run = write_run(
        tmp_path / "run.jsonl", [scripted_record([step(1), step(3), step(4), submit()])]
    )
    detail = page_data(html_report([run]).html)["details"]["0"]
    assert detail["rows"][detail["mark"]][:3] == ["2", detail["steps"][1][2], None]


def test_every_episode_has_an_anchor_unique_and_the_same_in_every_report_of_the_file(run: Path):
    first = page_data(html_report([run]).html)["rows"]["anchor"]
    again = page_data(html_report([run]).html)["rows"]["anchor"]
    assert first == again and len(set(first)) == len(first)
    assert all(re.fullmatch(r"ep-[0-9a-f]{12}", a) for a in first)


def test_the_cell_table_shows_each_cells_realised_look_back_or_a_dash(tmp_path: Path):
    recs = sim_records(("sim:oracle",), 2)
    old = json.loads(json.dumps(recs[0]))
    old["agent"] = "sim:old"
    del old["params"]["realised_lookback"]
    html = html_report([write_run(tmp_path / "r.jsonl", [*recs, old])]).html
    table = re.search(r"<table id='cell-table'.*?</table>", html, re.S)
    assert table is not None
    heads = re.findall(r"<button type='button'>(.*?)</button>", table.group(0))
    assert heads[3:5] == ["L", "dist"]
    shown = {}
    for agent, rest in re.findall(r"<tr><td>(.*?)</td>(.*?)</tr>", table.group(0), re.S):
        cell, _, _, dist = re.findall(r">([^<]*)</td>", rest)[:4]
        shown[agent, cell] = dist
    expected: dict[tuple[str, str], str] = {}
    for r in recs:
        d = r["params"]["realised_lookback"]
        at = ("sim:oracle", r["cell"])
        expected[at] = str(max(d, int(expected.get(at, "0"))))
    assert {"1", "3"} == set(expected.values())  # L=1 reads at 1, L=3 at 3
    assert shown == {**expected, ("sim:old", old["cell"]): "—"}
