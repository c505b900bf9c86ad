"""Dates of a workflow: strict ISO text, days between, uniform draws, and their types in
the typed grammar (compared with ``<`` as dates; strings only with ``==``/``!=``)."""

from __future__ import annotations

import random
from datetime import date

import pytest

from agentproc.declared.dates import days_between, draw_date, parse_date, shift
from agentproc.declared.formula import FormulaError, parse
from agentproc.declared.formula_types import DATE, NUMBER, STRING, check
from agentproc.declared.formula_values import evaluate


@pytest.mark.parametrize("text", ["2026-3-1", "2026-03-1", "20260301", "2026-02-30", "2026/03/01"])
def test_only_iso_text_of_a_real_day_is_a_date(text):
    assert parse_date(text) is None


def test_days_between_counts_from_the_first_to_the_second_across_a_month_and_a_year():
    assert days_between("2026-02-27", "2026-03-01") == 2
    assert days_between("2026-12-31", "2027-01-01") == 1
    assert days_between("2026-03-01", "2026-02-27") == -2
    assert shift("2026-02-28", 1) == "2026-03-01"


def test_a_date_range_is_drawn_over_every_day_both_ends_included():
    drawn = {draw_date("2026-02-27", "2026-03-02", random.Random(k)) for k in range(300)}
    assert drawn == {"2026-02-27", "2026-02-28", "2026-03-01", "2026-03-02"}


def test_dates_compare_in_time_and_days_between_is_a_number():
    env = {"a": DATE, "b": DATE, "id": STRING}
    assert check(parse("days_between(a, b)", True), env) == NUMBER
    assert check(parse("a < b and id != id", True), env).kind == "boolean"
    tree = parse("a <= date('2026-03-01')", True)
    assert evaluate(tree, {"a": "2026-02-28"}) is True
    assert evaluate(tree, {"a": "2026-03-02"}) is False
    assert (
        evaluate(parse("days_between(a, b)", True), {"a": "2026-01-01", "b": "2026-03-01"})
        == (date(2026, 3, 1) - date(2026, 1, 1)).days
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("id < id", "'<' compares numbers or two dates, not id (a string)"),
        ("a < 3", "'<' compares numbers or two dates, not a (a date)"),
        ("a == id", "compares values of one type"),
        ("days_between(a, 3)", "days_between() takes a date"),
        ("id + 1", "'+' takes a number, not id (a string)"),
    ],
)
def test_a_string_or_date_used_as_what_it_is_not_is_refused(text, message):
    with pytest.raises(FormulaError) as info:
        check(parse(text, True), {"a": DATE, "id": STRING})
    assert message in str(info.value)


def test_a_date_literal_is_checked_when_read():
    with pytest.raises(FormulaError, match="ISO text"):
        parse("date('2026-3-1')", True)
    with pytest.raises(FormulaError, match="unknown function 'days_between'"):
        parse("days_between(a, b)")  # format 1 has no dates
