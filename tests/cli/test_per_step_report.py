"""``report --json`` gives each agent's per-step measures and observed self-conditioning
on real runs: a simulated agent, every profile of the demo endpoint, and the embedded
model's recorded run; and ``report --html`` draws them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import cli

from agentproc.agents.demo import PROFILES, demo_server

RECORDED = Path(__file__).parents[2] / "scenarios" / "recorded" / "local-smollm2.jsonl"


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from agentproc.cli import main

    out = tmp_path_factory.mktemp("steps") / "suite"
    argv = ["generate", "--steps", "5,12", "--lookback", "1,3", "--count", "6", "--out", str(out)]
    assert main(argv) == 0
    return out


def report(capsys: Any, *runs: Path) -> dict[str, Any]:
    code, out, err = cli(capsys, "report", *runs, "--json")
    assert code == 0, err
    return json.loads(out)  # type: ignore[no-any-return]


def check_consistent(agent: dict[str, Any]) -> None:
    """The measures agree with each other and with the report's own counts."""
    per, overall = agent["per_step"], agent["overall"]
    survival, hazard = per["survival"], per["hazard"]
    assert survival[0]["at_risk"] == overall["n"]
    values = [p["survival"] for p in survival]
    assert values == sorted(values, reverse=True)
    for p in survival:
        if p["ci"] is not None:
            assert p["ci"][0] <= p["survival"] <= p["ci"][1]
    # every episode ends once: it left the procedure at a step, or is censored
    ended = sum(p["events"] + p["censored"] for p in survival)
    assert ended == overall["n"]
    assert sum(p["events"] for p in survival) <= overall["first_divergence"]["episodes"]
    assert [(h["step"], h["events"], h["at_risk"]) for h in hazard] == [
        (p["step"], p["events"], p["at_risk"]) for p in survival
    ]
    first = per["accuracy_by_position"][0]
    assert first["step"] == 1 and first["executed"] <= overall["n"]
    for row in per["accuracy_by_position"]:
        assert 0 <= row["correct"] <= row["executed"]
    assert "bins" in agent["self_conditioning"]["observed"]


def test_a_simulated_run_gets_the_keys(capsys, suite, tmp_path):
    out = tmp_path / "decay.jsonl"
    code, _, err = cli(capsys, "run", suite, "--agent", "sim:decay", "--trials", "2", "--out", out)
    assert code == 0, err
    agent = report(capsys, out)["agents"]["sim:decay"]
    check_consistent(agent)
    assert agent["per_step"]["survival_variance"] == "cluster-robust"  # two trials a scenario
    assert [r["step"] for r in agent["per_step"]["accuracy_by_position"]] == list(range(1, 13))


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_every_demo_endpoint_profile_gets_the_measures(capsys, suite, tmp_path, profile):
    out = tmp_path / "demo.jsonl"
    with demo_server(profile) as srv:
        code, _, err = cli(
            capsys, "run", suite, "--agent", "openai:demo", "--base-url", srv.base_url,
            "--concurrency", "4", "--out", out,
        )  # fmt: skip
    assert code == 0, err
    (agent,) = report(capsys, out)["agents"].values()
    check_consistent(agent)


def test_the_embedded_models_recorded_run_gets_them(capsys):
    (agent,) = report(capsys, RECORDED)["agents"].values()
    check_consistent(agent)
    per = agent["per_step"]
    # half its four episodes leave at step 1, the last one at step 5 (every one left)
    assert [p["survival"] for p in per["survival"]] == [0.5, 0.5, 0.25, 0.25, 0.0]
    assert per["survival"][-1]["ci"] is None  # no band where no one is left
    assert per["median_survival_step"]["text"] == "1 [1, 5]"


def test_the_text_report_gives_the_median_step_of_leaving(capsys):
    code, out, _ = cli(capsys, "report", RECORDED)
    assert code == 0
    assert "median step of leaving the procedure (Kaplan-Meier): 1 [1, 5]" in out


def test_the_html_report_draws_the_per_step_figures(capsys, tmp_path):
    page = tmp_path / "r.html"
    code, _, err = cli(capsys, "report", RECORDED, "--html", page)
    assert code == 0, err
    html = page.read_text(encoding="utf-8")
    for title in (
        "Accuracy of a step by its position",
        "Still on the procedure, by step",
        "Hazard of leaving the procedure, by step",
        "Error rate after an error and after a clean history",
    ):
        assert title in html


def test_a_live_run_of_the_embedded_model_gets_them(capsys, tmp_path, monkeypatch):
    from agentproc.agents.local import check_installed
    from agentproc.errors import ConfigError

    try:
        check_installed()
    except ConfigError as e:
        pytest.skip(str(e))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    suite, out = tmp_path / "s", tmp_path / "local.jsonl"
    argv = ["generate", "--steps", "3", "--lookback", "1", "--count", "1", "--out", suite]
    assert cli(capsys, *argv)[0] == 0
    code, _, err = cli(capsys, "run", suite, "--agent", "local", "--budget", "3", "--out", out)
    assert code == 0, err
    (agent,) = report(capsys, out)["agents"].values()
    check_consistent(agent)
    assert agent["per_step"]["median_survival_step"]["text"]
    assert cli(capsys, "report", out, "--html", tmp_path / "r.html")[0] == 0
