"""The id pattern language: its own parser, seeded draws, exact matching; and its
agreement with :mod:`re` on the patterns it accepts (``re`` in the test only)."""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from agentproc.declared.id_pattern import (
    MAX_PATTERN,
    PatternError,
    draw,
    draw_distinct,
    matches,
    parse_pattern,
    size,
)


def test_a_pattern_draws_ids_of_its_shape_the_same_for_the_same_seed():
    p = parse_pattern("ORD-[0-9]{5}")
    ids = [draw(p, random.Random(7)) for _ in range(3)]
    assert ids[0] == ids[1] == ids[2]
    assert re.fullmatch(r"ORD-[0-9]{5}", ids[0])
    assert size(p) == 10**5


def test_a_class_of_several_ranges_draws_from_each():
    p = parse_pattern("[A-Z0-9]{2}")
    assert len(p[0]) == 36
    seen = {c for _ in range(400) for c in draw(p, random.Random(_))}
    assert any(c.isdigit() for c in seen) and any(c.isupper() for c in seen)


def test_matching_is_exact_with_no_case_folding():
    p = parse_pattern("ACC-[0-9]{4}")
    assert matches(p, "ACC-0042")
    assert not matches(p, "acc-0042") and not matches(p, "ACC-042") and not matches(p, "ACC-00420")


def test_distinct_ids_are_distinct_and_too_many_are_refused():
    p = parse_pattern("K[0-9]")
    assert sorted(draw_distinct(p, 10, random.Random(1))) == [f"K{d}" for d in range(10)]
    with pytest.raises(PatternError, match="fewer than 11"):
        draw_distinct(p, 11, random.Random(1))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("ORD-[0-9]*", "'*' at 9 is not allowed"),
        ("(a|b)", "'(' at 0 is not allowed"),
        ("[^0-9]", "[^0-9] at 0 is not a class"),
        ("[0-5]", "[0-5] at 0 is not a class"),
        ("[A-Z", "'[' at 0 is never closed"),
        ("A{0}", "a repeat at 1 is {n} with n from 1 to 32"),
        ("A{x}", "a repeat at 1 is {n}"),
        ("A\\d", "'\\\\' at 1 is not allowed"),
        ("", "1 to 64 characters"),
        ("[0-9]{32}[0-9]{32}X", "at most 64"),
    ],
)
def test_anything_beyond_the_small_language_is_refused_saying_why(text, message):
    with pytest.raises(PatternError) as info:
        parse_pattern(text)
    assert message in str(info.value)


_ATOMS = st.sampled_from(["A", "7", "-", "[A-Z]", "[0-9]", "[a-z]", "[A-Z0-9]", "[a-z0-9]"])


@given(st.lists(st.tuples(_ATOMS, st.integers(1, 4)), min_size=1, max_size=6), st.integers())
def test_a_drawn_id_matches_the_same_pattern_read_by_re(parts, seed):
    text = "".join(a + (f"{{{n}}}" if n > 1 else "") for a, n in parts)
    assume(len(text) <= MAX_PATTERN)  # longer text is refused (tested above)
    p = parse_pattern(text)
    drawn = draw(p, random.Random(seed))
    assert re.fullmatch(text, drawn) and matches(p, drawn)
