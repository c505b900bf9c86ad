r"""Text mode: reading the answer of a reply, explicit or implicit, and the step forms
read besides ``S7 = 12.5``.

An explicit answer ("Answer: x", "the answer is x", ``\boxed{x}``) wins; without
one, the final statement of the answer variable's value, then a bare number on
the last line, is read as an implicit answer.
"""

from __future__ import annotations

import pytest
from helpers import tiny_scenario

from agentproc.labelling import TextEntry, label_text, parse_text

ANSWER_VARIABLE = 12
MINUS = "\u2212"
Reading = tuple[str, str, bool] | None


def first_answer(reply: str, answer_variable: int | None = ANSWER_VARIABLE) -> Reading:
    """The (kind, number, implicit) of the reply's first answer entry, or None."""
    answers = [e for e in parse_text(reply, answer_variable).entries if e.kind == "answer"]
    return (answers[0].kind, answers[0].number, answers[0].implicit) if answers else None


def explicit(number: str) -> Reading:
    return ("answer", number, False)


def implicit(number: str) -> Reading:
    return ("answer", number, True)


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        # explicit answer statements
        ("Answer: 12.500", explicit("12.500")),
        ("answer = 12.5", explicit("12.5")),
        ("**Answer:** 12.500", explicit("12.500")),
        ("**Final Answer**: 12.5", explicit("12.5")),
        ("Final answer: 12.5", explicit("12.5")),
        ("The answer is 12.500", explicit("12.500")),
        ("The answer is 12.500.", explicit("12.500")),
        ("Therefore, the final answer is 1,234.5", explicit("1234.5")),
        (f"Final answer: {MINUS}38.324", explicit("-38.324")),
        ("\\boxed{12.500}", explicit("12.500")),
        ("$\\boxed{12.5}$", explicit("12.5")),
        (f"So S12 = $\\boxed{{{MINUS}38.324}}$.", explicit("-38.324")),
        ("Answer: 12.5 units", explicit("12.5")),
        ("Answer: S12 = 12.5 (rounded)", explicit("12.5")),
        ("S11 = 3\nS12 = 5\nAnswer: 7\nS12 = 6", explicit("7")),
        ("\\boxed{12.5}\nS12 = 13", explicit("12.5")),
        # the final statement of the answer variable's value
        ("The value of S12 is 12.500", implicit("12.500")),
        (f"So, the value of S12 is {MINUS}38.324.", implicit("-38.324")),
        ("S12 is 12.5", implicit("12.5")),
        ("S12: -38.324", implicit("-38.324")),
        ("S3 = 5\nS12 = -38.324", implicit("-38.324")),
        ("Step 10: S12 = S11 - S10 = 15 - 2.5 = 12.5", implicit("12.5")),
        ("S12 = 12.5 units", implicit("12.5")),
        ("S12 = 12.500 (rounded from 12.4996)", implicit("12.500")),
        ("S12 = 12.5\nThat was the last step.", implicit("12.5")),
        ("S11 = 3\nS12 = 12.5\n\n12.5", implicit("12.5")),
        ("S12 = 1\nS13 = 2\nS12 = 3\nS12: 4\nS13 = 5", implicit("4")),
        ("Final value: -38.324", implicit("-38.324")),
        ("Final result: 12.5 (rounded)", implicit("12.5")),
        ("S11 = 3\nThe result is 12.5.", implicit("12.5")),
        # a bare number on the last line
        ("12.500", implicit("12.500")),
        ("**12.500**", implicit("12.500")),
        ("`-38.324`", implicit("-38.324")),
        ("$-38.324$.", implicit("-38.324")),
        ("12.5.", implicit("12.5")),
        ("1,234.5", implicit("1234.5")),
        (f"{MINUS}38.324", implicit("-38.324")),
        ("S3 = 5\nS11 = 3\n12.5", implicit("12.5")),
        ("The answer is below.\n12.5", implicit("12.5")),
        ("S3 = 5\n\n```\n12.5\n```\n", implicit("12.5")),
        # no answer
        ("S3 = 5\nS4 = 15\nI am not sure how to go on.", None),
        ("S3 = 5\nS13 = 12.5", None),
        ("S9 = S8 - S5\nS12 = S11 * S10", None),
        ("I cannot do this.", None),
        ("", None),
        ("S12 = " + "1" * 101, None),
        ("1" * 101, None),
    ],
)
def test_reading_of_the_answer(reply, expected):
    assert first_answer(reply) == expected


def test_implicit_answer_follows_the_last_statement_of_the_answer_variable():
    reply = "S12 = 1\nS13 = 2\nS12 = 3\nS14 = 4"
    entries = parse_text(reply, 12).entries
    assert [(e.kind, e.var, e.number, e.line, e.implicit) for e in entries] == [
        ("step", 12, "1", 1, False),
        ("step", 13, "2", 2, False),
        ("step", 12, "3", 3, False),
        ("answer", None, "3", 3, True),
        ("step", 14, "4", 4, False),
    ]
    assert entries[3].raw == "S12 = 3"


def test_implicit_answer_after_a_step_on_a_line_of_several():
    entries = parse_text("S11 = 2, S12 = 3, S13 = 4", 12).entries
    assert [(e.kind, e.number) for e in entries] == [
        ("step", "2"),
        ("step", "3"),
        ("answer", "3"),
        ("step", "4"),
    ]


