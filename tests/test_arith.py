"""Exact unit arithmetic: rounding half away from zero, reading agent numbers, rendering."""

from __future__ import annotations

import pickle
import sys
from decimal import Decimal, localcontext
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentproc.arith import (
    Op,
    apply_units,
    close,
    div_round,
    exact_units,
    from_number,
    render,
    round_scaled,
    round_units,
    symbol_units,
    to_number,
    to_units,
)

# -- div_round -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("num", "den", "expected"),
    [(5, 2, 3), (1, 2, 1), (3, 2, 2), (2001, 2, 1001)],
)
def test_div_round_rounds_a_positive_half_up(num: int, den: int, expected: int):
    assert div_round(num, den) == expected


@pytest.mark.parametrize(
    ("num", "den", "expected"),
    [(-5, 2, -3), (5, -2, -3), (-1, 2, -1), (-2001, 2, -1001)],
)
def test_div_round_rounds_a_negative_half_away_from_zero(num: int, den: int, expected: int):
    assert div_round(num, den) == expected


def test_div_round_of_two_negatives_is_positive():
    assert div_round(-5, -2) == 3


@pytest.mark.parametrize(
    ("num", "den", "expected"),
    [(4, 3, 1), (5, 3, 2), (-4, 3, -1), (-5, 3, -2), (1, 3, 0), (-1, 3, 0), (6, 3, 2)],
)
def test_div_round_away_from_a_half_goes_to_the_nearest(num: int, den: int, expected: int):
    assert div_round(num, den) == expected


# -- apply_units ---------------------------------------------------------------


def test_apply_units_adds_units():
    assert apply_units(Op.ADD, 1500, 2500, 1000) == 4000


def test_apply_units_subtracts_the_second_from_the_first():
    assert apply_units(Op.SUB, 1500, 2500, 1000) == -1000


def test_apply_units_multiplies_and_rescales():
    assert apply_units(Op.MUL, 1500, 2500, 1000) == 3750  # 1.5 * 2.5 = 3.75


def test_apply_units_product_rounds_half_away_from_zero():
    # 0.0015 * 1 = 0.0015 -> 0.002; -0.0015 -> -0.002
    assert apply_units(Op.MUL, 1500, 1, 1000) == 2
    assert apply_units(Op.MUL, -1500, 1, 1000) == -2


def test_apply_units_divides_and_rounds_to_a_unit():
    assert apply_units(Op.DIV, 1000, 3000, 1000) == 333  # 1 / 3 = 0.333
    assert apply_units(Op.DIV, 2000, 3000, 1000) == 667  # 2 / 3 = 0.667
    assert apply_units(Op.DIV, -2000, 3000, 1000) == -667


def test_apply_units_divides_exactly_in_integer_scale():
    assert apply_units(Op.DIV, 15, 3, 1) == 5


def test_apply_units_division_by_zero_is_none():
    assert apply_units(Op.DIV, 1000, 0, 1000) is None
    assert apply_units(Op.DIV, 0, 0, 1) is None


def test_apply_units_zero_numerator_is_zero_not_none():
    assert apply_units(Op.DIV, 0, 3000, 1000) == 0


# -- to_units ------------------------------------------------------------------


def test_to_units_scales_an_int_exactly():
    assert to_units(3, 1000) == 3000
    assert to_units(-7, 1) == -7
    assert to_units(10**30, 1000) == 10**33


def test_to_units_reads_a_float_through_its_decimal_spelling():
    assert to_units(0.1, 1000) == 100
    assert to_units(0.3, 1000) == 300
    assert to_units(2.675, 1000) == 2675


def test_to_units_rounds_to_the_nearest_unit():
    assert to_units(1.2344, 1000) == 1234
    assert to_units(1.2346, 1000) == 1235
    assert to_units(-1.2346, 1000) == -1235


@pytest.mark.parametrize(("x", "expected"), [(1.0005, 1001), (-1.0005, -1001), (0.0015, 2)])
def test_to_units_rounds_an_exact_half_away_from_zero(x: float, expected: int):
    assert to_units(x, 1000) == expected


