"""Formulas: a strict grammar over Python's expression parser, evaluated exactly."""

from __future__ import annotations

from fractions import Fraction

import pytest

from agentproc.declared.formula import FormulaError, parse, render, variables
from agentproc.declared.formula_values import evaluate, fingerprint

F = Fraction


@pytest.mark.parametrize(
    ("text", "env", "value"),
    [
        ("a + b * c", {"a": F(1), "b": F(2), "c": F(3)}, F(7)),
        ("(a + b) * c", {"a": F(1), "b": F(2), "c": F(3)}, F(9)),
        ("-(a - b) / 4", {"a": F(1), "b": F(2)}, F(1, 4)),
        ("a / 3", {"a": F(1)}, F(1, 3)),
        ("min(a, b, 0.5)", {"a": F(1), "b": F(2)}, F(1, 2)),
        ("max(a, -b)", {"a": F(-3), "b": F(2)}, F(-2)),
        ("abs(a - b)", {"a": F(1), "b": F(4)}, F(3)),
        ("round(a)", {"a": F(5, 2)}, F(3)),
        ("round(a)", {"a": F(-5, 2)}, F(-3)),
        ("round(a, 2)", {"a": F(12345, 1000)}, F(1235, 100)),
        ("0.1 + 0.2", {}, F(3, 10)),
        ("2e3 * a", {"a": F(1)}, F(2000)),
    ],
)
def test_a_formula_evaluates_exactly_with_half_away_from_zero_rounding(text, env, value):
    assert evaluate(parse(text), env) == value


def test_a_division_by_zero_evaluates_to_none_not_an_exception():
    assert evaluate(parse("a / (b - b)"), {"a": F(1), "b": F(2)}) is None
    assert evaluate(parse("min(a / b, 1)"), {"a": F(1), "b": F(0)}) is None


def test_the_variables_a_formula_reads_are_listed_in_written_order():
    assert list(variables(parse("max(price * qty, floor) - price"))) == [
        "price",
        "qty",
        "floor",
        "price",
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a ** 2", "'**' is not allowed"),
        ("a // b", "'//' is not allowed"),
        ("a % b", "'%' is not allowed"),
        ("a < b", "a comparison is not allowed"),
        ("a and b", "a boolean operator"),
        ("a if b else c", "is not allowed"),
        ("a.b", "attribute 'a.b' is not allowed"),
        ("x[0]", "subscript 'x[0]' is not allowed"),
        ("__import__('os')", "unknown function '__import__'"),
        ("foo(a)", "unknown function 'foo'"),
        ("min(a)", "min() takes at least 2 argument(s), not 1"),
        ("abs(a, b)", "abs() takes 1 argument(s), not 2"),
        ("round(a, b)", "round()'s second argument must be a whole number from 0 to 3"),
        ("round(a, 9)", "round()'s second argument must be a whole number from 0 to 3"),
        ("max(a, b=1)", "max() takes plain arguments only"),
        ("'text'", "'text' is not a number"),
        ("True", "True is not a number"),
        ("min", "min is a function: write min(...)"),
        ("a +", "does not parse"),
        ("", "empty"),
        ("a" + " + a" * 600, "longer than 1000 characters"),
        ("-" * 60 + "a", "nested more than 40 deep"),
        ("a + (" * 41 + "a" + ")" * 41, "nested more than 40 deep"),
        ("a" + "+a" * 250, "more than 400 operands and operations"),
        ("min(" * 30 + "a" + ", a)" * 30 + "+a" * 200, "more than 400 operands and operations"),
        ("a + 1e309", "the number 1e309 is too large"),
        ("min(a, 1e999)", "the number 1e999 is too large"),
        ("a * 1_0e-400", "the number 1_0e-400 is too small: it would read as 0"),
        ("a + 1E-400", "the number 1E-400 is too small: it would read as 0"),
    ],
)
def test_anything_outside_the_grammar_is_refused_with_its_reason(text, message):
    with pytest.raises(FormulaError, match=None) as info:
        parse(text)
    assert message in str(info.value)


def test_a_literal_of_zero_however_spelled_is_zero():
    for text in ("a + 0.0", "a + 0e999", "a + 0.000e-400", "a + 00.0"):
        assert evaluate(parse(text), {"a": F(2)}) == 2


def test_a_smallest_float_literal_is_read_exactly_not_as_zero():
    assert evaluate(parse("a * 5e-324"), {"a": F(1)}) == F(5, 10**324)


@pytest.mark.parametrize("op", ["+", "-", "*", "/"])
def test_a_long_chain_of_one_precedence_is_flat_not_nested(op: str):
    text = f" {op} ".join(["a"] * 150)
    one = {"+": 150, "-": -148, "*": 1, "/": 1}[op]
    assert evaluate(parse(text), {"a": F(1)}) == one
    assert evaluate(parse("-a + " + " - ".join(["(a * a / a)"] * 60)), {"a": F(2)}) == -118


def test_a_flat_sum_of_50_terms_is_read_and_nesting_inside_a_chain_still_counts():
    assert evaluate(parse(" + ".join(["a"] * 50)), {"a": F(1)}) == 50
    nested = "a * (" * 39 + "a" + ")" * 39  # 40 deep as the right operand of a +
    assert evaluate(parse(" + ".join(["a"] * 40 + [nested])), {"a": F(1)}) == 41
    with pytest.raises(FormulaError, match="nested more than 40 deep"):
        parse(" + ".join(["a"] * 40 + ["a * (" + nested + ")"]))


def test_rendering_writes_the_parentheses_the_tree_needs():
    for text in ("a - (b - c)", "a / (b * c)", "(a + b) * c", "-(a + b)", "round(a * 1.5, 2)"):
        assert render(parse(text)) == text
        assert parse(render(parse(text))) == parse(text)


def test_the_fingerprint_sees_algebraic_identities_and_treats_functions_as_opaque():
    env = {"a": 123456789, "b": 987654321}
    assert fingerprint(parse("a * b / b"), env) == fingerprint(parse("a"), env)
    assert fingerprint(parse("min(a, b) - min(a, b)"), env) == 0
    assert fingerprint(parse("abs(a)"), env) != fingerprint(parse("a"), env)
    assert fingerprint(parse("a / (b - b)"), env) is None
