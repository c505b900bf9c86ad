"""Labelling a stored trace (:meth:`Monitor.observe_stored`, what ``relabel`` does for every
call) gives what the live monitor gave the same calls as the mock tools executed them:
one labelling path, so a rule changes in one place."""

from __future__ import annotations

import json
from typing import Any

import pytest
from helpers import tiny_scenario
from hypothesis import given, settings
from hypothesis import strategies as st

from agentproc.errors import StoredCallError
from agentproc.labelling import Label, LabelKind, Monitor
from agentproc.labelling.calculator import monitor_for
from agentproc.labelling.core import LabelCore
from agentproc.procedures import Cell, generate_procedure
from agentproc.runs.layout import compact_call
from agentproc.workflow import CallRecord, Toolkit, Workflow, build_workflow, scenario_of
from agentproc.workflow.calls import read_stored
from agentproc.workflow.present import Presented, present
from agentproc.workflow.runtime import procedure_workflow
from agentproc.workflow.variant import ToolFaults, Variant

SCENARIOS = {
    "tiny": tiny_scenario(),
    "decimal": scenario_of(generate_procedure(Cell(steps=7, lookback=3), 0, 1)),
    "integer": scenario_of(generate_procedure(Cell(steps=6, lookback=3, mode="integer"), 0, 2)),
}
VARIANTS: dict[str, Variant | None] = {
    "default": None,
    # Shown names the stored path must key back, distractors and transient faults.
    "scrambled": Variant(
        names="random", scramble_names=True, distractors=2, faults=ToolFaults(transient=0.2)
    ),
}
ODD_ARGUMENTS = [
    "",
    "[1]",
    "{}",
    '{"S1": 2',
    '{"S1": 12345678901234567890123}',  # beyond 64 bits: read by the exact parser
    '{"S1": [1], "S2": 2}',  # nested: the same
    '{"S1": 1e300}',
    '{"S1": "2", "S2": 3}',  # fails the schema
]
"""Argument texts that are not a step's right ones, now and then in a trace."""


def _number(wf: Workflow, draw: Any, var: int, last: dict[int, Any]) -> Any:
    """A number for variable ``var``: right, the agent's own, another variable's, nudged,
    shortened or odd."""
    if var in last and draw(st.booleans()):
        return last[var]
    u = draw(st.integers(1, len(wf.correct) - 1)) if draw(st.booleans()) else var
    exact = wf.correct[u] / wf.scale
    return draw(
        st.sampled_from(
            # 1.001 is 1000.9999999999999 units: rounded, not cut.
            [exact, exact, round(exact, 1), round(exact + 1 / wf.scale, 6), int(exact), 7.25, 1.001]
        )
    )


@st.composite
def episodes(draw: Any) -> tuple[Workflow, Presented | None, list[CallRecord]]:
    """A random multi-fault episode, executed by the mock tools: its records."""
    scenario = SCENARIOS[draw(st.sampled_from(sorted(SCENARIOS)))]
    variant = VARIANTS[draw(st.sampled_from(sorted(VARIANTS)))]
    presented = None if variant is None else present(scenario, variant)
    wf = build_workflow(scenario if presented is None else presented.scenario, variant)
    toolkit = Toolkit(wf, draw(st.sampled_from(["observe", "enforce"])), presented)
    last: dict[int, Any] = {}
    for _ in range(draw(st.integers(0, 16))):
        kind = draw(st.integers(0, 9))
        if kind == 0:  # an answer
            answer = _number(wf, draw, len(wf.correct) - 1, last)
            arguments: Any = {wf.finish_argument: draw(st.sampled_from([answer, 1.5, "x"]))}
            toolkit.call(wf.finish_tool, arguments)
            continue
        if kind == 1:  # a tool that is none of the procedure's
            name = draw(st.sampled_from(["step_99", "lookup_constant", "convert_units"]))
            toolkit.call(name, "{}")
            continue
        spec = wf.steps[draw(st.integers(1, wf.n_steps)) - 1]
        args = {p: _number(wf, draw, int(p[1:]), last) for p in spec.params}
        if draw(st.integers(0, 9)) == 0:
            args.pop(spec.params[0])  # an argument missing
        name, shown = (
            (spec.name, args) if presented is None else presented.outbound(spec.name, args)
        )
        # As an object (recorded as compact JSON), as a model wrote the text, or odd.
        form = draw(st.integers(0, 12))
        arguments = shown if form < 6 else json.dumps(shown)
        if form == 12:
            arguments = draw(st.sampled_from(ODD_ARGUMENTS))
        rec = toolkit.call(name, arguments)
        if rec.value is not None:
            last[spec.target] = wf.to_number(rec.value)
    return wf, presented, toolkit.calls


