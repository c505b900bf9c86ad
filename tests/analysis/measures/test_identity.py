"""An agent in ``report``, ``check``, the tables and the HTML report is its name, what ran
it, its mode and its variant: two arms are two agents, and a run named after another
agent is never pooled with that agent's episodes."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentproc.analysis import aggregate
from agentproc.analysis.html import html_report
from agentproc.analysis.measures.identity import AgentId, agent_names
from agentproc.cli import main
from agentproc.runs import read_run


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three run files of one 4-scenario suite: sim:oracle, sim:oracle under the terse
    variant, and sim:skipped_step named ``sim:oracle``."""
    d = tmp_path_factory.mktemp("identity")
    assert main(["generate", "--steps", "4", "--count", "4", "--out", str(d / "s")]) == 0
    for out, extra in [
        ("oracle.jsonl", ["--agent", "sim:oracle"]),
        ("terse.jsonl", ["--agent", "sim:oracle", "--variant", "terse"]),
        ("named.jsonl", ["--agent", "sim:skipped_step", "--name", "sim:oracle"]),
    ]:
        assert main(["run", str(d / "s"), "--out", str(d / out), *extra]) == 0
    return d


def records(*paths: Path) -> list[dict]:
    return [rec for p in paths for _, rec in read_run(p)]


def test_two_run_files_of_two_variants_are_two_agents_in_the_report(runs: Path):
    report = aggregate(records(runs / "oracle.jsonl", runs / "terse.jsonl"))
    assert list(report.agents) == ["sim:oracle", "sim:oracle / terse"]
    assert [a.overall.n for a in report.agents.values()] == [4, 4]


def test_a_run_named_after_another_agent_is_kept_apart_with_a_note(runs: Path):
    report = aggregate(records(runs / "oracle.jsonl", runs / "named.jsonl"))
    assert list(report.agents) == ["sim:oracle", "sim:oracle (sim:skipped_step)"]
    assert report.agents["sim:oracle"].overall.faithful == 4
    assert report.agents["sim:oracle (sim:skipped_step)"].overall.faithful == 0
    (note,) = report.notes
    assert "'sim:oracle'" in note and "sim:skipped_step" in note and "\n" not in note


def test_distinct_names_show_no_spec_and_no_note():
    names, notes = agent_names(
        [
            AgentId("v1", "openai:m", "tools", "default"),
            AgentId("v2", "openai:m", "tools", "default"),
        ]
    )
    assert sorted(names.values()) == ["v1", "v2"] and notes == []


def test_one_name_on_two_specs_shows_both_specs():
    names, notes = agent_names(
        [AgentId("v2", "openai:a", "tools", "default"), AgentId("v2", "openai:b", "text", "x")]
    )
    assert sorted(names.values()) == ["v2 (openai:a)", "v2 (openai:b) / x [text]"]
    assert len(notes) == 1


def test_the_html_report_keeps_the_impostor_apart(runs: Path):
    result = html_report([runs / "oracle.jsonl", runs / "named.jsonl"])
    assert result.episodes == 8
    assert "sim:oracle (sim:skipped_step)" in result.html
    assert any("sim:skipped_step" in w for w in result.warnings)


def test_report_cli_prints_the_note_and_both_agents(runs: Path, capsys):
    capsys.readouterr()
    code = main(["report", str(runs / "oracle.jsonl"), str(runs / "named.jsonl")])
    out, err = capsys.readouterr()
    assert code == 0
    assert "superseded" not in err  # no episode of one hides the other's
    assert "note: 2 agents are named 'sim:oracle' (run by sim:oracle, sim:skipped_step)" in err
    assert "sim:oracle (sim:skipped_step): n=4" in " ".join(out.split())
    assert "sim:oracle: n=4" in " ".join(out.split())


def test_csv_tables_name_each_arm(runs: Path, tmp_path: Path):
    assert (
        main(
            [
                "report",
                str(runs / "oracle.jsonl"),
                str(runs / "terse.jsonl"),
                "--csv",
                str(tmp_path),
            ]
        )
        == 0
    )
    cells = (tmp_path / "cells.csv").read_text()
    assert "sim:oracle / terse" in cells


def test_check_refuses_a_file_of_two_arms_naming_both(runs: Path, tmp_path: Path, capsys):
    both = tmp_path / "both.jsonl"
    both.write_text((runs / "oracle.jsonl").read_text() + (runs / "named.jsonl").read_text())
    capsys.readouterr()
    assert main(["check", str(both)]) == 2
    err = capsys.readouterr().err
    assert "sim:oracle (sim:skipped_step)" in err


def test_compare_keeps_a_run_named_after_another_agent_as_its_own_arm(runs: Path):
    from agentproc.analysis import compare_files

    result, _ = compare_files([runs / "oracle.jsonl", runs / "named.jsonl", runs / "terse.jsonl"])
    assert set(result.arms) == {
        "sim:oracle/default",
        "sim:oracle (sim:skipped_step)/default",
        "sim:oracle/terse",
    }
    assert {len(a.outcomes) for a in result.arms.values()} == {4}


def test_one_model_on_two_endpoints_is_two_agents_told_apart_by_the_option(tmp_path: Path, capsys):
    from tests.fakes.openai_server import ScriptedServer

    assert main(["generate", "--steps", "3", "--count", "3", "--out", str(tmp_path / "s")]) == 0
    urls = []
    with ScriptedServer() as one, ScriptedServer() as two:
        for srv, out in ((one, "a.jsonl"), (two, "b.jsonl")):
            argv = ["run", str(tmp_path / "s"), "--agent", "openai:demo", "--out"]
            assert main([*argv, str(tmp_path / out), "--base-url", srv.base_url]) == 0
            urls.append(srv.base_url.rstrip("/"))
    capsys.readouterr()
    assert main(["report", str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl")]) == 0
    out, err = capsys.readouterr()
    assert "superseded" not in err  # neither run's episodes hide the other's
    note = "note: 2 agents are named 'openai:demo' (set up with --base-url "
    assert note in err and "run --name" in err
    assert all(f"--base-url {url}" in err for url in urls)  # in either order: ports differ
    flat = " ".join(out.split())
    assert all(f"openai:demo (--base-url {url}): n=3" in flat for url in urls)


def test_two_seeds_of_one_simulated_agent_are_two_agents(tmp_path: Path, capsys):
    assert main(["generate", "--steps", "4", "--count", "4", "--out", str(tmp_path / "s")]) == 0
    for out, seed in (("a.jsonl", "0"), ("b.jsonl", "5")):
        argv = ["run", str(tmp_path / "s"), "--agent", "sim:decay", "--seed", seed]
        assert main([*argv, "--out", str(tmp_path / out)]) == 0
    report = aggregate(records(tmp_path / "a.jsonl", tmp_path / "b.jsonl"))
    assert list(report.agents) == ["sim:decay", "sim:decay (--seed 5)"]
    assert [a.overall.n for a in report.agents.values()] == [4, 4]


def test_one_name_set_up_two_ways_shows_each_setup():
    names, notes = agent_names(
        [
            AgentId("local", "local", "tools", "default"),
            AgentId("local", "local", "tools", "default", "--tool-choice auto"),
        ]
    )
    assert sorted(names.values()) == ["local", "local (--tool-choice auto)"]
    (note,) = notes
    assert "set up with --tool-choice auto / the defaults" in note
