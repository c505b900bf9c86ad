r"""Text mode: the parser's tolerance, each labelling rule on the four-step procedure,
and parser plus labeller proven against a writer whose faults are known.

S1 = 2, S2 = 3; step 1: S3 = S1 + S2 = 5; step 2: S4 = S3 * S2 = 15;
step 3: S5 = S4 - S2 = 12 (dead); step 4: S6 = S4 / S3 = 3 (the answer).
"""

from __future__ import annotations

import contextlib
import random
from functools import cache
from typing import Any

import pytest
from helpers import ORACLE, kinds, run, tiny_scenario

from agentproc.errors import ConfigError
from agentproc.labelling import Label, parse_text, run_text_episode
from agentproc.procedures import Cell, generate_procedure
from agentproc.workflow import Scenario, scenario_of, text_messages, text_prompt
from tests.fakes.text_writer import STYLES, write_text

TINY = tiny_scenario()
WORK = ["S3 = 5.000", "S4 = 15.000", "S5 = 12.000", "S6 = 3.000"]
FAITHFUL = [*WORK, "Answer: 3.000"]


def label(*lines: str) -> tuple[list[Label], dict[str, Any]]:
    labels, metrics, _ = run_text_episode(TINY, "\n".join(lines))
    return labels, metrics


def only(labels: list[Label], kind: str) -> list[Label]:
    return [lab for lab in labels if lab.kind.value == kind]


# -- parser -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "parsed"),
    [
        ("S5 = 12.5", ("step", 5, 12.5)),
        ("S5=12.5", ("step", 5, 12.5)),
        ("s5 = 12.5", ("step", 5, 12.5)),
        ("  S5   =   12.5  ", ("step", 5, 12.5)),
        ("**S5** = 12.500", ("step", 5, 12.5)),
        ("**S5 = 12.500**", ("step", 5, 12.5)),
        ("`S5 = 12.500`", ("step", 5, 12.5)),
        ("- S5 = 12.5", ("step", 5, 12.5)),
        ("* S5 = 12.5", ("step", 5, 12.5)),
        ("3. S5 = 12.5", ("step", 5, 12.5)),
        ("3) S5 = 12.5", ("step", 5, 12.5)),
        ("Step 3: S5 = 12.5", ("step", 5, 12.5)),
        ("**Step 3:** S5 = 12.5", ("step", 5, 12.5)),
        ("S5 = S4 - S3 = 15 - 2.5 = 12.5", ("step", 5, 12.5)),
        ("S5 = 12.500 (rounded from 12.4996)", ("step", 5, 12.5)),
        ("S5 = 1,234.5", ("step", 5, 1234.5)),
        ("S5 = -1,234,567.25", ("step", 5, -1234567.25)),
        ("S5 = -12.5", ("step", 5, -12.5)),
        ("S5 = \u221212.5", ("step", 5, -12.5)),
        ("S5 = 15 - -2.5 = 17.5", ("step", 5, 17.5)),
        ("S5 = 12.5.", ("step", 5, 12.5)),
        ("S5 \u2248 12.5", ("step", 5, 12.5)),
        ("S5 = 12", ("step", 5, 12)),
        ("S99 = 1", ("step", 99, 1)),
        ("Answer: 12.5", ("answer", None, 12.5)),
        ("answer: 12.5", ("answer", None, 12.5)),
        ("Final answer: 12.5", ("answer", None, 12.5)),
        ("**Answer:** 12.5", ("answer", None, 12.5)),
        ("**Final Answer**: 12.5", ("answer", None, 12.5)),
        ("Answer: S6 = 12.5", ("answer", None, 12.5)),
        ("The answer is 12.5.", ("answer", None, 12.5)),
        ("Therefore, the final answer is 1,212.5", ("answer", None, 1212.5)),
        ("\\boxed{12.5}", ("answer", None, 12.5)),
        ("So S6 = $\\boxed{\u221212.5}$.", ("answer", None, -12.5)),
        ("Answer: 12", ("answer", None, 12)),
    ],
)
def test_parse_text_reads_a_step_or_answer_line(line, parsed):
    (entry,) = parse_text(line).entries
    assert (entry.kind, entry.var, entry.value) == parsed
    assert type(entry.value) is type(parsed[2])
    assert entry.raw == line and entry.line == 1


