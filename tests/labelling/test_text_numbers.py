r"""Text mode: numbers read exactly in the forms people write, or the line is unreadable.

A number is never truncated to a wrong one: ``1 679 607`` is not 607, ``1.679607e6``
is not 1.679607, ``-84/125`` is not 125.
"""

from __future__ import annotations

from fractions import Fraction

import pytest
from helpers import tiny_scenario

from agentproc.labelling import LabelKind, label_text, parse_text
from agentproc.labelling.text_numbers import UNREADABLE, number_of, value_in

THIN, NBSP, NNBSP, MINUS = "\u2009", "\u00a0", "\u202f", "\u2212"
ANSWER_VARIABLE = 10


def answer_of(reply: str) -> str | Fraction | None:
    """The first answer's exact value, :data:`UNREADABLE`, or None when there is none."""
    answers = [e for e in parse_text(reply, ANSWER_VARIABLE).entries if e.kind == "answer"]
    if not answers:
        return None
    return UNREADABLE if answers[0].unreadable else Fraction(answers[0].number)


def F(text: str) -> Fraction:
    return Fraction(text)


REPLY_FORMS = [
    # an explicit answer wins over a parenthesis or an equation after it
    ("Answer: 3.586 (S10 = S7 / S8 = 4.318 / 1.204)", F("3.586")),
    ("Answer: 3.586 (from S10 = S7 / S8 = 4.318 / 1.204 = 3.586)", F("3.586")),
    ("**Answer:** 3.586 (rounded (half up))", F("3.586")),
    ("Answer: S10 = S7 / S8 = 4.318 / 1.204 = 3.586", F("3.586")),
    ("Answer: 3.586 = S10", F("3.586")),
    ("The answer is 3.586, since S10 = 4.318 / 1.204.", F("3.586")),
    ("The value of S10 (the answer) is 3.586.", F("3.586")),
    ("The value of S10 (the final answer) is -3.586", F("-3.586")),
    ("S10 (the answer) = 3.586", F("3.586")),
    ("S9 = 2\nS10 = 3.586 (the last step)\nAnswer: 3.586", F("3.586")),
    # thousands separators of every kind
    ("Answer: 1,679,607", F("1679607")),
    ("Answer: 1,679,607.25", F("1679607.25")),
    (f"Answer: 1{THIN}679{THIN}607", F("1679607")),
    (f"Answer: 1{NBSP}679{NBSP}607.5", F("1679607.5")),
    (f"Answer: 1{NNBSP}679{NNBSP}607", F("1679607")),
    ("Answer: 1 679 607", F("1679607")),
    ("Answer: 1'679'607", F("1679607")),
    ("Answer: 1_679_607", F("1679607")),
    ("Answer: 1.679.607", F("1679607")),
    ("Answer: 1.679.607,5", F("1679607.5")),
    ("Answer: -1.234,5", F("-1234.5")),
    ("Answer: 1.679", F("1.679")),
    ("Answer: 1,679", F("1679")),
    (f"Answer: {MINUS}1,679,607.368", F("-1679607.368")),
    # scientific notation
    ("Answer: 1.679607e6", F("1679607")),
    ("Answer: 1.679607E+06", F("1679607")),
    ("Answer: -2.5e-3", F("-0.0025")),
    ("Answer: 1.679607 \u00d7 10^6", F("1679607")),
    ("Answer: 1.679607 x 10^6", F("1679607")),
    ("Answer: 1.679607 * 10^6", F("1679607")),
    ("Answer: $1.679607 \\times 10^{6}$", F("1679607")),
    ("Answer: $1.679607 \\cdot 10^{6}$", F("1679607")),
    ("Answer: 1.679607·10⁶", F("1679607")),
    ("Answer: 2.5 \u00d7 10⁻³", F("0.0025")),
    # LaTeX
    ("\\boxed{-90{,}234{,}819.368}", F("-90234819.368")),
    ("$\\boxed{1\\,679\\,607}$", F("1679607")),
    ("Answer: $\\frac{-84}{125}$", F("-84/125")),
    ("Answer: $-\\dfrac{84}{125}$", F("-84/125")),
    ("\\boxed{\\text{3.586}}", F("3.586")),
    ("\\boxed{1.679607 \\times 10^{6}}", F("1679607")),
    # fractions
    ("Answer: -84/125", F("-84/125")),
    ("Answer: 84 / 125", F("84/125")),
    ("The answer is 1/3.", F("1/3")),
    # plain forms, as before
    ("Answer: 12.500", F("12.5")),
    ("Answer: -0.050", F("-0.05")),
    ("Answer: 12.5 units", F("12.5")),
    ("S10 = 12.5\n\n12.5", F("12.5")),
    ("12.500", F("12.5")),
    (f"{MINUS}38.324", F("-38.324")),
    (f"1{THIN}679{THIN}607", F("1679607")),
    # unreadable: never a wrong number
    ("Answer: 12,5", UNREADABLE),
    ("Answer: 1,67,9607", UNREADABLE),
    ("Answer: 1,679.607.5", UNREADABLE),
    ("Answer: 1 679,607", UNREADABLE),
    ("Answer: 4.318 / 1.204", UNREADABLE),
    ("Answer: S7 / S8 = 4.318 / 1.204", UNREADABLE),
    ("Answer: 15 - 2.5", UNREADABLE),
    ("Answer: 2.5 / 0", UNREADABLE),
    ("Answer: 84/0", UNREADABLE),
    ("Answer: 1.5e400", UNREADABLE),
    ("\\boxed{1.679.607.5}", UNREADABLE),
    ("S10 = 1.2.3", UNREADABLE),
    ("12,5", UNREADABLE),
    ("Answer: 3 (no, wait) 4.318 / 1.204", F("3")),
    # no answer at all
    ("Answer: S10", None),
    ("I could not finish.", None),
]


