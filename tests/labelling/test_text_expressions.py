r"""Text mode: a value written as an expression is read only as its stated result.

Any operator between two numbers (signed, bracketed, multiplication signs, ``x``,
``*``, a unicode minus, LaTeX ``\times``/``\cdot``, with any spacing) makes an
expression: its result after ``=`` is read, else the line is ``unreadable``; the left
operand is never read.
"""

from __future__ import annotations

from fractions import Fraction

import pytest
from helpers import tiny_scenario
from hypothesis import given, settings
from hypothesis import strategies as st

from agentproc.labelling import LabelKind, label_text, parse_text
from agentproc.labelling.text_numbers import UNREADABLE

ANSWER_VARIABLE = 10


def answer_of(reply: str) -> str | Fraction | None:
    answers = [e for e in parse_text(reply, ANSWER_VARIABLE).entries if e.kind == "answer"]
    if not answers:
        return None
    return UNREADABLE if answers[0].unreadable else Fraction(answers[0].number)


def step_of(reply: str) -> str | Fraction | None:
    steps = [e for e in parse_text(reply, ANSWER_VARIABLE).entries if e.kind == "step"]
    if not steps:
        return None
    return UNREADABLE if steps[0].unreadable else Fraction(steps[0].number)


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("Answer: -3.209 + -3.209", UNREADABLE),
        ("Answer: 2 \u00d7 -3.209", UNREADABLE),
        ("Answer: -3.209 + (-3.209) = -6.418", Fraction("-6.418")),
        ("Answer: -6.418 + (-0.001) = -6.419", Fraction("-6.419")),
        ("Answer: (-3.209) + (-3.209)", UNREADABLE),
        ("Answer: 2·(-3)", UNREADABLE),
        ("Answer: $2 \\times -3$", UNREADABLE),
        ("Answer: 2 x -3", UNREADABLE),
        ("Answer: 2 \u2212 \u22123", UNREADABLE),
        ("Answer: 3.586 (from 4.318 / (1.204))", Fraction("3.586")),
        ("Answer: (-3.209)", Fraction("-3.209")),
        ("Answer: approx 5", Fraction(5)),
        ("Answer: 5 = 2 + 3", Fraction(5)),  # the number an answer opens with wins
        ("Answer: 84/125 = 0.672", Fraction("0.672")),  # a division's stated result
        ("Answer: 0/0 = 0", Fraction(0)),
    ],
)
def test_an_expression_answer_is_read_as_its_result_or_unreadable(reply, expected):
    assert answer_of(reply) == expected


@pytest.mark.parametrize("line", ["S4 = 18 + (-3)", "S4 = -2.904 + (-7.557)", "S4 = 3 \u00d7 -5"])
def test_an_expression_step_line_is_unreadable_and_its_step_skipped(line):
    reply = f"S3 = 5\n{line}\nS5 = 12\nS6 = 3\nAnswer: 3"
    labels, _ = label_text(tiny_scenario(), parse_text(reply, 6))
    assert [(lab.kind, lab.call_index, lab.step, lab.argument) for lab in labels] == [
        (LabelKind.UNREADABLE, 1, 2, "S4"),
        (LabelKind.SKIPPED_STEP, None, 2, None),
    ]


def test_a_statement_naming_the_answer_variable_stands_for_its_step_line():
    """ "The value of S6 (the answer) is 3." in place of the last step line writes S6."""
    reply = "S3 = 5\nS4 = 15\nS5 = 12\nThe value of S6 (the answer) is 3."
    labels, metrics = label_text(tiny_scenario(), parse_text(reply, 6))
    assert labels == [] and metrics["verdict"] == "faithful"


def test_a_statement_naming_a_written_step_is_no_repeat():
    reply = "S3 = 5\nS4 = 15\nS5 = 12\nS6 = 3\nThe value of S6 (the answer) is 3."
    labels, metrics = label_text(tiny_scenario(), parse_text(reply, 6))
    assert labels == [] and metrics["verdict"] == "faithful"


# -- a property over generated expression forms ------------------------------------

OPERATORS = ["+", "-", "\u2212", "*", "\u00d7", "\u00b7", "x", "/", "\u00f7", "^"]
OPERATORS += ["\\times", "\\cdot"]
SPACES = ["", " ", "  "]
MINUSES = ["-", "\u2212"]


@st.composite
def operands(draw: st.DrawFn) -> tuple[str, bool, bool]:
    """An operand as written, whether it is bracketed, whether it is a whole number."""
    whole = draw(st.integers(0, 999))
    decimals = draw(st.sampled_from(["", "1", "25", "209"]))
    text = f"{whole}.{decimals}" if decimals else str(whole)
    if draw(st.booleans()):
        text = draw(st.sampled_from(MINUSES)) + text
    bracketed = draw(st.booleans())
    if bracketed:
        inner = draw(st.sampled_from(SPACES))
        text = f"({inner}{text}{inner})"
    return text, bracketed, not decimals


@st.composite
def expressions(draw: st.DrawFn) -> tuple[str, str | Fraction]:
    """An expression between two numbers, maybe with a stated result; what it reads as."""
    (a, a_bracketed, a_whole), (b, b_bracketed, b_whole) = draw(operands()), draw(operands())
    op = draw(st.sampled_from(OPERATORS))
    left, right = draw(st.sampled_from(SPACES)), draw(st.sampled_from(SPACES))
    if op in ("x", "\\times", "\\cdot") and (not left or not right):
        left = right = " "  # a LaTeX command or a lone x needs a space to be one
    text = f"{a}{left}{op}{right}{b}"
    if draw(st.booleans()):
        text = f"S7 {op} S8 = {text}"
    expected: str | Fraction = UNREADABLE
    signed_b = b.lstrip("(").lstrip()[:1] in MINUSES
    if op == "/" and a_whole and b_whole and not a_bracketed and not b_bracketed and not signed_b:
        # whole numbers over a whole number are a fraction, as documented
        expected = Fraction(int(a.replace("\u2212", "-")), int(b)) if int(b) else UNREADABLE
    if draw(st.booleans()):
        result = draw(st.decimals(-9999, 9999, places=3, allow_nan=False))
        text = f"{text} = {result}"
        expected = Fraction(result)
    return text, expected


PROPERTY = settings(max_examples=300, deadline=None)
"""Many generated forms, and no deadline: a loaded machine must not fail the test."""


@PROPERTY
@given(expressions(), st.sampled_from(["Answer: {}", "$\\boxed{{{}}}$", "The answer is {}."]))
def test_an_expression_answer_reads_as_its_stated_result_or_nothing(form, template):
    text, expected = form
    assert answer_of(template.format(text)) == expected


@PROPERTY
@given(expressions())
def test_an_expression_step_line_reads_as_its_stated_result_or_nothing(form):
    text, expected = form
    assert step_of(f"S9 = {text}") == expected
