"""How many workers a run gets: at most one per scenario and, locally, one per CPU."""

from __future__ import annotations

import pytest

from agentproc.runs import Workers


@pytest.mark.parametrize(
    ("workers", "scenarios", "cpus", "count", "says"),
    [
        (Workers(1000), 50, 4, 4, "--workers 1000 capped at 4 (the CPUs of this machine)"),
        (Workers(8), 3, 16, 3, "--workers 8 capped at 3 (the scenarios of the suite)"),
        (Workers(4), 50, 4, 4, None),
        (Workers(64, "ray"), 500, 2, 64, None),  # a cluster's CPUs are not this machine's
        (Workers(64, "ray"), 10, 2, 10, "--workers 64 capped at 10 (the scenarios of the suite)"),
        (Workers(2), 0, 4, 1, "--workers 2 capped at 1 (the scenarios of the suite)"),
    ],
)
def test_workers_are_capped_at_the_scenarios_and_local_cpus(
    monkeypatch, workers, scenarios, cpus, count, says
):
    monkeypatch.setattr("os.cpu_count", lambda: cpus)
    fitted, why = workers.fit(scenarios)
    assert (fitted.count, why) == (count, says)
    assert (fitted.backend, fitted.address) == (workers.backend, workers.address)