def _fields(labels: list[Label]) -> list[dict[str, Any]]:
    """Every field of every label, by name (a difference names the field)."""
    return [lab._asdict() for lab in labels]


def live(wf: Workflow, presented: Presented | None, calls: list[CallRecord]) -> Any:
    monitor = monitor_for(wf, presented)
    for rec in calls:
        monitor.observe(rec)
    labels, metrics = monitor.finish()
    return _fields(labels), metrics


def stored(wf: Workflow, presented: Presented | None, calls: list[Any]) -> Any:
    monitor = monitor_for(wf, presented)
    try:
        monitor.observe_stored(calls, presented)
    except StoredCallError as exc:
        return ("error", exc.index, exc.field)
    labels, metrics = monitor.finish()
    return _fields(labels), metrics


@settings(max_examples=400, deadline=None)
@given(episodes())
def test_a_stored_trace_gets_every_label_field_and_metric_the_live_monitor_gave(episode: Any):
    wf, presented, calls = episode
    want = live(wf, presented, calls)
    as_json = [rec.to_json(wf.scale) for rec in calls]  # a version-1 line's calls
    assert stored(wf, presented, [compact_call(c) for c in as_json]) == want
    assert stored(wf, presented, as_json) == want


def test_a_rule_changed_in_the_core_changes_stored_labels_too(monkeypatch: pytest.MonkeyPatch):
    wf = build_workflow(tiny_scenario())
    toolkit = Toolkit(wf)
    for k, args in enumerate(({"S1": 2, "S2": 3}, {"S3": 5, "S2": 3}), start=1):
        toolkit.call(f"step_{k}", args)
    calls = [compact_call(rec.to_json(wf.scale)) for rec in toolkit.calls]
    record_step = LabelCore.record_step

    def every_run_repeats(self: LabelCore, entry: Any, step: int, value: int) -> None:
        self.add(Label(LabelKind.REPEATED_STEP, entry.index, step))
        record_step(self, entry, step, value)

    monkeypatch.setattr(LabelCore, "record_step", every_run_repeats)
    labels, _ = stored(wf, None, calls)
    assert [(lab["kind"], lab["step"]) for lab in labels[:2]] == [
        ("repeated_step", 1),
        ("repeated_step", 2),
    ]
    assert (labels, _) == live(wf, None, toolkit.calls)


@pytest.mark.parametrize("number", ["12345678901234567890123", "1e300"])
def test_arguments_the_fast_parse_cannot_read_are_read_exactly(number: str):
    wf = build_workflow(SCENARIOS["decimal"])
    a, b = wf.steps[0].params
    text = f'{{"{a}": {number}, "{b}": {wf.expected[int(b[1:])]}}}'
    call = [wf.steps[0].name, text, 1, None, wf.expected[3]]
    labels, _ = stored(wf, None, [call])
    assert (labels[0]["kind"], labels[0]["argument"]) == ("wrong_argument", a)
    assert labels[0]["got"] == json.loads(number) and type(labels[0]["got"]) is type(
        json.loads(number)
    )


@pytest.mark.parametrize(
    ("call", "field", "reason"),
    [
        (["step_1", '{"S1": 2', 1, None, 5], "arguments", "arguments are not a JSON object"),
        (["step_1", "[2, 3]", 1, None, 5], "arguments", "arguments are not a JSON object"),
        (["step_1", '{"S1": 2}', 1, None, 5], None, "not a recorded call"),  # S2 missing
        (["step_1", '{"S1": 2, "S2": 3}', 0, None, 5], None, "not a recorded call"),
        (["step_4", '{"S4": 15, "S3": 5}', 0, None, 3], None, "not a recorded call"),
        (["step_4", '{"S4": 15, "S3": 5}', -4, None, 3], None, "not a recorded call"),
        (["step_1", '{"S1": 2, "S2": 3}', 9, None, 5], None, "not a recorded call"),
        (["step_1", '{"S1": 2, "S2": 3}', "1", None, 5], None, "not a recorded call"),
        (["step_1", '{"S1": 2, "S2": 3}', 1, None, "5"], None, "not a recorded call"),
        ([7, '{"S1": 2, "S2": 3}', 1, None, 5], None, "not a recorded call"),
        (["step_1", '{"S1": 2, "S2": 3}', 1, None], None, "not a recorded call"),
        ({"arguments": "{}"}, None, "not a recorded call"),  # a version-1 call, unnamed
        (None, None, "not a recorded call"),
    ],
)
def test_a_stored_call_that_is_not_one_names_its_index_and_field(call, field, reason):
    wf = build_workflow(tiny_scenario())
    good = ["step_1", '{"S1": 2, "S2": 3}', 1, None, 5]
    monitor = Monitor(wf)
    with pytest.raises(StoredCallError) as err:
        monitor.observe_stored([good, call])
    assert (err.value.index, err.value.field, err.value.reason) == (1, field, reason)


