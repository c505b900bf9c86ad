"""A scenario's tables as look-ups read them: each number an exact fraction, whichever
table or instance it is read from first."""

from __future__ import annotations

from fractions import Fraction

from agentproc.workflow.scenario_types import ScenarioTable


def test_a_tables_numbers_read_as_exact_fractions_whatever_was_read_before():
    first = ScenarioTable(key="sku", rows=[{"sku": "A", "price": 0.1, "stock": 12.0}])
    second = ScenarioTable(key="id", rows=[{"id": "B", "rate": 12, "open": True, "tier": "x"}])
    assert first.records() == {"A": {"price": Fraction(1, 10), "stock": Fraction(12)}}
    assert second.records() == {"B": {"rate": Fraction(12), "open": True, "tier": "x"}}
    assert type(second.records()["B"]["rate"]) is Fraction
    assert first.records() == {"A": {"price": Fraction(1, 10), "stock": Fraction(12)}}