@pytest.mark.parametrize(
    "line",
    ["", "Let me work this out.", "S5 = S4 - S3", "S5 =", "Step 3:", "The answer is below.", "--"],
)
def test_parse_text_ignores_a_line_that_is_neither(line):
    assert parse_text(line).entries == ()


def test_parse_text_reads_several_steps_on_one_line():
    trace = parse_text("S3 = 5, S4 = 15; S5 = 12")
    assert [(e.var, e.value, e.line) for e in trace.entries] == [(3, 5, 1), (4, 15, 1), (5, 12, 1)]


def test_parse_text_keeps_entries_in_order_with_their_line_numbers():
    trace = parse_text("Working:\nS3 = 5\n\nAnswer: 5\nS4 = 15")
    assert [(e.kind, e.line, e.raw) for e in trace.entries] == [
        ("step", 2, "S3 = 5"),
        ("answer", 4, "Answer: 5"),
        ("step", 5, "S4 = 15"),
    ]


# -- prompt -------------------------------------------------------------------


def test_text_prompt_lists_inputs_steps_and_names_the_output_format():
    prompt = text_prompt(TINY)
    assert "Inputs: S1 = 2.000, S2 = 3.000." in prompt
    assert "1. S3 = S1 + S2\n2. S4 = S3 * S2\n3. S5 = S4 - S2\n4. S6 = S4 / S3\n" in prompt
    assert "one line per step, in order" in prompt and "\nS<k> = <the value of S<k>>\n" in prompt
    assert "3 decimals" in prompt and prompt.endswith("Answer: <the value of S6>")


def test_text_prompt_format_example_shows_placeholders_and_no_value():
    """A value in the example (it was ``S7 = 12.500``) is copied by small models."""
    for mode in ("decimal", "integer"):
        scenario = scenario_of(generate_procedure(Cell(steps=5, mode=mode), seed=0, index=0))
        example = text_prompt(scenario).split("exactly like\n", 1)[1].split("\n", 1)[0]
        assert example == "S<k> = <the value of S<k>>"


def test_text_prompt_in_integer_mode_asks_for_integers():
    scenario = scenario_of(generate_procedure(Cell(steps=5, mode="integer"), seed=0, index=0))
    prompt = text_prompt(scenario)
    assert "integer" in prompt and "decimals" not in prompt


def test_text_messages_are_a_system_and_a_user_message():
    messages = text_messages(TINY)
    assert [m["role"] for m in messages] == ["system", "user"]
    assert messages[1]["content"] == text_prompt(TINY)


# -- labelling rules on the four-step procedure ---------------------------------


def test_faithful_text_has_no_labels_and_the_tool_mode_metrics():
    labels, m = label(*FAITHFUL)
    assert labels == []
    assert m == run(ORACLE)[1]
    assert m["verdict"] == "faithful" and m["calls"] == 5


def test_metrics_have_exactly_the_monitor_keys():
    _, m = label("S3 = 7", "Answer: 1")
    assert list(m) == list(run(ORACLE)[1])


def test_restated_inputs_matching_are_ignored():
    labels, m = label("S1 = 2", "S2 = 3.000", *FAITHFUL)
    assert labels == [] and m["verdict"] == "faithful"
    assert m["calls"] == 7 and m["longest_correct_prefix"] == 4 and m["first_divergence"] is None


def test_restated_input_with_another_value_is_misread_and_carried_downstream():
    labels, m = label("S1 = 4", "S3 = 7", "S4 = 21", "S5 = 18", "S6 = 3", "Answer: 3")
    assert kinds(labels) == [("wrong_argument", i, i or None) for i in range(4)]
    assert [lab.cause for lab in labels] == ["misread_input", *["propagated"] * 3]
    assert labels[0].argument == "S1" and labels[0].expected == 2 and labels[0].got == 4
    assert m["verdict"] == "unfaithful_correct"


def test_hallucinated_line_for_a_variable_past_the_last():
    labels, m = label(*WORK, "S7 = 3", "Answer: 3")
    assert kinds(labels) == [("hallucinated_call", 4, None)]
    assert m["first_divergence"] == {"call_index": 4, "step": None, "label": "hallucinated_call"}


