"""The HTML report as a person sees it: opened in headless Chromium (Debian's
``chromium``) through Playwright, offline, with every request but the file refused."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from helpers import step, submit
from html_runs import (
    AGENTS,
    HOSTILE,
    HOSTILE_ID,
    hostile_record,
    oracle_calls,
    scripted_record,
    sim_records,
    write_run,
)

from agentproc.analysis.html import write_html_report
from agentproc.procedures import Cell, generate_procedure
from agentproc.workflow import scenario_of

CHROMIUM = Path("/usr/bin/chromium")
RECORDED = Path(__file__).parents[3] / "scenarios" / "recorded" / "local-smollm2.jsonl"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

if not CHROMIUM.exists():
    pytest.skip("no /usr/bin/chromium here (.ci/run installs it)", allow_module_level=True)

from playwright.sync_api import Page, sync_playwright  # noqa: E402


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("browser")
    run = write_run(folder / "run.jsonl", [*sim_records(per_cell=4), hostile_record()])
    out = folder / "report.html"
    write_html_report([run], out)
    return out


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser: Any, report: Path) -> Iterator[Page]:
    with opened(browser, report) as pg:
        yield pg


@contextmanager
def opened(browser: Any, report: Path, height: int = 1000, at: str = "") -> Iterator[Page]:
    """``report`` opened at 1400 x ``height`` (at the anchor ``at``), every request but
    the file refused."""
    context = browser.new_context(viewport={"width": 1400, "height": height})
    pg = context.new_page()
    pg.requests = []  # type: ignore[attr-defined]
    pg.errors = []  # type: ignore[attr-defined]
    pg.on("pageerror", lambda e: pg.errors.append(str(e)))  # type: ignore[attr-defined]

    def refuse(route: Any) -> None:
        if not route.request.url.startswith("file://"):
            pg.requests.append(route.request.url)  # type: ignore[attr-defined]
            route.abort()
        else:
            route.continue_()

    pg.route("**/*", refuse)
    pg.goto(report.as_uri() + at)
    pg.wait_for_selector("#episode-table tbody tr")
    yield pg
    context.close()


def visible_rows(page: Page) -> list[list[str]]:
    return page.eval_on_selector_all(
        "#episode-table tbody tr",
        "rows => rows.map(r => Array.from(r.cells).map(c => c.textContent))",
    )


def test_charts_and_tables_render_and_nothing_is_fetched(page: Page):
    assert page.locator("figure.chart svg").count() >= 8 * 5
    assert page.locator("#cell-table tbody tr").count() == 4 * 4 + 1
    assert page.locator("svg polyline.series").count() > 0
    assert page.locator("svg polygon.band").count() > 0
    assert page.requests == [] and page.errors == []  # type: ignore[attr-defined]


def test_the_episode_table_shows_one_page_of_rows_and_pages_on(page: Page):
    total = 4 * 4 * 4 + 1
    assert len(visible_rows(page)) == 50
    assert page.text_content("#count") == f"{total} of {total} episodes match; page 1 of 2"
    page.click("#next")
    assert len(visible_rows(page)) == total - 50
    assert page.locator("#next").is_disabled()


def test_sorting_the_cell_table_by_length_up_then_down(page: Page):
    def lengths() -> list[int]:
        return [
            int(x)
            for x in page.eval_on_selector_all(
                "#cell-table tbody tr", "rows => rows.map(r => r.cells[2].textContent)"
            )
        ]

    button = page.locator("#cell-table th", has_text="N").first.locator("button")
    button.click()
    assert lengths() == sorted(lengths()) and lengths()[0] < lengths()[-1]
    assert page.locator("#cell-table th").nth(2).get_attribute("aria-sort") == "ascending"
    button.press("Enter")  # the keyboard works as well as the mouse
    assert lengths() == sorted(lengths(), reverse=True)


def test_filtering_by_verdict_label_and_cell(page: Page):
    page.select_option("#filter-verdict", label="faithful")
    rows = visible_rows(page)
    assert rows and all(r[3] == "faithful" for r in rows)
    page.select_option("#filter-verdict", value="")
    page.select_option("#filter-label", label="skipped_step")
    rows = visible_rows(page)
    assert rows and all("skipped_step" in r[5] for r in rows)
    cell = rows[0][2]
    page.select_option("#filter-cell", label=cell)
    assert all(r[2] == cell and "skipped_step" in r[5] for r in visible_rows(page))
    page.fill("#filter-id", "no such episode")
    assert visible_rows(page) == [] and page.text_content("#count").startswith("0 of")


def test_the_drill_down_shows_procedure_calls_and_the_first_divergence(page: Page):
    page.select_option("#filter-series", label="sim:skipped_step")
    page.locator("#episode-table tbody tr a.open").first.press("Enter")
    drill = page.locator("#drill")
    assert drill.is_visible()
    assert page.evaluate("document.activeElement.id") == "drill-title"
    text = drill.inner_text()
    assert "Procedure" in text and "Inputs: S1 = " in text and "Calls" in text
    marked = drill.locator("tr.divergence")
    assert marked.count() == 1 and "first divergence" in marked.inner_text()
    assert "step_" in drill.locator(".timeline tbody tr").first.inner_text()


def test_injected_markup_in_a_model_output_stays_inert_text(page: Page, tmp_path: Path):
    page.fill("#filter-id", "hostile")
    rows = visible_rows(page)
    assert [r[0] for r in rows] == [HOSTILE_ID]
    assert rows[0][1] == "model<i>x</i>"
    page.locator("#episode-table tbody tr a.open").first.click()
    drill = page.locator("#drill")
    assert HOSTILE in drill.inner_text()  # shown as the text the model wrote
    assert drill.locator("script, img, i, b").count() == 0
    assert page.locator("a[href^='javascript:']").count() == 0
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert page.errors == []  # type: ignore[attr-defined]
    shot = tmp_path / "drill.png"
    drill.screenshot(path=str(shot))
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


SHOTS = Path(__file__).parents[3] / "docs"
UPDATE_SHOTS = os.environ.get("AGENTPROC_UPDATE_SCREENSHOTS") == "1"
"""Set to write the README's screenshots, ``docs/report.png`` and ``docs/report-episode.png``."""
SHOWN = ("sim:oracle", "sim:decay", "sim:reordered", "sim:skipped_step", "sim:hallucinated_call")