def test_a_wrong_answer_carrying_the_last_value_produced_is_propagated():
    wf = build_workflow(tiny_scenario())  # the answer variable is S6, never produced here
    calls = [["step_1", '{"S1": 2, "S2": 3}', 1, None, 7], ["submit_answer", "{}", None, None, 7]]
    labels, _ = stored(wf, None, calls)
    assert [(lab["kind"], lab["cause"]) for lab in labels if lab["call_index"] == 1] == [
        ("premature_finish", None),
        ("wrong_answer", "propagated"),
    ]


def test_a_value_produced_is_read_in_units_rounded_not_cut():
    # 1.001 is 1000.9999999999999 thousandths as a float: 1001 units, which the next call
    # carries forward (propagated), not 1000 (an unexplained slip).
    wf = build_workflow(tiny_scenario())
    calls = [
        ["step_1", '{"S1": 2, "S2": 3}', 1, None, 1.001],
        ["step_2", '{"S3": 1.001, "S2": 3}', 2, None, 3.003],
    ]
    labels, _ = stored(wf, None, calls)
    wrong = [(lab["argument"], lab["cause"]) for lab in labels if lab["kind"] == "wrong_argument"]
    assert wrong == [("S3", "propagated")]


@pytest.mark.parametrize(
    "call",
    [
        ["step_1", '{"S1": 2, "S2": 3}', 1, None, 5],
        ["step_1", '{"S1": 2, "S2": 3}', 1, None, 5.0011],
        ["step_1", "{}", 1, "invalid_arguments", None],
        ["submit_answer", '{"answer": 7}', None, None, 7],
        ["nope", "[1]", None, "unknown_tool", None],
        {"name": "step_1", "arguments": '{"S1": 2, "S2": 3}', "step": 1, "value": 5},
        {"name": "submit_answer", "arguments": "{}", "answer": 7},
        ["step_1", "[1]", 1, None, 5],
        ["step_1", '{"S1": 2, "S2": 3}', 1, None, "5"],
        [7, "{}", 1, None, 5],
        ["step_1", "{}", 1, None],
        {"arguments": "{}"},
        None,
    ],
    ids=repr,
)
def test_a_stored_call_read_to_its_parts_reads_as_its_record(call: Any):
    """The monitor reads a stored call to its parts (no record made); a subclass that
    labels whole records reads it as a record: the same parts, the same errors."""
    wf = build_workflow(tiny_scenario())
    try:
        parts = read_stored(call, 3, wf.scale, wf.finish_tool)
    except StoredCallError as exc:
        with pytest.raises(StoredCallError) as err:
            CallRecord.read(call, 3, wf.scale, wf.finish_tool)
        assert (err.value.index, err.value.field, err.value.reason) == (
            exc.index,
            exc.field,
            exc.reason,
        )
        return
    assert CallRecord.read(call, 3, wf.scale, wf.finish_tool).observed == parts


def test_liveness_is_made_only_for_an_episode_that_skips_a_step():
    procedure = generate_procedure(Cell(steps=6, lookback=2), 0, 0)
    expected = procedure_workflow(procedure).expected_calls()
    calls = [
        [name, json.dumps(args), step, None, procedure.values[step + 1] / procedure.scale]
        for step, (name, args) in enumerate(expected[:-1], start=1)
    ]
    name, args = expected[-1]
    finish = [name, json.dumps(args), None, None, procedure.answer / procedure.scale]
    for trace, asked in ((calls, []), (calls[:2] + calls[3:], [1])):
        made: list[int] = []
        wf = procedure_workflow(procedure)
        object.__setattr__(wf, "make_live", lambda made=made: made.append(1) or procedure.live)
        labels, _ = stored(wf, None, [*trace, finish])
        assert made == asked
        assert [lab["kind"] for lab in labels] == ([] if not asked else ["skipped_step"])