def test_repeated_step_same_value_is_not_self_correction():
    labels, _ = label("S3 = 5", *FAITHFUL)
    assert kinds(labels) == [("repeated_step", 1, 1)] and labels[0].self_correction is False


def test_repeated_step_fixing_a_slip_is_self_correction():
    labels, _ = label("S3 = 5.5", *FAITHFUL)
    assert kinds(labels) == [("wrong_argument", 0, 1), ("repeated_step", 1, 1)]
    assert labels[0].cause == "other" and labels[1].self_correction is True


def test_reordered_step_written_before_its_input_breaks_dependency():
    labels, _ = label("S4 = 15", "S3 = 5", "S5 = 12", "S6 = 3", "Answer: 3")
    assert kinds(labels) == [("reordered", 0, 2)] and labels[0].breaks_dependency is True


def test_reordered_step_whose_inputs_were_written_keeps_dependencies():
    labels, _ = label("S3 = 5", "S4 = 15", "S6 = 3", "S5 = 12", "Answer: 3")
    assert kinds(labels) == [("reordered", 2, 4)] and labels[0].breaks_dependency is False


def test_wrong_value_from_own_wrong_inputs_is_propagated():
    labels, m = label("S3 = 5.5", "S4 = 16.5", "S5 = 13.5", "S6 = 3", "Answer: 3")
    assert [(lab.step, lab.cause) for lab in labels] == [
        (1, "other"),
        (2, "propagated"),
        (3, "propagated"),
    ]
    assert labels[1].argument == "S4" and labels[1].expected == 15 and labels[1].got == 16.5
    assert m["verdict"] == "unfaithful_correct" and m["progress_rate"] == 0.25


def test_wrong_value_from_another_variable_is_lookback_confusion():
    labels, _ = label("S3 = 5", "S4 = 10", "S5 = 7", "S6 = 2", "Answer: 2")
    assert labels[0].cause == "lookback_confusion" and labels[0].confused_with == "S1"
    assert [lab.cause for lab in labels[1:]] == ["propagated", "propagated", "propagated"]


def test_arithmetic_slip_is_other_and_the_answer_built_on_it_is_propagated():
    labels, m = label("S3 = 5", "S4 = 16", "S5 = 13", "S6 = 3.2", "Answer: 3.2")
    assert kinds(labels) == [
        ("wrong_argument", 1, 2),
        ("wrong_argument", 2, 3),
        ("wrong_argument", 3, 4),
        ("wrong_answer", 4, None),
    ]
    assert [lab.cause for lab in labels] == ["other", "propagated", "propagated", "propagated"]
    assert m["verdict"] == "wrong"


@pytest.mark.parametrize(
    ("left_out", "step", "live"), [("S5 = 12.000", 3, False), ("S4 = 15.000", 2, True)]
)
def test_skipped_step_says_whether_it_is_live(left_out, step, live):
    labels, m = label(*[line for line in FAITHFUL if line != left_out])
    assert kinds(labels) == [("skipped_step", None, step)] and labels[0].live is live
    assert m["verdict"] == "unfaithful_correct" and m["executed_steps"] == 3


def test_answer_before_the_last_step_is_premature_finish():
    labels, _ = label("S3 = 5", "S4 = 15", "Answer: 15")
    assert kinds(labels) == [
        ("premature_finish", 2, None),
        ("wrong_answer", 2, None),
        ("skipped_step", None, 3),
        ("skipped_step", None, 4),
    ]
    assert labels[0].missing_steps == 2 and labels[1].cause == "propagated"


def test_answer_midway_then_finishing_the_work_is_premature_not_revised():
    labels, m = label(*WORK[:3], "Answer: 3", WORK[3], "Answer: 3")
    assert kinds(labels) == [("premature_finish", 3, None)] and labels[0].missing_steps == 1
    assert m["answers"] == 1 and m["verdict"] == "unfaithful_correct"


def test_without_an_answer_line_the_final_statement_of_the_answer_variable_is_the_answer():
    labels, m = label(*WORK)
    assert labels == [] and m["verdict"] == "faithful" and m["first_answer"] == 3.0


