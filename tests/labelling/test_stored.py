"""Labelling a stored trace from its compact calls (:meth:`Monitor.observe_stored`, what
``relabel`` does for every call) gives what observing each call as a record gives."""

from __future__ import annotations

import json
from typing import Any

import pytest
from helpers import tiny_scenario
from hypothesis import given, settings
from hypothesis import strategies as st

from agentproc.labelling import Monitor
from agentproc.labelling.tools import StoredCallError
from agentproc.procedures import Cell, generate_procedure
from agentproc.workflow import CallRecord, Workflow, build_workflow, scenario_of

WORKFLOWS = {
    "tiny": build_workflow(tiny_scenario()),
    "decimal": build_workflow(scenario_of(generate_procedure(Cell(steps=6, lookback=3), 0, 1))),
    "integer": build_workflow(
        scenario_of(generate_procedure(Cell(steps=6, lookback=3, mode="integer"), 0, 2))
    ),
}
REFUSALS = [None] * 6 + [
    "dependency",
    "division_by_zero",
    "out_of_range",
    "unknown_tool",
    "invalid_arguments",
    "distractor",
    "transient",
    "premature",
]


ODD_ARGUMENTS = [
    "",
    "[1]",
    "{}",
    '{"S1": 2',
    '{"S1": 12345678901234567890123}',  # beyond 64 bits: read by the exact parser
    '{"S1": [1], "S2": 2}',  # nested: the same
    '{"S1": 1e300}',
]
"""Argument texts that are not a step's right ones, now and then in a trace."""


def _number(wf: Workflow, draw: Any, var: int) -> float | int:
    """A number for variable ``var``: right, another variable's, nudged, shortened or odd."""
    u = draw(st.integers(1, len(wf.correct) - 1)) if draw(st.booleans()) else var
    exact = wf.correct[u] / wf.scale
    return draw(
        st.sampled_from(
            [
                exact,
                exact,
                round(exact, 1),
                round(exact + 1 / wf.scale, 6),
                int(exact),
                7.25,
                1.001,  # 1000.9999999999999 units: rounded, not cut
            ]
        )
    )


@st.composite
def traces(draw: Any) -> tuple[Workflow, list[list[Any]]]:
    wf = WORKFLOWS[draw(st.sampled_from(sorted(WORKFLOWS)))]
    n = wf.n_steps
    calls: list[list[Any]] = []
    last: dict[int, float | int] = {}  # the value each variable got last
    for _ in range(draw(st.integers(0, 14))):
        refused = draw(st.sampled_from(REFUSALS))
        if draw(st.integers(0, 5)) == 0:  # an answer
            right, own = wf.correct[-1] / wf.scale, _number(wf, draw, len(wf.correct) - 1)
            answer = draw(st.sampled_from([right, 1.5, None, own]))
            text = json.dumps({wf.finish_argument: answer})
            calls.append([wf.finish_tool, text, None, refused, answer])
            continue
        k = draw(st.integers(1, n))
        spec = wf.steps[k - 1]
        args = {p: _number(wf, draw, int(p[1:])) for p in spec.params}
        for p in spec.params:  # often its own value of the variable, wrong or right
            if int(p[1:]) in last and draw(st.booleans()):
                args[p] = last[int(p[1:])]
        # As a call whose arguments came as an object records them (compact: a text
        # equal to the step's right_arguments is known right unread), or as a model
        # wrote them.
        compact = draw(st.booleans())
        text = json.dumps(args, separators=(",", ":") if compact else None)
        if draw(st.integers(0, 39)) == 0:  # now and then, arguments that are not right
            text = draw(st.sampled_from(ODD_ARGUMENTS))
        value = (
            None
            if refused is not None and refused not in ("dependency",)
            else _number(wf, draw, spec.target)
        )
        if draw(st.integers(0, 9)) == 0:
            value = None
        if value is not None and refused is None:
            last[spec.target] = value
        calls.append([spec.name, text, k, refused, value])
    return wf, calls


def by_records(wf: Workflow, calls: list[list[Any]]) -> Any:
    monitor = Monitor(wf)
    for i, c in enumerate(calls):
        try:
            rec = CallRecord.stored(i, *c, wf.scale, wf.finish_tool)
            monitor.observe(rec)
        except ValueError:
            return ("error", i, "arguments")
        except (KeyError, TypeError, IndexError):
            return ("error", i, None)
    return monitor.finish()


