"""Formulas as exact rational functions: what is proved holds on every input, and what a
prime modulus hides is never proved."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentproc.declared.formula import parse
from agentproc.declared.formula_proof import Algebra, DividesByZero, Ratio, Undecided
from agentproc.declared.formula_values import evaluate, fingerprint

P = 2305843009213693951  # the fingerprint's prime


def express(text: str, algebra: Algebra | None = None) -> tuple[Algebra, Ratio, dict[str, Ratio]]:
    algebra = algebra or Algebra()
    env = {n: algebra.variable(n) for n in ("a", "b", "c")}
    return algebra, algebra.express(parse(text, typed=True), env), env


@pytest.mark.parametrize(
    ("text", "same_as"),
    [
        ("a * b / b", "a"),
        ("(a + b) * (a - b)", "a * a - b * b"),
        ("a / 3 + a / 6", "a / 2"),
        ("min(a * b / b, 1) + 0", "min(a, 1)"),  # one atom: its arguments are proved equal
        ("(a + b * 2305843009213693951) - b * 2305843009213693951", "a"),
        ("ifelse(c > 1, a, b) * 2", "ifelse(c + 0 > 1, a, b) + ifelse(c > 2 - 1, a * b / b, b)"),
    ],
)
def test_an_identity_is_proved(text: str, same_as: str):
    algebra, r, _ = express(text)
    _, s, _ = express(same_as, algebra)
    assert algebra.equal(r, s)


@pytest.mark.parametrize(
    ("text", "other"),
    [
        ("a + b * 2305843009213693951", "a"),  # the same modulo the prime
        ("a + b * 2305843009213693951 / 1e15", "a"),
        ("min(a, b + 4611686018427387902)", "min(a, b)"),
        ("min(a, b) + max(a, b)", "a + b"),  # true, but needs what min and max mean
    ],
)
def test_what_only_a_prime_modulus_sees_is_not_proved(text: str, other: str):
    algebra, r, _ = express(text)
    _, s, _ = express(other, algebra)
    assert not algebra.equal(r, s)
    assert not algebra.equal(r, s, -1)


def test_a_literal_multiple_of_the_prime_is_not_a_zero_divisor_though_its_fingerprint_is():
    tree = parse("a / (b * 2305843009213693951)")
    assert fingerprint(tree, {"a": 3, "b": 5}) is None
    _, r, _ = express("a / (b * 2305843009213693951)")
    assert r.den


@pytest.mark.parametrize("text", ["a / (b - b)", "min(a / (c * 0), b)", "a / (a * b - b * a) > 1"])
def test_a_division_by_an_expression_that_is_zero_is_proved_where_always_evaluated(text: str):
    with pytest.raises(DividesByZero):
        express(text)


def test_a_division_by_zero_in_a_branch_not_always_taken_is_not_proved():
    express("ifelse(c > 1, a / (b - b), a)")
    express("c > 1 and a / (b - b) > 0")


def test_a_constant_is_its_value_and_a_variable_none():
    algebra, r, _ = express("(a + 1) / (2 * a + 2) + min(2, 3)")
    assert algebra.constant(r) == Fraction(5, 2)
    algebra, r, _ = express("a - a + b * 2305843009213693951")
    assert algebra.constant(r) is None


def test_an_expansion_past_the_bound_is_undecided_not_slow():
    factor = "(a + b + c + 1)"
    with pytest.raises(Undecided):
        express(" * ".join([factor] * 40))
    with pytest.raises(Undecided):
        express(" * ".join(["(a * 1e300 + 1)"] * 40))


NUMBERS = st.sampled_from(["1", "2", "0.5", "3e-3", str(P), "1e15"])
LEAVES = st.one_of(st.sampled_from(["a", "b", "c"]), NUMBERS)


def _combine(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    pairs = st.tuples(children, st.sampled_from(["+", "-", "*", "/"]), children)
    return st.one_of(
        pairs.map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
        st.tuples(children, children).map(lambda t: f"min({t[0]}, {t[1]})"),
        children.map(lambda t: f"-{t}"),
    )


FORMULAS = st.recursive(LEAVES, _combine, max_leaves=8)
POINTS = st.fixed_dictionaries({n: st.fractions(-50, 50, max_denominator=7) for n in "abc"})


@settings(max_examples=300, deadline=None)
@given(FORMULAS, FORMULAS, st.lists(POINTS, min_size=3, max_size=3))
def test_what_is_proved_holds_on_exact_evaluation(left: str, right: str, points):
    algebra = Algebra()
    env = {n: algebra.variable(n) for n in "abc"}
    try:
        r = algebra.express(parse(left), env)
        s = algebra.express(parse(right), env)
    except DividesByZero:
        assert all(evaluate(parse(left), p) is None for p in points) or all(
            evaluate(parse(right), p) is None for p in points
        )
        return
    except Undecided:
        return
    for sign in (1, -1):
        if algebra.equal(r, s, sign):
            for p in points:
                x, y = evaluate(parse(left), p), evaluate(parse(right), p)
                if x is not None and y is not None:
                    assert x == sign * y
    value = algebra.constant(r)
    if value is not None:
        for p in points:
            assert evaluate(parse(left), p) in (value, None)


@settings(max_examples=200, deadline=None)
@given(FORMULAS, FORMULAS, POINTS)
def test_a_rewriting_of_a_formula_is_proved_equal_to_it_and_evaluates_the_same(
    f: str, g: str, point
):
    algebra = Algebra()
    env = {n: algebra.variable(n) for n in "abc"}
    rewritten = f"(({f}) + ({g})) * (({g}) * 2 + 1) / (2 * ({g}) + 1) - ({g})"
    try:
        r = algebra.express(parse(f), env)
        s = algebra.express(parse(rewritten), env)
    except (DividesByZero, Undecided):
        return
    assert algebra.equal(r, s)
    x, y = evaluate(parse(f), point), evaluate(parse(rewritten), point)
    if x is not None and y is not None:
        assert x == y
