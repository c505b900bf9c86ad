"""Rules of docs/taxonomy.md that other tests rely on, each pinned where it is stated."""

from __future__ import annotations

from fractions import Fraction

from helpers import run, step, submit

from agentproc.labelling import LabelKind, parse_text
from agentproc.labelling.text_numbers import UNREADABLE, answer_in


def test_so_the_result_is_x_counts_as_the_implicit_answer():
    entries = parse_text("S3 = 5\nSo the result is 3.", 6).entries
    assert [(e.kind, e.number, e.implicit) for e in entries] == [
        ("step", "5", False),
        ("answer", "3", True),
    ]


def test_with_both_marks_the_last_is_the_decimal_mark_and_a_lone_comma_groups():
    assert Fraction(answer_in("17.260,153")) == Fraction("17260.153")
    assert Fraction(answer_in("1,679.5")) == Fraction("1679.5")
    assert answer_in("12,5") == UNREADABLE
    assert answer_in("1,679") == "1679"


def test_self_correction_is_judged_by_the_values_produced_not_the_arguments():
    """Step 2 (S4 = S3 * S2) first run with its operands swapped (3 * 5): wrong arguments,
    but the right value 15; the repeat with the right arguments corrects no value."""
    calls = [step(1), step(2, S3=3, S2=5), step(2), step(3), step(4), submit()]
    labels, _, _ = run(calls)
    repeats = [lab for lab in labels if lab.kind is LabelKind.REPEATED_STEP]
    assert [(lab.call_index, lab.self_correction) for lab in repeats] == [(2, False)]
    wrong = run([step(1), step(2, S3=4), step(2), step(3), step(4), submit()])[0]
    repeats = [lab for lab in wrong if lab.kind is LabelKind.REPEATED_STEP]
    assert [(lab.call_index, lab.self_correction) for lab in repeats] == [(2, True)]