def test_final_value_line_is_an_answer_where_it_stands():
    entries = parse_text("S11 = 2\nFinal value: 5\nS13 = 4").entries
    assert [(e.kind, e.number, e.line, e.implicit) for e in entries] == [
        ("step", "2", 1, False),
        ("answer", "5", 2, True),
        ("step", "4", 3, False),
    ]


def test_bare_number_is_appended_at_the_end_with_its_line():
    entries = parse_text("S11 = 2\n**12.5**\n\n").entries
    assert entries[-1] == TextEntry("answer", "12.5", 2, "**12.5**", None, True)


def test_without_an_answer_variable_a_last_step_is_no_answer():
    assert first_answer("S12 = 5", None) is None
    assert first_answer("The value of S12 is 5", None) is None
    assert first_answer("Final value: 5", None) == implicit("5")
    assert first_answer("S12 = 5\n5", None) == implicit("5")


def test_an_explicit_answer_adds_no_implicit_one():
    entries = parse_text("S12 = 3\nAnswer: 3\nFinal value: 4\n4", 12).entries
    assert [(e.kind, e.number, e.implicit) for e in entries] == [
        ("step", "3", False),
        ("answer", "3", False),
    ]


def test_implicit_is_false_for_every_explicit_answer():
    reply = "Answer: 3\nThe final answer is 4\n\\boxed{5}\n**Answer:** 6"
    entries = parse_text(reply, 12).entries
    assert [(e.kind, e.number, e.implicit) for e in entries] == [
        ("answer", n, False) for n in "3456"
    ]


def test_an_answer_line_is_never_also_a_step_line():
    assert parse_text("Answer: S12 = 5", 12).entries == (
        TextEntry("answer", "5", 1, "Answer: S12 = 5"),
    )


@pytest.mark.parametrize(
    ("line", "parsed"),
    [
        ("S7: 12.5", (7, 12.5)),
        ("S7 : 12.5", (7, 12.5)),
        ("**S7**: 12.500", (7, 12.5)),
        ("- S7: 12.5", (7, 12.5)),
        ("S7: 1,234.5", (7, 1234.5)),
        (f"S7: {MINUS}12.5", (7, -12.5)),
        ("S7: S6 - S5 = 12.5", (7, 12.5)),
        ("S7: 12.5.", (7, 12.5)),
        ("the value of S7 is 12.5", (7, 12.5)),
        ("The value of S7 is 12.5.", (7, 12.5)),
        ("So the value of S7 is 12.5 units", (7, 12.5)),
        ("The final value of S7 is 12", (7, 12)),
        ("S7 is 12.5", (7, 12.5)),
        ("S7 is about 12.5", (7, 12.5)),
        ("S7 is S6 - S5 = 15 - 2.5 = 12.5", (7, 12.5)),
        (f"S7 is {MINUS}1,234.5 (rounded)", (7, -1234.5)),
    ],
)
def test_step_line_in_a_new_form(line, parsed):
    (entry,) = parse_text(line).entries
    assert (entry.kind, entry.var, entry.value, entry.implicit) == ("step", *parsed, False)
    assert type(entry.value) is type(parsed[1])
    assert entry.raw == line and entry.line == 1


@pytest.mark.parametrize(
    "line",
    [
        "S9 = S8 - S5",
        "S7: S6 - S5",
        "S7 is S6 - S5",
        "S7 is the difference of S6 and S5",
        "Since S7 is 12.5, we go on",
        "S7 is 2 more than S6",
        "S7:",
    ],
)
def test_restating_the_procedure_is_no_step(line):
    assert parse_text(line, 7).entries == ()


def test_several_steps_on_one_line_in_the_new_forms():
    trace = parse_text("S3: 5, S4 = 15; S5 is 12")
    assert [(e.var, e.value) for e in trace.entries] == [(3, 5), (4, 15), (5, 12)]


def test_existing_readings_are_unchanged():
    text = "**S3** = 5.5\nAnswer: 5.5"
    expected = (
        TextEntry("step", "5.5", 1, "**S3** = 5.5", 3),
        TextEntry("answer", "5.5", 2, "Answer: 5.5"),
    )
    assert parse_text(text).entries == expected
    assert parse_text(text, 3).entries == expected
    assert parse_text(text, answer_variable=None) == parse_text(text)
    assert [e.implicit for e in expected] == [False, False]
    work = "S3 = 5, S4 = 15\nS5 = S4 - S3 = 12.5"
    assert [(e.kind, e.var, e.value) for e in parse_text(work).entries] == [
        ("step", 3, 5),
        ("step", 4, 15),
        ("step", 5, 12.5),
    ]


def test_labeller_scores_an_implicit_answer_as_the_first_answer():
    """S6 is the four-step procedure's answer; its last statement stands for the answer."""
    trace = parse_text("S3 = 5.000\nS4 = 15.000\nS5 = 12.000\nS6 = 3.000", answer_variable=6)
    labels, metrics = label_text(tiny_scenario(), trace)
    assert labels == [] and metrics["first_answer"] == 3 and metrics["verdict"] == "faithful"