@pytest.mark.parametrize(("x", "expected"), [(2.5, 3), (-2.5, -3), (0.5, 1), (-0.5, -1)])
def test_to_units_rounds_a_half_away_from_zero_in_integer_scale(x: float, expected: int):
    assert to_units(x, 1) == expected


@pytest.mark.parametrize(
    ("x", "expected"),
    [(1234567890123.4565, 1234567890123457), (-1234567890123.4565, -1234567890123457)],
)
def test_to_units_beyond_1e15_units_rounds_a_half_exactly(x: float, expected: int):
    # 1234567890123.4565 * 1000 is 1.23e15 units: read through Decimal, the half is exact.
    assert to_units(x, 1000) == expected


def test_to_units_of_a_huge_float_is_its_decimal_value_not_the_float_product():
    # 1e20 * 1000 as a float is 99999999999999991611392; the decimal reading is 10**23.
    assert to_units(1e20, 1000) == 10**23
    assert to_units(-1e20, 1000) == -(10**23)


# -- close ---------------------------------------------------------------------


def test_close_accepts_a_number_that_rounds_to_the_value_in_decimal_scale():
    assert close(1.2344, 1234, 1000)
    assert close(1.2336, 1234, 1000)
    assert close(1.234, 1234, 1000)


def test_close_rejects_a_number_that_rounds_to_another_value_in_decimal_scale():
    assert not close(1.2356, 1234, 1000)
    assert not close(1.2334, 1234, 1000)


def test_close_reads_an_exact_half_as_the_tools_do_half_away_from_zero():
    assert close(1.2345, 1235, 1000) and not close(1.2345, 1234, 1000)
    assert close(-0.6315, -632, 1000) and not close(-0.6315, -631, 1000)


def test_close_with_another_tolerance_compares_the_distance():
    assert close(1.2355, 1234, 1000, tolerance=1.5)
    assert not close(1.236, 1234, 1000, tolerance=1.5)


def test_close_is_exact_in_integer_scale():
    assert not close(12.5, 12, 1)
    assert not close(12.5, 13, 1)
    assert close(12, 12, 1)
    assert close(12.0, 12, 1)


def test_close_with_zero_tolerance_is_exact():
    assert close(1.234, 1234, 1000, tolerance=0)
    assert not close(1.2345, 1234, 1000, tolerance=0)


def test_close_compares_an_int_by_value_in_decimal_scale():
    assert close(12, 12000, 1000)
    assert not close(12, 12001, 1000)


def test_close_treats_a_bool_as_its_number():
    assert close(True, 1000, 1000)
    assert close(False, 0, 1000)
    assert not close(True, 0, 1000)
    assert close(True, 1, 1)


# -- to_number / from_number ---------------------------------------------------


def test_to_number_is_a_float_in_decimal_scale_and_an_int_in_integer_scale():
    assert to_number(12345, 1000) == 12.345
    n = to_number(12, 1)
    assert n == 12 and isinstance(n, int)


@pytest.mark.parametrize("units", [0, 1, -1, 12345, -50, 999_999_999_999_999, -(10**15)])
def test_from_number_inverts_to_number_in_decimal_scale(units: int):
    assert from_number(to_number(units, 1000), 1000) == units


@pytest.mark.parametrize("units", [0, 7, -7, 10**12])
def test_from_number_inverts_to_number_in_integer_scale(units: int):
    assert from_number(to_number(units, 1), 1) == units


# -- exact_units / round_units -------------------------------------------------


def test_exact_units_reads_text_exactly():
    assert exact_units("1.0005", 1000) == Fraction(2001, 2)
    assert exact_units("-12.5", 1) == Fraction(-25, 2)


def test_exact_units_keeps_digits_beyond_a_float():
    assert exact_units("12345678901234567890.123", 1000) == 12345678901234567890123


@pytest.mark.parametrize(
    ("x", "expected"),
    [
        (Fraction(1, 2), 1),
        (Fraction(-1, 2), -1),
        (Fraction(5, 2), 3),
        (Fraction(-5, 2), -3),
        (Fraction(2001, 2), 1001),
        (Fraction(-2001, 2), -1001),
    ],
)
def test_round_units_rounds_a_fraction_half_away_from_zero(x: Fraction, expected: int):
    assert round_units(x) == expected


