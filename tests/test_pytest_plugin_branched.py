"""The pytest plugin on a branched workflow's suite (format 2), in a pytest session of its
own (pytester): the fixture spreads the instances over the paths, the simulated agent
that follows each instance's path passes, the one that takes the wrong branch does not."""

from __future__ import annotations

import importlib.metadata
import os
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[1]
INSTALLED = any(
    e.value == "agentproc.pytest_plugin" for e in importlib.metadata.entry_points(group="pytest11")
)
"""Whether the installed package registers the plugin (else the session loads it by name)."""
PLUGIN = [*(() if INSTALLED else ("-p", "agentproc.pytest_plugin")), "-p", "no:cacheprovider"]
REFUND = ROOT / "scenarios" / "workflows" / "refund_approval.toml"


@pytest.fixture
def env(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    return pytester


def test_a_branched_suite_passes_the_path_follower_and_fails_the_wrong_branch(env):
    env.makepyfile(
        test_branched=f"""
        import json
        import re

        import pytest

        from agentproc.pytest_plugin import assert_follows_procedure

        REFUND = {str(REFUND)!r}
        BRANCHING = {{"unneeded_step", "skipped_step"}}


        @pytest.fixture
        def suite(agentproc_suite):
            return agentproc_suite(workflow=REFUND, count=10, balance="paths")


        def paths(suite):
            lines = (suite / "scenarios.jsonl").read_text().splitlines()
            return {{json.loads(line)["id"]: json.loads(line)["path"]["name"] for line in lines}}


        def test_the_suite_spreads_over_the_paths(agentproc_suite, suite):
            assert agentproc_suite(workflow=REFUND, count=10, balance="paths") == suite
            counts = {{}}
            for name in paths(suite).values():
                counts[name] = counts.get(name, 0) + 1
            assert counts == {{
                "base": 2,
                "damage_credit": 2,
                "damage_credit+manager_approval": 2,
                "exit:outside_window": 2,
                "manager_approval": 2,
            }}


        def test_the_oracle_follows_every_path(agentproc_run, suite):
            result = agentproc_run("sim:oracle", suite)
            assert result.faithful_accuracy == 1.0 and result.labels == {{}}
            assert len(result.episodes) == 10 and not result.errored
            by_id = paths(suite)
            for e in result.episodes:
                assert e["metrics"]["path"] == by_id[e["scenario_id"]]
                assert e["metrics"]["path_correct"] and e["metrics"]["exit_correct"]
            assert_follows_procedure(result, min_faithful=1.0)


        def test_the_wrong_branch_is_not_faithful_and_says_where(agentproc_run, suite):
            result = agentproc_run("sim:wrong_branch", suite)
            assert len(result.episodes) == 10 and not result.errored
            assert result.faithful_accuracy < 1.0
            assert set(result.labels) <= BRANCHING and set(result.labels) & BRANCHING
            for e in result.scored:
                kinds = {{lab["kind"] for lab in e["labels"]}}
                assert (e["verdict"] == "faithful") == (not kinds), e["scenario_id"]
                assert e["metrics"]["path_correct"] == (not kinds), e["scenario_id"]
            unneeded = [
                lab for e in result.scored for lab in e["labels"] if lab["kind"] == "unneeded_step"
            ]
            assert unneeded and {{lab["reason"] for lab in unneeded}} == {{"condition"}}
            with pytest.raises(AssertionError) as failed:
                assert_follows_procedure(result, min_faithful=1.0, forbid=("unneeded_step",))
            message = str(failed.value)
            assert "agentproc: the agent does not follow the procedure:" in message
            assert "unneeded_step (forbidden) in " in message
            # the timelines name the workflow's steps by their tools, as the report does
            assert re.search(r"unneeded_step\\(step \\d \\(\\w+ → \\w+\\)\\)", message)
            assert re.search(r"first divergence: \\w+ at step \\d \\(\\w+ → \\w+\\)", message)
            assert not re.search(r"\\(step \\d+\\)", message)  # no step by number alone
        """
    )
    result = env.runpytest_subprocess(*PLUGIN, "-q", timeout=300)
    result.assert_outcomes(passed=3)
