"""The HTML report as a person sees it: opened in headless Chromium (Debian's
``chromium``) through Playwright, offline, with every request but the file refused."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from html_runs import HOSTILE, HOSTILE_ID, hostile_record, sim_records, write_run

from agentproc.analysis.html import write_html_report

CHROMIUM = Path("/usr/bin/chromium")
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
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
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
    pg.goto(report.as_uri())
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


def test_a_screenshot_of_the_whole_report(page: Page, tmp_path: Path):
    shot = tmp_path / "report.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 20_000


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
    import shutil

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