@pytest.mark.parametrize(
    ("x", "expected"),
    [(Fraction(7, 3), 2), (Fraction(-7, 3), -2), (Fraction(8, 3), 3), (Fraction(-8, 3), -3)],
)
def test_round_units_away_from_a_half_goes_to_the_nearest(x: Fraction, expected: int):
    assert round_units(x) == expected


@settings(max_examples=500, deadline=None)
@given(
    st.fractions(max_denominator=10**6).filter(lambda x: abs(x) < 10**12),
    st.sampled_from([1, 10, 100, 1000]),
)
def test_round_scaled_is_round_units_of_the_scaled_fraction(x: Fraction, shift: int):
    assert round_scaled(x, shift) == round_units(x * shift)
    assert round_scaled(x.numerator, shift) == round_units(Fraction(x.numerator) * shift)


@pytest.mark.parametrize("shift", [1, 100])
def test_round_scaled_rounds_a_half_away_from_zero(shift: int):
    assert round_scaled(Fraction(5, 2 * shift), shift) == 3
    assert round_scaled(Fraction(-5, 2 * shift), shift) == -3


# -- render --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("units", "text"),
    [
        (-50, "-0.050"),
        (5, "0.005"),
        (-5, "-0.005"),
        (0, "0.000"),
        (1000, "1.000"),
        (-12345, "-12.345"),
        (12_000_000_000_001, "12000000000.001"),
    ],
)
def test_render_shows_three_decimals_in_decimal_scale(units: int, text: str):
    assert render(units, 1000) == text


def test_render_shows_an_integer_in_integer_scale():
    assert render(-12, 1) == "-12"
    assert render(0, 1) == "0"


def _units_by_decimal(x: float, scale: int) -> int:
    """The reference reading: the shortest decimal spelling, scaled, half away from zero."""
    with localcontext() as ctx:
        ctx.prec = 80
        scaled = Decimal(repr(x)) * scale
        units = int(scaled)
        if abs(scaled - units) >= Decimal("0.5"):
            units += 1 if scaled >= 0 else -1
    return units


@settings(max_examples=2000, deadline=None)
@given(
    x=st.one_of(
        st.floats(allow_nan=False, allow_infinity=False),
        st.decimals(-(10**13), 10**13, places=3, allow_nan=False).map(float),
        st.decimals(-(10**13), 10**13, places=5, allow_nan=False).map(float),
    ),
    scale=st.sampled_from([1, 10, 1000]),
)
def test_to_units_agrees_with_the_decimal_reading_at_every_magnitude(x: float, scale: int):
    # Small products take the float path; large ones written with few decimals read
    # their digits; the rest the decimal path. All three must round as the reference.
    assert to_units(x, scale) == _units_by_decimal(x, scale)


def test_to_units_reads_the_digits_of_a_large_number_written_to_the_unit():
    assert to_units(-25668186.783, 1000) == -25668186783
    assert to_units(123456789012.5, 1000) == 123456789012500
    assert to_units(9007199254740993.0, 1) == 9007199254740992  # the float's own digits


# -- symbols -------------------------------------------------------------------


def test_a_code_gives_back_the_value_it_codes_as_json_and_as_text():
    code = symbol_units("ORD-12345")
    assert to_number(code, 1000) == "ORD-12345"
    assert render(code, 1000) == "ORD-12345"
    assert render(symbol_units(True), 1000) == "true"


def test_a_code_is_the_same_number_in_every_process_and_pickles_with_its_value():
    code = symbol_units("gold")
    # A hash of the text: the number every suite, run file and cache key was made with.
    assert int(code) == -(1 << 100) - 4 - 0xD719F0E3A8BEBBFE
    back = pickle.loads(pickle.dumps(code))
    assert back == code and to_number(back, 1000) == "gold"


def test_a_coded_value_is_kept_only_while_its_code_is_held():
    # Drawn ids are without end: were every value coded remembered by the process, a
    # suite's generation (and a run over it) would grow in memory with the count.
    text = "".join(["ORD-", "90210"])  # a string object of this test's own
    alone = sys.getrefcount(text)
    code = symbol_units(text)
    del code
    for i in range(5000):  # other values coded since: far more than the few kept
        symbol_units(f"CUS-{i}")
    assert sys.getrefcount(text) == alone