def stored(wf: Workflow, calls: list[list[Any]], known: bool = True) -> Any:
    monitor = Monitor(wf)
    try:
        monitor.observe_stored(calls, known)
    except StoredCallError as exc:
        return ("error", exc.index, exc.field)
    return monitor.finish()


@settings(max_examples=400, deadline=None)
@given(traces(), st.booleans())
def test_a_stored_trace_gets_the_labels_and_metrics_its_records_get(trace: Any, known: bool):
    wf, calls = trace
    assert stored(wf, calls, known) == by_records(wf, calls)


@pytest.mark.parametrize("text", ODD_ARGUMENTS[4:])
def test_arguments_the_fast_parse_cannot_read_are_read_exactly(text: str):
    # A step's first run with such arguments: the stored path hands them to the exact
    # reader, as the record path does, and both label them alike.
    wf = WORKFLOWS["decimal"]
    spec = wf.steps[0]
    call = [spec.name, text, 1, None, wf.correct[spec.target] / wf.scale]
    assert stored(wf, [call]) == by_records(wf, [call])
    assert stored(wf, [call])[0]  # labelled: none of them is the step's right arguments


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
        ({"name": "step_1"}, None, "not a recorded call"),
    ],
)
def test_a_stored_call_that_is_not_one_names_its_index_and_field(call, field, reason):
    wf = WORKFLOWS["tiny"]
    good = ["step_1", '{"S1": 2, "S2": 3}', 1, None, 5]
    monitor = Monitor(wf)
    with pytest.raises(StoredCallError) as err:
        monitor.observe_stored([good, call])
    assert (err.value.index, err.value.field, err.value.reason) == (1, field, reason)


def test_a_step_number_out_of_range_is_refused_by_the_record_path_too():
    wf = WORKFLOWS["tiny"]
    for step in (0, -1, 5):
        call = ["step_1", '{"S1": 2, "S2": 3}', step, "division_by_zero", None]
        assert by_records(wf, [call]) == ("error", 0, None)


def test_a_wrong_answer_carrying_the_last_value_produced_is_propagated():
    wf = WORKFLOWS["tiny"]  # the answer variable is S6, never produced here
    calls = [["step_1", '{"S1": 2, "S2": 3}', 1, None, 7], ["submit_answer", "{}", None, None, 7]]
    labels, _ = stored(wf, calls)
    assert [(lab.kind.value, lab.cause) for lab in labels if lab.call_index == 1] == [
        ("premature_finish", None),
        ("wrong_answer", "propagated"),
    ]
    assert stored(wf, calls) == by_records(wf, calls)


def test_a_value_produced_is_read_in_units_rounded_not_cut():
    # 1.001 is 1000.9999999999999 thousandths as a float: 1001 units, which the next call
    # carries forward (propagated), not 1000 (an unexplained slip).
    wf = WORKFLOWS["tiny"]
    calls = [
        ["step_1", '{"S1": 2, "S2": 3}', 1, None, 1.001],
        ["step_2", '{"S3": 1.001, "S2": 3}', 2, None, 3.003],
    ]
    labels, _ = stored(wf, calls)
    assert [(lab.argument, lab.cause) for lab in labels if lab.kind.value == "wrong_argument"] == [
        ("S3", "propagated")
    ]
    assert stored(wf, calls) == by_records(wf, calls)


def test_right_arguments_are_known_right_without_being_parsed(monkeypatch):
    wf = WORKFLOWS["decimal"]
    calls = [
        [s.name, text, s.step, None, wf.correct[s.target] / wf.scale]
        for s, text in zip(wf.steps, wf.right_arguments, strict=True)
    ]
    calls.append([wf.finish_tool, "{}", None, None, wf.correct[-1] / wf.scale])
    want = stored(wf, calls)
    assert want[1]["verdict"] == "faithful"

    def unread(text: str) -> None:
        raise AssertionError(f"parsed {text}")

    monkeypatch.setattr(
        "agentproc.labelling.tools.plain_object", lambda t: None if t == "{}" else unread(t)
    )
    assert stored(wf, calls) == want
