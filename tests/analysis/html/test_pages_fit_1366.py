"""Both HTML pages (``report --html`` and ``compare --html``) fit a 1,366-pixel window,
the commonest laptop width: opened in headless Chromium through Playwright as the other
browser tests open them, nothing is wider than the window and no verdict is cut."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentproc.cli import main

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]
WIDTH = 1366

if not CHROMIUM.exists():
    pytest.skip("no /usr/bin/chromium here (.ci/run installs it)", allow_module_level=True)

from playwright.sync_api import sync_playwright  # noqa: E402


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A report of two agents and their comparison, written by the commands themselves,
    over 5 and 10 steps (a horizon each, and a long verdict line)."""
    d = tmp_path_factory.mktemp("pages-1366")
    assert main(["generate", "--steps", "5,10", "--count", "6", "--out", str(d / "s")]) == 0
    runs = []
    for agent in ("sim:skipped_step", "sim:oracle"):
        runs.append(str(d / f"{agent.split(':')[1]}.jsonl"))
        assert main(["run", str(d / "s"), "--agent", agent, "--out", runs[-1]]) == 0
    assert main(["report", *runs, "--html", str(d / "report.html")]) == 0
    assert main(["compare", *runs, "--html", str(d / "compare.html")]) == 0
    return {"report": d / "report.html", "compare": d / "compare.html"}


@pytest.fixture(scope="module")
def browser(pages: dict[str, Path]) -> Iterator[Any]:
    """Chromium, launched once the pages are written (Playwright's loop would stand in
    the way of the runs' own)."""
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield b
        b.close()


def widths(browser: Any, page: Path) -> dict[str, Any]:
    """The page's width, and each verdict line's right edge and whether its text is cut."""
    context = browser.new_context(viewport={"width": WIDTH, "height": 800})
    pg = context.new_page()
    pg.goto(page.as_uri())
    pg.wait_for_selector("#episode-table tbody tr")
    got: dict[str, Any] = pg.evaluate(
        """() => ({
            page: document.documentElement.scrollWidth,
            verdicts: Array.from(document.querySelectorAll('li.verdict')).map(e => ({
                right: e.getBoundingClientRect().right,
                cut: e.scrollWidth > e.clientWidth,
                text: e.textContent,
            })),
        })"""
    )
    context.close()
    return got


@pytest.mark.parametrize("which", ["report", "compare"])
def test_the_page_is_no_wider_than_a_1366_pixel_window(browser, pages, which):
    assert widths(browser, pages[which])["page"] <= WIDTH


def test_the_comparisons_verdict_wraps_inside_the_window_and_is_not_cut(browser, pages):
    verdicts = widths(browser, pages["compare"])["verdicts"]
    assert verdicts and verdicts[0]["text"].startswith("sim:oracle: better than sim:skipped_step")
    for v in verdicts:
        assert v["right"] <= WIDTH and not v["cut"], v