def test_the_readme_screenshots_first_screen_and_drill_down(
    browser: Any, aligned: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """The first screen of a run of the embedded model beside simulated agents, and the
    drill-down of an episode with a reordering, a skipped step and an invented call."""
    folder = SHOTS if UPDATE_SHOTS else tmp_path
    monkeypatch.chdir(tmp_path)  # the page names its run files as given: short names
    shutil.copy(RECORDED, "local-smollm2.jsonl")
    write_run(Path("sim.jsonl"), sim_records(SHOWN, per_cell=3))
    out = tmp_path / "report.html"
    write_html_report([Path("local-smollm2.jsonl"), Path("sim.jsonl")], out)
    with opened(browser, out, height=900) as pg:
        pg.screenshot(path=str(folder / "report.png"))
        assert pg.locator("#summary-table tbody tr").count() == len(SHOWN) + 1
    scenario = scenario_of(generate_procedure(Cell(steps=6, lookback=2), 0, 1))
    o = oracle_calls(scenario)  # step 3 before step 2, an invented tool, step 5 never run
    calls = [o[0], o[2], o[1], o[3], ("finish", {"x": 1}), o[5], o[6]]
    write_run(Path("one.jsonl"), [scripted_record(calls, scenario=scenario)])
    write_html_report([Path("one.jsonl")], tmp_path / "one.html")
    with opened(browser, tmp_path / "one.html") as pg:
        pg.locator("#episode-table tbody tr a.open").first.click()
        pg.locator("#drill").screenshot(path=str(folder / "report-episode.png"))
    for name in ("report.png", "report-episode.png"):
        assert (folder / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert (folder / name).stat().st_size > 20_000


def test_an_episode_beyond_the_budget_names_its_replay_command(browser: Any, tmp_path: Path):
    run = write_run(tmp_path / "run.jsonl", sim_records(per_cell=2))
    out = tmp_path / "small.html"
    result = write_html_report([run], out, budget=3_000)
    assert 0 < result.detailed < result.episodes
    pg = browser.new_page()
    pg.goto(out.as_uri())
    pg.wait_for_selector("#episode-table tbody tr")
    messages = []
    for i in range(pg.locator("#episode-table tbody tr a.open").count()):
        button = pg.locator("#episode-table tbody tr a.open").nth(i)
        episode = button.text_content()
        button.click()
        text = pg.locator("#drill").inner_text()
        if "not embedded" in text:
            messages.append((episode, text))
    pg.close()
    assert len(messages) == result.episodes - result.detailed
    episode, text = messages[0]
    assert f"agentproc replay {run} --episode {episode}" in text


def test_a_drill_down_whose_suite_moved_shows_calls_and_says_why(browser: Any, tmp_path: Path):

    from agentproc.agents.sim import run_sim_episode
    from agentproc.procedures import preset, write_suite
    from agentproc.runs import RunWriter, episode_record
    from agentproc.workflow import load_scenarios

    suite = tmp_path / "suite"
    write_suite(preset("quick").model_copy(update={"count": 1}), suite)
    run = tmp_path / "run.jsonl"
    with RunWriter(run) as writer:
        scenario = next(iter(load_scenarios(suite)))
        writer.write(episode_record(run_sim_episode(scenario, "sim:oracle")))
    shutil.move(suite, tmp_path / "moved")
    out = write_html_report([run], tmp_path / "r.html")
    pg = browser.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.goto((tmp_path / "r.html").as_uri())
    pg.locator("#episode-table tbody tr a.open").first.click()
    text = pg.locator("#drill").inner_text()
    pg.close()
    assert out.detailed == 1 and errors == []
    assert "The procedure is not at hand" in text and "--suite" in text
    assert pg.is_closed() and "step_1" in text


def test_the_summary_and_the_runs_side_by_side_are_on_the_first_screen(browser: Any, report: Path):
    with opened(browser, report, height=900) as pg:
        check_first_screen(pg)


def check_first_screen(pg: Page) -> None:
    table = pg.locator("#summary-table").bounding_box()
    assert table is not None and pg.locator("#summary-table").is_visible()
    assert table["y"] >= 0 and table["y"] + table["height"] <= 900
    assert table["x"] >= 0 and table["x"] + table["width"] <= 1400  # no sideways scroll
    rows = pg.eval_on_selector_all(
        "#summary-table tbody tr", "rows => rows.map(r => r.cells[0].textContent)"
    )
    assert rows == ["model<i>x</i>", *sorted(a for a in AGENTS)]
    side = pg.locator("#compare").bounding_box()
    each = pg.locator("#figures").bounding_box()
    assert side is not None and each is not None
    assert table["y"] + table["height"] <= side["y"] < 900 <= each["y"]
    assert pg.requests == [] and pg.errors == []  # type: ignore[attr-defined]


ALIGNED = [step(2), step(1), step(4), ("finish", {"x": 1}), submit()]
"""Step 2 before step 1 (reordered), step 3 never run (skipped), an invented tool."""


@pytest.fixture(scope="module")
def aligned(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("aligned")
    records = [scripted_record(ALIGNED), scripted_record([step(1), step(3), step(4), submit()])]
    records[1]["scenario_id"] = "skips-step-2"
    out = folder / "report.html"
    write_html_report([write_run(folder / "run.jsonl", records)], out)
    return out


def call_table(pg: Page) -> list[list[str]]:
    return pg.eval_on_selector_all(
        "#drill .timeline tbody tr",
        "rows => rows.map(r => Array.from(r.cells).slice(0, 4).map(c => c.textContent))",
    )


def test_the_drill_down_lines_calls_up_by_step_past_a_reordering_a_skip_and_an_extra_call(
    browser: Any, aligned: Path
):
    with opened(browser, aligned) as pg:
        pg.locator("#episode-table tbody tr a.open").first.click()
        check_aligned(pg)


def check_aligned(pg: Page) -> None:
    rows = call_table(pg)
    assert [r[0] for r in rows] == ["1", "2 (first divergence)", "3", "4", "", "answer"]
    assert [(r[2], r[3]) for r in rows] == [
        ("1", "step_1"),
        ("0", "step_2"),  # reordered: called first, on step 2's row
        ("", ""),  # step 3: no call
        ("2", "step_4"),
        ("3", "finish"),  # invented: a row of its own
        ("4", "submit_answer"),
    ]
    assert [r[1].split("(")[0] for r in rows] == [
        "step_1",
        "step_2",
        "step_3",
        "step_4",
        "",
        "submit_answer",
    ]
    marked = pg.locator("#drill tr.divergence")
    assert marked.count() == 1 and "reordered" in marked.inner_text()
    assert "skipped_step" in pg.locator("#drill .timeline tbody tr").nth(2).inner_text()
    assert pg.errors == []  # type: ignore[attr-defined]


def test_an_episode_opens_by_its_anchor_from_the_address_and_from_the_summary(
    browser: Any, aligned: Path
):
    with opened(browser, aligned) as pg:
        anchors = pg.evaluate("JSON.parse(document.getElementById('data').textContent).rows.anchor")
    with opened(browser, aligned, at=f"#{anchors[1]}") as pg:
        pg.wait_for_selector(f"#drill article#{anchors[1]}")
        assert "Episode skips-step-2" in pg.locator("#drill-title").inner_text()
        assert pg.locator("#drill tr.divergence td").first.inner_text().startswith("2")
    with opened(browser, aligned) as pg:
        link = pg.locator("#summary-table a.example")
        target = link.get_attribute("href")
        assert target in (f"#{anchors[0]}", f"#{anchors[1]}")
        link.click()
        pg.wait_for_selector(f"#drill article{target}")
        assert pg.evaluate("location.hash") == target
        pg.locator("#episode-table tbody tr a.open").nth(1).click()
        assert pg.evaluate("location.hash") == f"#{anchors[1]}"
        assert pg.locator(f"#drill article#{anchors[1]}").count() == 1
        assert pg.errors == []  # type: ignore[attr-defined]


def test_each_agent_has_its_procedure_horizon_figures_with_band_curve_and_marks(page: Page):
    faithful = page.locator("figure.chart", has_text="Procedure horizon: faithful accuracy")
    answer = page.locator("figure.chart", has_text="Procedure horizon: first-answer accuracy")
    assert faithful.count() == answer.count() == len(AGENTS)  # the one-length agent has none
    for i in range(faithful.count()):
        fig = faithful.nth(i)
        fig.scroll_into_view_if_needed()
        band = fig.locator("polygon.band").bounding_box()
        curve = fig.locator("polyline.fit").bounding_box()
        assert band is not None and curve is not None and band["width"] > 100
        assert fig.locator("g.point").count() == 2  # two lengths tested
        assert fig.locator("g.horizon-mark").count() == 2
        caption = fig.locator("figcaption").inner_text()
        assert "50% horizon: " in caption and "80% horizon: " in caption
    oracle = page.locator("section.series", has_text="sim:oracle").locator(
        "figure.chart", has_text="Procedure horizon: faithful accuracy"
    )
    assert "50%: beyond 6 (the longest tested)" in oracle.inner_text()
    assert page.requests == [] and page.errors == []  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def workflow_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from agentproc.agents.sim import run_sim_episode
    from agentproc.resources import folder as shipped
    from agentproc.runs import RunWriter, episode_record
    from agentproc.workflow.declared.suite import load_workflow, workflow_scenarios

    root = tmp_path_factory.mktemp("workflow_browser")
    flow = load_workflow(shipped("workflows") / "invoice_approval.toml")
    run = root / "run.jsonl"
    with RunWriter(run) as w:  # each line keeps its scenario: the names come from there
        for scenario in workflow_scenarios(flow, "invoice_approval", 3, 0):
            w.write(episode_record(run_sim_episode(scenario, "sim:skipped_step")))
    out = root / "report.html"
    write_html_report([run], out)
    return out


def test_a_workflows_episode_table_and_drill_down_name_the_divergence_step(
    browser: Any, workflow_report: Path
):
    with opened(browser, workflow_report) as pg:
        shown = [row[4] for row in visible_rows(pg)]
        assert len(shown) == 3
        for text in shown:  # "call 3 at step 4 (discount): skipped_step"
            assert re.fullmatch(r"call \d+ at step \d+ \([a-z_]+( → [a-z_]+)?\): \w+", text), text
        pg.locator("#episode-table tbody tr a.open").first.click()
        assert re.search(r"first divergence: call \d+ at step \d+ \(", pg.inner_text("#drill"))
        assert pg.errors == []  # type: ignore[attr-defined]