@pytest.mark.parametrize(("reply", "expected"), REPLY_FORMS)
def test_answer_read_exactly_or_unreadable(reply, expected):
    assert answer_of(reply) == expected


def test_the_table_holds_at_least_sixty_reply_forms():
    assert len(REPLY_FORMS) >= 60


@pytest.mark.parametrize(
    ("reply", "var", "value"),
    [
        ("S_3 = 5.5", 3, "5.5"),
        ("$S_{3} = 5.5$", 3, "5.5"),
        ("$S_{3} = S_{1} + S_{2} = 5.5$", 3, "5.5"),
        ("S₃ = 5.5", 3, "5.5"),
        ("| 1 | S3 | S1 + S2 | 5.500 |", 3, "5.500"),
        ("| S3 | 5.5 |", 3, "5.5"),
        ("| Step 1 | S3 = S1 + S2 | 2.5 + 3 | **5.5** |", 3, "5.5"),
        ("| 1 | $S_{3}$ | $S_1 + S_2$ | 5.5 |", 3, "5.5"),
        ("S3 = 1 679 607", 3, "1679607"),
        ("The value of S3 is 1.679607e6", 3, "1679607"),
    ],
)
def test_step_forms_read(reply, var, value):
    (entry,) = parse_text(reply).entries
    assert (entry.kind, entry.var, Fraction(entry.number)) == ("step", var, Fraction(value))


@pytest.mark.parametrize(
    "row", ["| Step | Variable | Expression | Value |", "|---|---|---|---|", "| | |"]
)
def test_table_header_and_rule_rows_are_no_steps(row):
    assert parse_text(row).entries == ()


def test_faithful_reply_as_a_markdown_table_is_faithful():
    reply = (
        "| Step | Variable | Expression | Value |\n"
        "|---|---|---|---|\n"
        "| 1 | S3 | S1 + S2 | 5.000 |\n"
        "| 2 | S4 | S3 * S2 | 15.000 |\n"
        "| 3 | S5 | S4 - S2 | 12.000 |\n"
        "| 4 | S6 | S4 / S3 | 3.000 |\n"
        "\n"
        "Answer: 3.000"
    )
    labels, metrics = label_text(tiny_scenario(), parse_text(reply, 6))
    assert labels == [] and metrics["verdict"] == "faithful"


def test_unreadable_answer_is_labelled_and_no_number_is_guessed():
    reply = "S3 = 5\nS4 = 15\nS5 = 12\nS6 = 3\nAnswer: 4.318 / 1.204"
    labels, metrics = label_text(tiny_scenario(), parse_text(reply, 6))
    assert [(lab.kind, lab.call_index) for lab in labels] == [
        (LabelKind.UNREADABLE, 4),
        (LabelKind.MISSING_ANSWER, None),
    ]
    assert metrics["first_answer"] is None and metrics["verdict"] == "no_answer"


def test_unreadable_answer_then_a_readable_one_counts_the_readable_one():
    reply = "S3 = 5\nS4 = 15\nS5 = 12\nS6 = 3\nAnswer: 3,0\nAnswer: 3"
    labels, metrics = label_text(tiny_scenario(), parse_text(reply, 6))
    assert [lab.kind for lab in labels] == [LabelKind.UNREADABLE]
    assert metrics["first_answer"] == 3


def test_unreadable_step_is_labelled_on_its_step_and_counts_as_not_written():
    reply = "S3 = 5\nS4 = 1 5\nS5 = 12\nS6 = 3\nAnswer: 3"
    labels, _ = label_text(tiny_scenario(), parse_text(reply, 6))
    assert [(lab.kind, lab.call_index, lab.step, lab.argument) for lab in labels] == [
        (LabelKind.UNREADABLE, 1, 2, "S4"),
        (LabelKind.SKIPPED_STEP, None, 2, None),
    ]


def test_unreadable_answer_is_not_replaced_by_an_implicit_one():
    """The reply stated an answer; the last step's value is not taken in its place."""
    assert answer_of("S10 = 3.586\nAnswer: 3,58") == UNREADABLE


@pytest.mark.parametrize(
    ("text", "number"),
    [
        ("7", "7"),
        ("-0.5", "-0.5"),
        (f"1{THIN}234", "1234"),
        ("1.5e3", "1.5e3"),
        ("-84/125", "-84/125"),
        ("12,5", UNREADABLE),
        ("seven", None),
        ("1" * 101, None),
    ],
)
def test_number_of_a_text_that_is_one_number(text, number):
    assert number_of(text) == number


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("S6 - S5 = 15 - 2.5 = 12.5", "12.5"),
        ("15 - 2.5", UNREADABLE),
        ("S6 * 2 = 25", "25"),
        ("S6 - 2.5", UNREADABLE),
        ("S6 - S5", None),
        ("12.5 (15 - 2.5)", "12.5"),
    ],
)
def test_value_in_a_statement_skips_operands(text, value):
    assert value_in(text) == value


@pytest.mark.parametrize(
    ("reply", "value", "kind"),
    [("S3 = 7", 7, int), ("S3 = 7.0", 7.0, float), ("S3 = 84/125", 0.672, float)],
)
def test_entry_value_is_an_int_only_when_written_whole(reply, value, kind):
    (entry,) = parse_text(reply).entries
    assert entry.value == value and type(entry.value) is kind
