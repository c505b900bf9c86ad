"""``compare --html``: the comparison as one self-contained page, verdicts first, then
the arms side by side, the differences per label and per cell, and the discordant
scenarios linked to both episodes' drill-down."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from agentproc.analysis import compare_files
from agentproc.analysis.html.compare_page import compare_html
from agentproc.analysis.html.svg import esc
from agentproc.cli import main


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("compare-page")
    suite = d / "s"
    assert main(["generate", "--steps", "4,6", "--count", "4", "--out", str(suite)]) == 0
    out = {"suite": suite, "root": d}
    for agent in ("sim:oracle", "sim:skipped_step"):
        out[agent] = d / f"{agent.split(':')[1]}.jsonl"
        assert main(["run", str(suite), "--agent", agent, "--out", str(out[agent])]) == 0
    return out


def data_of(html: str) -> dict:
    found = re.search(r"<script type='application/json' id='data'>(.*?)</script>", html, re.S)
    assert found is not None
    return json.loads(found[1])


def test_the_page_leads_with_the_verdicts_then_arms_labels_cells_and_discordant(runs):
    paths = [runs["sim:oracle"], runs["sim:skipped_step"]]
    result, _ = compare_files(paths)
    page = compare_html(paths, result)
    html = page.html
    at = [
        html.index(s)
        for s in (
            "<ul class='verdicts'>",
            "The arms side by side",
            "Per label",
            "Per grid cell",
            "Discordant scenarios (8",
            "id='summary'",
            "id='episodes'",
        )
    ]
    assert at == sorted(at)
    (line,) = [c.line() for c in result.comparisons]
    assert f"<li class='verdict'>{esc(line)}</li>" in html
    assert "<script src" not in html and "<link" not in html  # self-contained
    assert page.episodes == 16 and page.detailed == 16


def test_every_discordant_link_opens_an_embedded_episode_of_its_arm(runs):
    paths = [runs["sim:oracle"], runs["sim:skipped_step"]]
    result, _ = compare_files(paths)
    html = compare_html(paths, result).html
    links = re.findall(r"<a class='discordant' href='#(ep-[0-9a-f]+)'>", html)
    data = data_of(html)
    anchors = data["rows"]["anchor"]
    assert len(links) == 16  # 8 discordant scenarios, each episode of both arms
    series = data["rows"]["series_names"]
    for link in links:
        i = anchors.index(link)
        assert str(i) in data["details"]
        assert series[data["rows"]["series"][i]] in ("sim:oracle", "sim:skipped_step")


def test_two_files_of_one_agent_are_two_arms_on_the_page(runs, tmp_path: Path):
    a, b = tmp_path / "v1.jsonl", tmp_path / "v2.jsonl"
    a.write_bytes(runs["sim:oracle"].read_bytes())
    b.write_bytes(runs["sim:oracle"].read_bytes())
    result, _ = compare_files([a, b])
    page = compare_html([a, b], result)
    assert page.episodes == 16
    assert set(data_of(page.html)["rows"]["series_names"]) == {"v1", "v2"}
    assert "None: every paired episode agrees." in page.html


def test_compare_html_on_the_command_line_writes_the_page(runs, tmp_path: Path, capsys):
    out = tmp_path / "cmp.html"
    capsys.readouterr()
    argv = ["compare", runs["sim:oracle"], runs["sim:skipped_step"], "--html", out]
    assert main([str(x) for x in argv]) == 0
    said = capsys.readouterr().out
    assert f"wrote {out}" in said and out.stat().st_size > 0
    assert main([str(x) for x in argv]) == 2  # an existing page is kept without --overwrite
    assert main([str(x) for x in [*argv, "--overwrite"]]) == 0


def test_compare_variants_html_reads_the_variants_run_files(runs, tmp_path: Path, capsys):
    out = tmp_path / "v.html"
    argv = ["compare", runs["suite"], "--variants", "default,terse", "--agent", "sim:decay"]
    code = main([str(x) for x in [*argv, "--out", tmp_path / "arms", "--html", out]])
    assert code == 0
    html = out.read_text()
    assert "sim:decay / terse" in html and "terse vs default" in html


def test_the_page_has_each_arms_horizon_and_the_paired_difference():
    from agentproc.analysis.compare.arms import compare_records
    from agentproc.analysis.html.compare_page import comparison_section
    from tests.analysis.compare.test_horizons import records

    result = compare_records(records({"default": 0.04, "careful": 0.015}))
    d = result.comparisons[0].horizon
    assert d is not None and d.ci is not None and d.ratio is not None and d.diff is not None
    html = comparison_section(result, {})
    table = html.split("<table class='horizons'>")[1].split("</table>")[0]
    assert html.index("The arms side by side") < html.index("Procedure horizon")
    for arm in result.arms.values():
        assert arm.horizon is not None and esc(arm.horizon.text()) in table
    assert f"{d.diff:+.3g} steps" in table
    assert f"\N{MULTIPLICATION SIGN}{d.ratio:.3g} <span class='ci'>[{d.ci[0]:.3g}, " in table
    assert "(longer)" in table and " *" in table
