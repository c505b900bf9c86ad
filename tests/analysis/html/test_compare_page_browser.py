"""The comparison page as a person sees it: opened in headless Chromium through
Playwright, offline; the verdicts on the first screen, a discordant scenario opening
its episode's drill-down."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentproc.analysis import compare_files
from agentproc.analysis.html.compare_page import write_compare_html
from agentproc.cli import main

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]

if not CHROMIUM.exists():
    pytest.skip("no /usr/bin/chromium here (.ci/run installs it)", allow_module_level=True)

from playwright.sync_api import Page, sync_playwright  # noqa: E402


@pytest.fixture(scope="module")
def page_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("compare-browser")
    assert main(["generate", "--steps", "4,6", "--count", "4", "--out", str(d / "s")]) == 0
    paths = []
    for agent in ("sim:oracle", "sim:skipped_step"):
        paths.append(d / f"{agent.split(':')[1]}.jsonl")
        assert main(["run", str(d / "s"), "--agent", agent, "--out", str(paths[-1])]) == 0
    result, _ = compare_files(paths)
    write_compare_html(paths, result, d / "compare.html")
    return d / "compare.html"


@pytest.fixture
def page(page_file: Path) -> Iterator[Page]:
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        context = browser.new_context(viewport={"width": 1400, "height": 900})
        pg = context.new_page()
        fetched: list[str] = []
        errors: list[str] = []
        pg.on("pageerror", lambda e: errors.append(str(e)))

        def refuse(route: Any) -> None:
            if route.request.url.startswith("file://"):
                route.continue_()
            else:
                fetched.append(route.request.url)
                route.abort()

        pg.route("**/*", refuse)
        pg.goto(page_file.as_uri())
        pg.wait_for_selector("#episode-table tbody tr")
        yield pg
        assert fetched == [] and errors == []
        browser.close()


def test_the_verdict_is_on_the_first_screen_before_the_report(page: Page):
    verdict = page.locator("li.verdict").first
    assert verdict.is_visible()
    assert verdict.inner_text().startswith("sim:skipped_step: ")
    box = verdict.bounding_box()
    assert box is not None and box["y"] < 900
    summary = page.locator("#summary").bounding_box()
    assert summary is not None and summary["y"] > box["y"]


def test_the_arms_are_side_by_side_in_one_table(page: Page):
    rows = page.locator("table.arms tbody tr")
    assert rows.count() == 2
    assert "sim:oracle (baseline)" in rows.nth(0).inner_text()
    assert "sim:skipped_step" in rows.nth(1).inner_text()


def test_a_discordant_scenario_opens_its_episode_in_the_drill_down(page: Page):
    link = page.locator("table.discordant a.discordant").nth(1)  # the arm's episode
    scenario = page.locator("table.discordant tbody tr th").first.inner_text()
    link.click()
    drill = page.locator("#drill")
    drill.wait_for(state="visible")
    text = drill.inner_text()
    assert scenario in text and "sim:skipped_step" in text
    assert drill.locator("tr.divergence").count() == 1


def test_the_procedure_horizon_table_shows_each_arm_and_why_they_cannot_be_compared(page: Page):
    table = page.locator("#comparison table.horizons")
    table.scroll_into_view_if_needed()
    assert table.is_visible()
    rows = table.locator("tbody tr")
    assert rows.count() == 2
    assert rows.nth(0).inner_text().startswith("sim:oracle (baseline)")
    arm = rows.nth(1).inner_text()
    # 4 scenarios a length: too few to show that the oracle's success falls, or where
    assert "success does not fall with length over 4 to 6 steps" in arm
    assert (
        "cannot be compared: the baseline's success does not fall with length over 4 to 6 "
        "steps and the arm's success does not fall with length over 4 to 6 steps"
    ) in arm
