"""Benchmark: the HTML report of a 55,000-episode run, and replay at scale.

    python benchmarks/bench_html.py [--work DIR] [--copies 50] [--repeat 3]

1. The run: ``generate --preset reference --count 20`` (55 cells x 20) run by
   ``sim:decay --self-contained`` (run-file layout version 2, each scenario as its
   compact procedure) gives 1,100 real episodes; each is copied ``--copies`` times
   under a new scenario id (index 20, 40, ... added) to make 55,000 episodes with the
   reference grid's mix of lengths and look-backs. (Running sim:decay over the
   full reference suite holds every compiled scenario in memory: over 11 GB.)
2. Generation: ``agentproc report RUN --html OUT`` wall time (median of ``--repeat``),
   the file's size, and the time of each stage.
3. Opening: headless Chromium (``/usr/bin/chromium`` through Playwright) loads the
   file until the episode table has its first page (median of ``--repeat``).
4. Replay: ``Replay.to_json`` at 2,000 / 8,000 / 16,000 calls (its time should grow
   about linearly), and the terminal timeline of a call with 1 MB of arguments.

Targets (issue): opens in under 3 s, file under 20 MB, generated in under 10 s.
"""

from __future__ import annotations

import argparse
import io
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

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


def make_run(work: Path, copies: int) -> Path:
    suite, base = work / "ref20", work / "ref20-v2.jsonl"
    run = work / f"ref{copies * 1100}-v2.jsonl"
    if run.exists():
        return run
    if not base.exists():
        subprocess.run(
            ["agentproc", "generate", "--preset", "reference", "--count", "20", "--out", suite],
            check=True,
        )
        subprocess.run(
            ["agentproc", "run", suite, "--agent", "sim:decay", "--self-contained", "--out", base],
            check=True,
        )
    lines = base.read_bytes().splitlines()
    with open(run, "wb") as out:
        for c in range(copies):
            for line in lines:
                m = re.search(rb'"scenario_id":"([^"]+)-(\d{4})"', line)
                assert m is not None
                old = m.group(1) + b"-" + m.group(2)
                new = m.group(1) + b"-%04d" % (int(m.group(2)) + 20 * c)
                out.write(line.replace(b'"' + old + b'"', b'"' + new + b'"') + b"\n")
    return run


def stages(run: Path) -> dict[str, float]:
    """The stages of :func:`agentproc.analysis.html.html_report`, each timed."""
    from agentproc.analysis.html.episodes import DETAIL_BUDGET, details, episode_rows
    from agentproc.analysis.html.figures import figures
    from agentproc.analysis.html.page import render_page
    from agentproc.analysis.measures.report import aggregate
    from agentproc.analysis.measures.step_names import WorkflowNames
    from agentproc.runs.runfile import last_heads

    out: dict[str, float] = {}
    warnings: list[str] = []
    t = time.perf_counter()
    heads = last_heads([run], warnings)
    records = [rec for _, rec in heads.values()]
    out["read (one pass)"] = time.perf_counter() - t
    t = time.perf_counter()
    steps = WorkflowNames().learn_heads(heads.values())
    report = aggregate(records, steps)
    fig = figures(records, report, steps)
    out["aggregate + figures"] = time.perf_counter() - t
    t = time.perf_counter()
    rows = episode_rows(heads, report, steps)
    out["episode rows"] = time.perf_counter() - t
    t = time.perf_counter()
    drill = details(heads, report, warnings, DETAIL_BUDGET)
    out[f"drill-down ({len(drill)} episodes)"] = time.perf_counter() - t
    t = time.perf_counter()
    render_page(report, fig, rows, drill, [str(run)], warnings)
    out["page"] = time.perf_counter() - t
    return out


def open_time(html: Path) -> float:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        t = time.perf_counter()
        page.goto(html.as_uri(), timeout=120_000)
        page.wait_for_selector("#episode-table tbody tr", timeout=120_000)
        took = time.perf_counter() - t
        rows = page.locator("#episode-table tbody tr").count()
        browser.close()
    assert rows == 50, rows
    return took


def replay_scaling() -> None:
    from helpers import ORACLE, step, submit, tiny_scenario
    from rich.console import Console

    from agentproc.analysis import replay_calls
    from agentproc.analysis.render.timeline import render_timeline

    times = {}
    for n in (2000, 8000, 16000):
        replay = replay_calls(tiny_scenario(), [step(1)] * n + [submit()])
        t = time.perf_counter()
        replay.to_json()
        times[n] = time.perf_counter() - t
        print(f"  Replay.to_json, {n:>6} calls: {times[n] * 1000:8.1f} ms")
    print(
        f"  ratio 16,000 / 2,000 calls: {times[16000] / times[2000]:.1f} (linear: 8, quadratic: 64)"
    )
    text = '{"S1": 2, "S2": 3, "pad": "' + "x" * 1_000_000 + '"}'
    replay = replay_calls(tiny_scenario(), [("step_1", text), *ORACLE])
    console = Console(file=io.StringIO(), width=80, color_system=None)
    t = time.perf_counter()
    render_timeline(replay, console)
    print(
        f"  timeline of a call with 1 MB of arguments: {(time.perf_counter() - t) * 1000:.1f} ms, "
        f"{len(console.file.getvalue())} characters printed"  # type: ignore[attr-defined]
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", type=Path, default=Path("/tmp/agentproc-bench-html"))
    ap.add_argument("--copies", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    run = make_run(args.work, args.copies)
    print(f"run: {run} ({run.stat().st_size / 1e9:.2f} GB)")
    html = args.work / "report.html"
    took = []
    for _ in range(args.repeat):
        t = time.perf_counter()
        subprocess.run(["agentproc", "report", run, "--html", html], check=True)
        took.append(time.perf_counter() - t)
    print(f"generate: median {statistics.median(took):.1f} s of {[round(x, 1) for x in took]}")
    print(f"file size: {html.stat().st_size / 1e6:.1f} MB")
    for name, secs in stages(run).items():
        print(f"  {name}: {secs:.1f} s")
    opens = [open_time(html) for _ in range(args.repeat)]
    print(
        f"browser open: median {statistics.median(opens):.2f} s of {[round(x, 2) for x in opens]}"
    )
    replay_scaling()
    print(f"load average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
