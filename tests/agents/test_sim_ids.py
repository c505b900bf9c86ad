"""The wrong ids and dates the simulated agents put in (``return_window``): plausible (an id
of another of the instance's records, an id of the same shape that is no record, a date a
few days off) and labelled by the monitor exactly as the simulated agent says."""

from __future__ import annotations

import re
from typing import Any

from agentproc import run_sim_episode
from agentproc.declared.dates import days_between, is_date
from agentproc.resources import folder
from agentproc.workflow.declared.suite import load_workflow, workflow_scenarios

SCENARIOS = list(
    workflow_scenarios(
        load_workflow(folder("workflows") / "return_window.toml"), "return_window", 30, 5
    )
)


def wrong_texts() -> list[tuple[Any, dict[str, Any], Any]]:
    """(scenario, label, its episode) for each wrong string or date argument injected."""
    found = []
    for s in SCENARIOS:
        for seed in range(4):
            ep = run_sim_episode(s, "sim:wrong_argument", seed=seed)
            said = {(t.kind, t.call_index, t.cause) for t in ep.injected or ()}
            assert {(t.kind, t.call_index, t.cause) for t in ep.labels} == said
            for lab in ep.labels:
                got = lab.to_json().get("got")
                if lab.kind.value == "wrong_argument" and isinstance(got, str):
                    found.append((s, lab.to_json(), ep))
    return found


def test_wrong_ids_are_other_records_or_of_their_shape_and_wrong_dates_are_days_off():
    found = wrong_texts()
    ids = [(s, lab) for s, lab, _ in found if lab["argument"] in ("order_id", "customer_id")]
    # a date of its own slip (a propagated one is another order's purchase date)
    dates = [lab for _, lab, _ in found if is_date(lab["got"]) and lab["cause"] == "other"]
    assert ids and dates
    for s, lab in ids:
        assert re.fullmatch(r"(ORD-\d{5}|CUS-\d{4})", lab["got"]) and lab["got"] != lab["expected"]
        keys = {
            r[(s.tables or {})[t].key] for t in ("orders", "customers") for r in s.tables[t].rows
        }
        assert lab["got"] in keys or lab["cause"] == "other"
    assert all(1 <= abs(days_between(lab["expected"], lab["got"])) <= 7 for lab in dates)
