"""The demo endpoint's faithful profile on ``return_window`` (ids and dates, records drawn
per instance): it reads ids and ISO dates from the tools' results as text (a date is no
number whose year ends at its first ``-``) and passes them on, so every episode is
faithful on every path."""

from __future__ import annotations

from pathlib import Path

from agentproc.resources import folder
from agentproc.workflow.declared.suite import load_workflow, write_workflow_suite
from tests.agents.test_demo_branched import required_calls, run, serve


def test_the_faithful_profile_passes_ids_and_dates_between_tools(tmp_path: Path) -> None:
    wf = load_workflow(folder("workflows") / "return_window.toml")
    suite = tmp_path / "suite"
    assert write_workflow_suite(wf, suite, 10, 0, "return_window", balance="paths") == 10
    proc, url = serve("--profile", "faithful")
    try:
        episodes = run(suite, url, tmp_path / "run.jsonl")
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert {e["verdict"] for e in episodes} == {"faithful"}
    assert len({e["scenario"]["path"]["name"] for e in episodes}) >= 4
    for e in episodes:
        assert [c["name"] for c in e["calls"]] == required_calls(e["scenario"])
    dated = [c for e in episodes for c in e["calls"] if c["name"] == "count_days"]
    assert dated and all('"purchase_date": "2026-' in c["arguments"] for c in dated)
