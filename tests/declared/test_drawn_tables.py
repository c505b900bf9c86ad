"""Whole records drawn for every instance (``count``, ``key_pattern``) and strings drawn
among a table's keys (``key_of``), on the shipped ``return_window``: each instance has its
own records, hidden from the agent, and every id it is given or returned is a record's."""

from __future__ import annotations

import json
import re

from agentproc.declared.id_pattern import matches, parse_pattern
from agentproc.resources import folder
from agentproc.workflow.declared.suite import load_workflow, workflow_scenarios

WF = load_workflow(folder("workflows") / "return_window.toml")
SCENARIOS = list(workflow_scenarios(WF, "return_window", count=40, seed=3))


def test_each_instance_draws_between_low_and_high_records_with_distinct_keys_of_the_pattern():
    orders, customers = parse_pattern("ORD-[0-9]{5}"), parse_pattern("CUS-[0-9]{4}")
    counts = set()
    for s in SCENARIOS:
        tables = s.tables or {}
        keys = [r["order_id"] for r in tables["orders"].rows]
        people = [r["customer_id"] for r in tables["customers"].rows]
        assert 4 <= len(keys) <= 8 and 3 <= len(people) <= 6
        assert len(set(keys)) == len(keys) and len(set(people)) == len(people)
        assert all(matches(orders, k) for k in keys) and all(matches(customers, c) for c in people)
        counts.add(len(keys))
    assert len(counts) >= 3  # the number of records is drawn too


def test_a_key_of_string_is_one_of_the_instances_own_keys_and_references_hold():
    for s in SCENARIOS:
        tables = s.tables or {}
        orders = {r["order_id"]: r for r in tables["orders"].rows}
        people = {r["customer_id"] for r in tables["customers"].rows}
        assert s.inputs["order_id"] in orders
        assert all(r["customer_id"] in people for r in orders.values())
        values = {st.output: st.value for st in s.steps}
        assert values["customer_id"] == orders[s.inputs["order_id"]]["customer_id"]
        assert values["purchase_date"] == orders[s.inputs["order_id"]]["purchase_date"]


def test_the_records_are_hidden_from_the_prompt_the_inputs_and_the_tools():
    for s in SCENARIOS[:10]:
        shown = json.dumps([s.prompt, s.inputs, s.tools])
        rows = (s.tables or {})["orders"].rows
        others = [r for r in rows if r["order_id"] != s.inputs["order_id"]]
        assert all(r["order_id"] not in shown for r in others)
        assert not re.search(r"CUS-\d{4}", shown)  # no customer id but through a tool
        assert set(s.inputs) == {"order_id", "request_date"}


def test_the_same_seed_draws_the_same_records_and_another_seed_others():
    again = list(workflow_scenarios(WF, "return_window", count=5, seed=3))
    assert [s.tables for s in again] == [s.tables for s in SCENARIOS[:5]]
    other = list(workflow_scenarios(WF, "return_window", count=5, seed=4))
    assert [s.tables for s in other] != [s.tables for s in SCENARIOS[:5]]