def test_no_statement_of_the_answer_at_all_is_missing_answer():
    labels, m = label(*WORK[:3], "I could not finish.")
    assert kinds(labels) == [("skipped_step", None, 4), ("missing_answer", None, None)]
    assert m["verdict"] == "no_answer" and m["first_answer"] is None


def test_wrong_answer_the_work_does_not_support_is_unsupported():
    labels, _ = label(*WORK, "Answer: 7")
    assert kinds(labels) == [("wrong_answer", 4, None)]
    assert (labels[0].cause, labels[0].expected, labels[0].got) == ("unsupported", 3, 7)


def test_changed_answer_is_a_revision_with_self_correction():
    labels, m = label(*FAITHFUL[:4], "Answer: 7", "Answer: 3")
    assert kinds(labels) == [("wrong_answer", 4, None), ("answer_revised", 5, None)]
    assert labels[1].self_correction is True
    assert m["verdict"] == "wrong" and m["final_answer_correct"] is True and m["answers"] == 2


def test_revision_away_from_the_right_answer_is_not_self_correction():
    labels, m = label(*FAITHFUL, "Answer: 4")
    assert kinds(labels) == [("answer_revised", 5, None)] and labels[0].self_correction is False
    assert m["verdict"] == "unfaithful_correct" and m["final_answer"] == 4


def test_same_answer_repeated_is_not_a_revision():
    labels, m = label(*FAITHFUL, "\\boxed{3}")
    assert labels == [] and m["verdict"] == "faithful"
    assert m["answers"] == 1 and m["calls"] == 6 and m["first_divergence"] is None


@pytest.mark.parametrize(
    ("lines", "verdict"),
    [
        (FAITHFUL, "faithful"),
        (["S3 = 5", *FAITHFUL], "unfaithful_correct"),
        ([*WORK, "Answer: 3.5"], "wrong"),
        ([*WORK, "Answer: 3.5", "Answer: 3"], "wrong"),
        (WORK, "faithful"),
        (["I cannot do this."], "no_answer"),
    ],
)
def test_verdict(lines, verdict):
    assert label(*lines)[1]["verdict"] == verdict


def test_first_divergence_past_the_end_points_after_the_last_entry():
    _, m = label("S1 = 2", "S3 = 5", "S4 = 15")
    assert m["longest_correct_prefix"] == 2
    assert m["first_divergence"] == {"call_index": 3, "step": 3, "label": "skipped_step"}


# -- parser and labeller against a writer with known faults -----------------------


@cache
def generated(count: int, seed: int) -> tuple[Scenario, ...]:
    """Scenarios of 5 to 95 steps, decimal and integer, various look-backs."""
    rng = random.Random(seed)
    out = []
    for i in range(count):
        mode = rng.choice(("decimal", "integer"))
        cell = Cell(steps=rng.randint(5, 95), lookback=rng.randint(1, 6), mode=mode)
        out.append(scenario_of(generate_procedure(cell, seed=seed, index=i)))
    return tuple(out)


@pytest.mark.parametrize("style", list(STYLES))
def test_faithful_text_of_generated_scenarios_gets_no_labels(style):
    for scenario in generated(100, 1):
        labels, m, trace = run_text_episode(scenario, write_text(scenario, style=style))
        assert labels == [], (scenario.id, style)
        assert m["verdict"] == "faithful" and len(trace.entries) == len(scenario.steps) + 1


def test_writer_with_restated_inputs_and_a_repeated_answer_is_still_faithful():
    for scenario in generated(50, 2):
        text = write_text(scenario, {"inputs": True, "answer": "twice"}, style="markdown")
        assert run_text_episode(scenario, text)[0] == []


Injection = tuple[dict[str, Any], dict[str, Any], set[str]]


