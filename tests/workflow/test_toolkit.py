"""The mock tools: refusals, execution, guards and the canonical state hash.

Most tests use the four-step scenario of ``helpers.tiny_scenario``:
S1 = 2, S2 = 3; step 1: S3 = S1 + S2 = 5; step 2: S4 = S3 * S2 = 15;
step 3: S5 = S4 - S2 = 12; step 4: S6 = S4 / S3 = 3.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from helpers import RIGHT, tiny_scenario
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from agentproc.errors import ConfigError
from agentproc.procedures import Cell, generate_procedure
from agentproc.workflow import Scenario, Toolkit, build_workflow, scenario_of

TINY = tiny_scenario()


def toolkit(guard: str = "observe", scenario: Scenario = TINY) -> Toolkit:
    return Toolkit(build_workflow(scenario), guard)  # type: ignore[arg-type]


def assert_nothing_executed(tk: Toolkit, before_hash: str) -> None:
    rec = tk.calls[-1]
    assert rec.value is None and rec.answer is None
    assert tk.values == {} and tk.runs == {} and tk.answers == []
    assert rec.state_hash == tk.state_hash == before_hash


# --- refusals ----------------------------------------------------------------------------


def test_unknown_tool_is_refused_naming_it_and_executes_nothing():
    tk = toolkit()
    before = tk.state_hash
    rec = tk.call("calculator", {"S1": 2, "S2": 3})
    assert rec.refused == "unknown_tool"
    assert rec.result.startswith("Error:") and "'calculator'" in rec.result
    assert rec.step is None and not rec.finish
    assert_nothing_executed(tk, before)
    assert tk.calls == [rec]


def test_step_past_the_last_one_is_an_unknown_tool():
    assert toolkit().call("step_5", {"S6": 3}).refused == "unknown_tool"


INVALID: list[tuple[str, Any, str]] = [
    # (case, arguments, what the message says)
    ("not JSON", '{"S1": 2, "S2":', "not valid JSON"),
    ("a JSON array", "[2, 3]", "must be a JSON object"),
    ("a JSON number", "5", "must be a JSON object"),
    ("missing argument", {"S1": 2}, "'S2' is a required property"),
    ("extra argument", {"S1": 2, "S2": 3, "S9": 1}, "'S9' was unexpected"),
    ("string for a number", {"S1": "2", "S2": 3}, "'2' is not of type 'number'"),
    ("boolean for a number", {"S1": True, "S2": 3}, "True is not of type 'number'"),
    ("null for a number", {"S1": None, "S2": 3}, "None is not of type 'number'"),
    ("NaN in JSON text", '{"S1": NaN, "S2": 3}', "NaN is not a JSON number"),
    ("Infinity in JSON text", '{"S1": 2, "S2": -Infinity}', "-Infinity is not a JSON number"),
    ("NaN in a dict", {"S1": math.nan, "S2": 3}, "S1 is not a finite number"),
    ("Infinity in a dict", {"S1": 2, "S2": math.inf}, "S2 is not a finite number"),
]


@pytest.mark.parametrize(
    ("arguments", "says"), [c[1:] for c in INVALID], ids=[c[0] for c in INVALID]
)
def test_invalid_arguments_are_refused_with_a_readable_message_and_execute_nothing(arguments, says):
    tk = toolkit()
    before = tk.state_hash
    rec = tk.call("step_1", arguments)
    assert rec.refused == "invalid_arguments"
    assert rec.result.startswith("Error: invalid arguments for step_1: ")
    assert says in rec.result
    assert rec.result.endswith("Nothing was executed.")
    assert rec.args is None and rec.step == 1
    assert_nothing_executed(tk, before)


def test_invalid_answer_is_refused_and_records_no_answer():
    tk = toolkit()
    rec = tk.call("submit_answer", {"answer": "3"})
    assert rec.refused == "invalid_arguments" and rec.finish
    assert "'3' is not of type 'number'" in rec.result
    assert tk.answers == []


def test_integer_mode_refuses_a_fractional_argument():
    scenario = scenario_of(generate_procedure(Cell(steps=3, lookback=2, mode="integer"), 0, 0))
    args = {name: value + 0.5 for name, value in scenario.steps[0].expected_call.arguments.items()}
    rec = toolkit(scenario=scenario).call("step_1", args)
    assert rec.refused == "invalid_arguments" and "is not of type 'integer'" in rec.result


def test_integer_beyond_float_range_is_handled_as_data_not_raised():
    rec = toolkit().call("step_1", '{"S1": 1' + "0" * 400 + ', "S2": 3}')
    assert rec.refused is not None and rec.result.startswith("Error:")


def test_division_by_zero_supplied_by_the_agent_is_refused():
    tk = toolkit()
    for k in (1, 2):
        tk.call(f"step_{k}", RIGHT[k])
    before = (dict(tk.values), tk.state_hash)
    rec = tk.call("step_4", {"S4": 15, "S3": 0})
    assert rec.refused == "division_by_zero"
    assert rec.result.startswith("Error:") and "divides by zero" in rec.result
    assert rec.value is None and 4 not in tk.runs
    assert (tk.values, tk.state_hash) == before


# --- execution ---------------------------------------------------------------------------


def test_correct_call_returns_the_value_and_records_it_in_units():
    tk = toolkit()
    rec = tk.call("step_1", {"S1": 2, "S2": 3})
    assert rec.refused is None and rec.result == "S3 = 5.000"
    assert rec.value == 5000 and tk.values == {3: 5000} and tk.runs == {1: 1}
    assert rec.args == {"S1": 2, "S2": 3}


def test_arguments_given_as_json_text_are_kept_verbatim():
    rec = toolkit().call("step_1", '{"S1": 2.0, "S2": 3}')
    assert rec.arguments == '{"S1": 2.0, "S2": 3}' and rec.value == 5000


def test_wrong_arguments_execute_with_the_values_supplied():
    rec = toolkit().call("step_1", {"S1": 2.25, "S2": 3})
    assert rec.refused is None and rec.result == "S3 = 5.250" and rec.value == 5250


def test_repeated_step_executes_again_and_says_it_was_already_executed():
    tk = toolkit()
    tk.call("step_1", {"S1": 4, "S2": 3})
    rec = tk.call("step_1", {"S1": 2, "S2": 3})
    assert rec.refused is None and rec.value == 5000
    assert rec.result.startswith("S3 = 5.000")
    assert "already been executed" in rec.result and "S3 was 7.000" in rec.result
    assert tk.runs == {1: 2} and tk.values == {3: 5000}


def test_accepted_answer_is_recorded():
    tk = toolkit()
    rec = tk.call("submit_answer", {"answer": 3})
    assert rec.refused is None and rec.finish and rec.answer == 3
    assert tk.answers == [3] and rec.result.startswith("Answer recorded")


# --- guards ------------------------------------------------------------------------------


@pytest.mark.parametrize(("guard", "refused"), [("enforce", "dependency"), ("observe", None)])
def test_step_whose_dependency_has_not_run_is_refused_only_in_enforce_mode(guard, refused):
    tk = toolkit(guard)
    rec = tk.call("step_2", {"S3": 5, "S2": 3})  # reads S3, which step 1 defines
    assert rec.refused == refused
    if refused:
        assert rec.result.startswith("Error:") and "step 1" in rec.result
        assert tk.values == {} and tk.runs == {}
    else:
        assert tk.values == {4: 15000}


@pytest.mark.parametrize(("guard", "refused"), [("enforce", "premature"), ("observe", None)])
def test_answer_before_the_last_step_is_refused_only_in_enforce_mode(guard, refused):
    tk = toolkit(guard)
    for k in (1, 2, 3):
        tk.call(f"step_{k}", RIGHT[k])
    rec = tk.call("submit_answer", {"answer": 3})
    assert rec.refused == refused
    assert tk.answers == ([] if refused else [3])


def test_enforce_mode_accepts_the_faithful_trace():
    tk = toolkit("enforce")
    recs = [tk.call(f"step_{k}", RIGHT[k]) for k in (1, 2, 3, 4)]
    recs.append(tk.call("submit_answer", {"answer": 3}))
    assert [r.refused for r in recs] == [None] * 5


def test_unknown_guard_mode_raises_config_error_listing_the_valid_ones():
    with pytest.raises(
        ConfigError,
        match=r"unknown guard mode 'strict' \(expected one of: observe, enforce, feedback\)",
    ):
        toolkit("strict")


# --- state hash --------------------------------------------------------------------------


def hash_after(calls: list[tuple[str, Any]]) -> str:
    tk = toolkit()
    for name, args in calls:
        tk.call(name, args)
    return tk.state_hash


def test_state_hash_is_the_same_for_histories_that_reach_the_same_state():
    direct = [("step_1", RIGHT[1]), ("step_3", RIGHT[3])]
    detour = [
        ("step_3", RIGHT[3]),
        ("step_1", {"S1": 4, "S2": 3}),  # wrong, then corrected
        ("calculator", {}),  # refused: changes nothing
        ("step_2", '{"S3": '),  # refused: changes nothing
        ("step_1", RIGHT[1]),
    ]
    assert hash_after(direct) == hash_after(detour)


def test_state_hash_differs_between_different_states():
    hashes = {
        hash_after([]),
        hash_after([("step_1", RIGHT[1])]),
        hash_after([("step_1", {"S1": 4, "S2": 3})]),
        hash_after([("step_1", RIGHT[1]), ("submit_answer", {"answer": 3})]),
        hash_after([("step_1", RIGHT[1]), ("submit_answer", {"answer": 4})]),
    }
    assert len(hashes) == 5


def test_state_hash_is_recorded_on_every_call():
    tk = toolkit()
    recs = [tk.call("step_1", RIGHT[1]), tk.call("nope", {}), tk.call("step_2", RIGHT[2])]
    assert recs[0].state_hash == recs[1].state_hash != recs[2].state_hash == tk.state_hash
    assert all(len(r.state_hash) == 16 for r in recs)


# --- the fast argument check agrees with the schema -----------------------------------------


SCHEMA_SCENARIOS = {
    "decimal": TINY,
    "integer": scenario_of(generate_procedure(Cell(steps=4, lookback=1, mode="integer"), 0, 0)),
}
"""The integer one has one-variable windows, so its step tools take one argument."""

json_values = st.one_of(
    st.integers(-(10**15), 10**15),
    st.floats(allow_nan=False, allow_infinity=False),
    st.integers(-(10**6), 10**6).map(float),  # integral floats
    st.booleans(),
    st.text(max_size=3),
    st.none(),
    st.lists(st.integers(-5, 5), max_size=2),
)


@st.composite
def tool_calls(draw: st.DrawFn) -> tuple[Scenario, dict[str, Any], str, dict[str, Any]]:
    scenario = SCHEMA_SCENARIOS[draw(st.sampled_from(sorted(SCHEMA_SCENARIOS)))]
    tool = draw(st.sampled_from(scenario.tools))["function"]
    params = list(tool["parameters"]["properties"])
    names = [*params, "S9", "answer", "x"]
    # Right names with numbers, the same with one change, or anything: so that valid,
    # nearly valid and wild arguments are all common.
    numbers = st.one_of(
        st.integers(-(10**15), 10**15), st.floats(allow_nan=False, allow_infinity=False)
    )
    args = draw(st.fixed_dictionaries({p: numbers for p in params}))
    kind = draw(st.sampled_from(["right", "changed", "anything"]))
    if kind == "changed":
        key = draw(st.sampled_from(names))
        if key in args and draw(st.booleans()):
            del args[key]
        else:
            args[key] = draw(json_values)
    elif kind == "anything":
        args = draw(st.dictionaries(st.sampled_from(names), json_values, max_size=4))
    return scenario, tool["parameters"], tool["name"], args


@settings(max_examples=200, deadline=None)
@given(tool_calls())
def test_fast_argument_check_agrees_with_jsonschema_validation(case):
    scenario, parameters, name, args = case
    valid = Draft202012Validator(parameters).is_valid(args)
    rec = toolkit(scenario=scenario).call(name, args)
    assert valid == (rec.refused != "invalid_arguments"), (args, rec.result)