def _injection(fault: str, s: Scenario, rng: random.Random) -> Injection:
    """The faults to write, the label they must produce, and the other labels allowed."""
    n = len(s.steps)
    k = rng.randint(1, n)
    carried = {"wrong_argument:propagated", "wrong_answer:propagated"}
    wrong = {"kind": "wrong_argument", "step": k, "argument": f"S{k + 2}"}
    if fault == "skip":
        also = {"premature_finish"} if k == n else set()
        return {"skip": k}, {"kind": "skipped_step", "step": k, "live": s.steps[k - 1].live}, also
    if fault == "stop":
        allowed = {"skipped_step", "wrong_answer:propagated", "wrong_answer:unsupported"}
        return {"stop": k - 1}, {"kind": "premature_finish", "missing_steps": n - k + 1}, allowed
    if fault == "slip":
        return {"slip": k}, {**wrong, "cause": "other"}, carried
    if fault == "confuse":
        return {"confuse": k}, {**wrong, "cause": "lookback_confusion"}, carried
    if fault in ("retry", "repeat"):
        want = {"kind": "repeated_step", "step": k, "self_correction": fault == "retry"}
        return {fault: k}, want, {"wrong_argument:other"} if fault == "retry" else set()
    if fault == "reorder":
        k = min(k, n - 1)
        want = {"kind": "reordered", "step": k + 1, "breaks_dependency": k in s.steps[k].depends_on}
        return {"reorder": k}, want, set()
    if fault == "extra":
        return {"extra": k - 1}, {"kind": "hallucinated_call", "call_index": k - 1}, set()
    want = {
        "wrong": {"kind": "wrong_answer", "cause": "unsupported", "call_index": n},
        "none": {"kind": "missing_answer"},
        "implicit": {"kind": "skipped_step"},
        "fix": {"kind": "answer_revised", "self_correction": True, "call_index": n + 1},
        "break": {"kind": "answer_revised", "self_correction": False, "call_index": n + 1},
    }[fault]
    allowed = {"wrong_answer:unsupported"} if fault == "fix" else set()
    if fault == "none":  # the last step is not written either
        allowed = {"skipped_step"}
    if fault == "implicit":  # read from the last step's line: nothing is wrong
        return {"answer": fault}, None, set()
    return {"answer": fault}, want, allowed


FAULT_NAMES = [
    "skip",
    "stop",
    "slip",
    "confuse",
    "retry",
    "repeat",
    "reorder",
    "extra",
    "wrong",
    "none",
    "implicit",
    "fix",
    "break",
]


@pytest.mark.parametrize("fault", FAULT_NAMES)
def test_injected_fault_is_found_in_generated_scenarios(fault):
    rng = random.Random(fault)
    impossible = 0
    for scenario in generated(200, 3):
        for _ in range(20):  # a confusion cannot be told apart at every step: draw another
            faults, want, allowed = _injection(fault, scenario, rng)
            with contextlib.suppress(ConfigError):
                text = write_text(scenario, faults, style=rng.choice(list(STYLES)))
                break
        else:
            impossible += 1  # e.g. a procedure whose values are all zero
            continue
        labels, metrics, _ = run_text_episode(scenario, text)
        if want is None:
            assert labels == [] and metrics["verdict"] == "faithful", (scenario.id, faults)
            continue
        found = [lab for lab in labels if want.items() <= lab.to_json().items()]
        assert len(found) == 1, (scenario.id, faults, [lab.to_json() for lab in labels])
        for lab in labels:
            if lab is not found[0]:
                explained = {lab.kind.value, f"{lab.kind.value}:{lab.cause}"} & allowed
                assert explained, (scenario.id, faults, lab.to_json())
    assert impossible <= 4


@pytest.mark.parametrize(
    ("faults", "style", "message"),
    [
        ({"typo": 1}, "plain", "unknown fault 'typo' \\(expected one of: skip, stop, slip"),
        ({}, "fancy", "unknown style 'fancy' \\(expected one of: plain, markdown, verbose\\)"),
        ({"answer": "late"}, "plain", "unknown answer fault 'late' \\(expected one of: wrong"),
    ],
)
def test_write_text_names_the_valid_choices_for_an_unknown_one(faults, style, message):
    with pytest.raises(ConfigError, match=message):
        write_text(TINY, faults, style)


def test_write_text_refuses_a_confusion_that_cannot_be_told_apart():
    scenario = scenario_of(generate_procedure(Cell(steps=5, ops="div"), seed=0, index=0))
    with pytest.raises(ConfigError, match="no look-back confusion at step 1"):
        write_text(scenario, {"confuse": 1})
