"""The labelling core driven directly: the confusion search, dropped entries, the answer
rules and the order of the labels.

The tiny procedure: S1 = 2, S2 = 3; step 1: S3 = 5; step 2: S4 = 15; step 3: S5 = 12 (dead);
step 4: S6 = 3 (the answer). In units (thousandths): 2000, 3000, 5000, 15000, 12000, 3000.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from helpers import tiny_scenario
from hypothesis import given, settings
from hypothesis import strategies as st

from agentproc.labelling import Label, LabelCore, LabelKind
from agentproc.labelling.core import LOOKBACK, STALE, confusion_cause
from agentproc.labelling.tools import _shortener
from agentproc.procedures import Cell, generate_procedure
from agentproc.workflow import Workflow, build_workflow, scenario_of

K = LabelKind
RIGHT = {1: 5000, 2: 15000, 3: 12000, 4: 3000}
"""The correct value of each step, in units."""


def core() -> LabelCore:
    return LabelCore(build_workflow(tiny_scenario()))


def run_steps(c: LabelCore, steps: list[int], start: int = 0, **wrong: int) -> int:
    """Record each step (its right value unless ``wrong`` gives ``s<k>=units``) as the
    entries ``start, start+1, ...``; returns the next index."""
    for i, k in enumerate(steps, start):
        entry = c.begin(i, step=k)
        c.record_step(entry, k, wrong.get(f"s{k}", RIGHT[k]))
    return start + len(steps)


def answer(c: LabelCore, index: int, value: float | int | None, refused: bool = False):
    entry = c.begin(index, finish=True)
    c.record_answer(entry, value, refused=refused)
    return entry


def one_of(*values: int) -> Callable[[int], bool]:
    return lambda u: u in values


def kinds(labels: list[Label]) -> list[tuple[str, int | None, int | None]]:
    return [(lab.kind.value, lab.call_index, lab.step) for lab in labels]


# -- confusion -----------------------------------------------------------------


def test_confusion_searches_nearest_first_earlier_on_ties_up_to_the_answer():
    seen: list[int] = []
    assert core().confusion([(3, lambda u: seen.append(u) or False)]) is None
    # S2, S4 (distance 1), S1, S5 (distance 2), S6 (distance 3); never S3 itself.
    assert seen == [3000, 15000, 2000, 12000, 3000]


def test_confusion_nearest_variable_wins():
    assert core().confusion([(4, one_of(2000, 5000))]) == 3  # S3 (distance 1) over S1 (3)


def test_confusion_at_equal_distance_the_earlier_variable_wins():
    assert core().confusion([(4, one_of(5000, 12000))]) == 3  # S3 and S5 are both 1 away
    assert core().confusion([(3, one_of(3000, 15000))]) == 2  # S2 and S4 are both 1 away


def test_confusion_candidates_include_the_agents_own_produced_values():
    c = core()
    assert c.confusion([(3, one_of(7000))]) is None
    c.produced[5] = 7000
    assert c.confusion([(3, one_of(7000))]) == 5


def test_confusion_tries_a_variables_own_value_right_after_its_correct_one():
    c = core()
    c.produced[4] = 16000
    seen: list[int] = []
    c.confusion([(3, lambda u: seen.append(u) or False)])
    assert seen[:3] == [3000, 15000, 16000]


def test_confusion_never_explains_a_value_by_the_expected_variable_itself():
    c = core()
    c.produced[3] = 9000
    assert c.confusion([(3, one_of(5000, 9000))]) is None


def test_confusion_candidates_include_variables_after_the_expected_one():
    assert core().confusion([(2, one_of(12000))]) == 5


def test_confusion_over_several_tests_takes_the_nearest_overall():
    tests = [(3, one_of(2000)), (4, one_of(12000))]  # S1 is 2 from S3; S5 is 1 from S4
    assert core().confusion(tests) == 5


def test_confusion_over_several_tests_at_equal_distance_takes_the_earlier_variable():
    tests = [(4, one_of(12000)), (3, one_of(3000))]  # S5 is 1 from S4; S2 is 1 from S3
    assert core().confusion(tests) == 2


def test_confusion_without_a_match_is_none():
    assert core().confusion([(3, one_of(123))]) is None


@pytest.mark.parametrize(("u", "target", "cause"), [(1, 5, LOOKBACK), (4, 5, LOOKBACK)])
def test_a_variable_defined_before_the_step_is_a_lookback_confusion(u: int, target: int, cause):
    assert confusion_cause(u, target) == cause


@pytest.mark.parametrize(("u", "target"), [(5, 5), (6, 5)])
def test_the_steps_own_output_or_a_later_one_is_a_stale_output(u: int, target: int):
    assert confusion_cause(u, target) == STALE


# -- begin and drop ------------------------------------------------------------


def test_begin_counts_an_entry_and_tracks_it():
    c = core()
    entry = c.begin(0, step=1)
    assert c.calls == 1 and c.trace == [entry]


def test_a_dropped_entry_leaves_the_divergence_trace():
    c = core()
    c.drop(c.begin(0))
    n = run_steps(c, [1, 2, 3, 4], start=1)
    answer(c, n, 3)
    labels, metrics = c.finish()
    assert labels == []
    assert metrics["first_divergence"] is None and metrics["longest_correct_prefix"] == 4


def test_a_dropped_entry_still_counts_in_calls():
    c = core()
    c.drop(c.begin(0))
    n = run_steps(c, [1, 2, 3, 4], start=1)
    answer(c, n, 3)
    assert c.finish()[1]["calls"] == 6


def test_an_entry_left_in_the_trace_is_the_divergence():
    c = core()
    c.begin(0)  # the same stray entry, not dropped
    n = run_steps(c, [1, 2, 3, 4], start=1)
    answer(c, n, 3)
    _, metrics = c.finish()
    assert metrics["first_divergence"] == {"call_index": 0, "step": 1, "label": "reordered"}
    assert metrics["longest_correct_prefix"] == 0


def test_drop_removes_an_entry_that_is_not_the_last():
    c = core()
    first, second = c.begin(0), c.begin(1, step=1)
    c.drop(first)
    assert c.trace == [second] and c.calls == 2


# -- record_answer -------------------------------------------------------------


def test_a_right_answer_after_every_step_has_no_label():
    c = core()
    entry = answer(c, run_steps(c, [1, 2, 3, 4]), 3)
    assert c.labels == [] and entry.answered and c.answers == [(4, 3)]


def test_an_answer_before_the_last_step_is_premature_with_the_missing_steps():
    c = core()
    answer(c, run_steps(c, [1, 2]), 3)
    assert c.labels == [Label(K.PREMATURE_FINISH, 2, missing_steps=2)]


def test_an_answer_after_the_last_step_is_not_premature_even_with_a_gap():
    c = core()
    answer(c, run_steps(c, [1, 2, 4]), 3)
    assert c.labels == []


def test_a_refused_premature_answer_is_marked_refused_and_not_recorded():
    c = core()
    entry = answer(c, run_steps(c, [1]), 3, refused=True)
    assert c.labels == [Label(K.PREMATURE_FINISH, 1, missing_steps=3, refused=True)]
    assert c.answers == [] and not entry.answered


def test_a_missing_answer_value_records_nothing_but_the_premature_finish():
    c = core()
    entry = answer(c, 0, None)
    assert kinds(c.labels) == [("premature_finish", 0, None)]
    assert c.answers == [] and not entry.answered


def test_a_wrong_first_answer_equal_to_the_agents_answer_variable_is_propagated():
    c = core()
    answer(c, run_steps(c, [1, 2, 3, 4], s4=4000), 4)
    assert c.labels == [Label(K.WRONG_ANSWER, 4, cause="propagated", expected=3.0, got=4)]


def test_a_wrong_first_answer_equal_to_the_last_executed_value_is_propagated():
    c = core()
    answer(c, run_steps(c, [1, 2, 3]), 12)  # S6 never produced; step 3 gave 12
    assert kinds(c.labels) == [("premature_finish", 3, None), ("wrong_answer", 3, None)]
    assert c.labels[1].cause == "propagated"


def test_the_answer_variable_value_takes_precedence_over_the_last_executed_one():
    c = core()
    answer(c, run_steps(c, [1, 2, 4, 3], s4=4000), 12)  # last executed S5 = 12, but S6 = 4
    assert c.labels[-1].kind is K.WRONG_ANSWER and c.labels[-1].cause == "unsupported"


def test_a_wrong_first_answer_nothing_explains_is_unsupported():
    c = core()
    answer(c, run_steps(c, [1, 2, 3, 4]), 7)
    assert c.labels == [Label(K.WRONG_ANSWER, 4, cause="unsupported", expected=3.0, got=7)]


def test_an_answer_within_half_a_unit_is_right():
    c = core()
    answer(c, run_steps(c, [1, 2, 3, 4]), 3.0004)
    assert c.labels == []


def test_a_revision_fixing_a_wrong_answer_is_a_self_correction():
    c = core()
    n = run_steps(c, [1, 2, 3, 4])
    answer(c, n, 7)
    answer(c, n + 1, 3)
    assert kinds(c.labels) == [("wrong_answer", 4, None), ("answer_revised", 5, None)]
    assert c.labels[1].self_correction is True and c.labels[1].got == 3


def test_a_revision_away_from_a_right_answer_is_no_self_correction_nor_wrong_answer():
    c = core()
    n = run_steps(c, [1, 2, 3, 4])
    answer(c, n, 3)
    answer(c, n + 1, 7)
    assert c.labels == [Label(K.ANSWER_REVISED, 5, self_correction=False, got=7)]


def test_a_revision_between_two_wrong_answers_is_no_self_correction():
    c = core()
    n = run_steps(c, [1, 2, 3, 4])
    answer(c, n, 7)
    answer(c, n + 1, 8)
    assert kinds(c.labels) == [("wrong_answer", 4, None), ("answer_revised", 5, None)]
    assert c.labels[1].self_correction is False


def test_every_answer_after_the_first_is_a_revision():
    c = core()
    n = run_steps(c, [1, 2, 3, 4])
    for i in range(3):
        answer(c, n + i, 3)
    assert kinds(c.labels) == [("answer_revised", 5, None), ("answer_revised", 6, None)]


# -- record_step ---------------------------------------------------------------


def test_a_repeated_step_fixing_its_value_is_a_self_correction():
    c = core()
    run_steps(c, [1, 1], s1=6000)
    run_steps(c, [1], start=2)
    assert [(lab.kind, lab.self_correction) for lab in c.labels] == [
        (K.REPEATED_STEP, False),
        (K.REPEATED_STEP, True),
    ]
    assert c.produced[3] == 5000


# -- finish --------------------------------------------------------------------


def test_finish_sorts_labels_by_call_then_kind_with_episode_labels_last():
    c = core()
    for label in (
        Label(K.ANSWER_REVISED, 7),
        Label(K.WRONG_ANSWER, 5),
        Label(K.WRONG_ARGUMENT, 2, 1),
        Label(K.HALLUCINATED_CALL, 5),
        Label(K.INVALID_ARGUMENTS, 2, 1),
    ):
        c.add(label)
    labels, _ = c.finish()
    assert kinds(labels) == [
        ("invalid_arguments", 2, 1),
        ("wrong_argument", 2, 1),
        ("hallucinated_call", 5, None),
        ("wrong_answer", 5, None),
        ("answer_revised", 7, None),
        ("skipped_step", None, 1),
        ("skipped_step", None, 2),
        ("skipped_step", None, 3),
        ("skipped_step", None, 4),
        ("missing_answer", None, None),
    ]


def test_finish_merges_reordered_labels_in_call_order():
    c = core()
    c.add(Label(K.WRONG_ARGUMENT, 3, 4))
    n = run_steps(c, [2, 1, 3, 4])
    answer(c, n, 3)
    labels, _ = c.finish()
    assert kinds(labels) == [("reordered", 0, 2), ("wrong_argument", 3, 4)]
    assert labels[0].breaks_dependency is True


def test_finish_labels_never_executed_steps_as_skipped_with_liveness():
    c = core()
    answer(c, run_steps(c, [1, 2, 4]), 3)
    labels, metrics = c.finish()
    assert labels == [Label(K.SKIPPED_STEP, None, 3, live=False)]
    assert metrics["executed_steps"] == 3 and metrics["verdict"] == "unfaithful_correct"


def test_finish_metrics_of_a_faithful_run():
    c = core()
    answer(c, run_steps(c, [1, 2, 3, 4]), 3)
    labels, m = c.finish()
    assert labels == []
    assert m["verdict"] == "faithful" and m["faithful"] is True
    assert (m["first_answer"], m["final_answer"], m["answers"], m["calls"]) == (3, 3, 1, 5)
    assert m["progress_rate"] == 1.0 and m["total_steps"] == 4


def test_label_to_json_writes_every_set_attribute_in_taxonomy_order():
    from agentproc.labelling.labels import _ATTRS

    names = list(Label._fields)
    assert names == ["kind", "call_index", "step", *_ATTRS]
    values = {n: (True if n in ("self_correction", "breaks_dependency", "live", "refused",
                                "truncated") else 1) for n in _ATTRS}  # fmt: skip
    label = Label(LabelKind.WRONG_ARGUMENT, 3, 2, **values)  # type: ignore[arg-type]
    assert list(label.to_json()) == ["kind", "call_index", "step", *_ATTRS]
    assert Label.from_json(label.to_json()) == label
    assert Label(LabelKind.MISSING_ANSWER).to_json() == {
        "kind": "missing_answer",
        "call_index": None,
        "step": None,
    }


def test_a_label_is_an_immutable_value():
    label = Label(LabelKind.WRONG_ARGUMENT, 3, 2, cause="propagated", argument="S4")
    with pytest.raises(AttributeError):
        label.cause = "other"  # type: ignore[misc]
    same = Label(LabelKind.WRONG_ARGUMENT, 3, 2, cause="propagated", argument="S4")
    assert label == same and hash(label) == hash(same)
    assert label != label._replace(cause="other")


# -- the exact cause search is a look-up with the search's answer ---------------------


def _core_with_own_values(
    wf: Workflow, data: st.DataObject, values: st.SearchStrategy[int]
) -> tuple[LabelCore, int]:
    """A core whose agent produced a few of the variables from ``values``; the count of
    variables."""
    core = LabelCore(wf)
    n_vars = len(wf.correct) - 1
    for target in data.draw(st.lists(st.integers(3, n_vars), max_size=8)):
        core.produced[target] = data.draw(values)
    return core, n_vars


@settings(max_examples=300, deadline=None)
@given(
    steps=st.integers(3, 30),
    lookback=st.integers(1, 7),
    index=st.integers(0, 50),
    data=st.data(),
)
def test_confusion_of_a_reading_answers_as_the_search_does(
    steps: int, lookback: int, index: int, data: st.DataObject
) -> None:
    wf = build_workflow(
        scenario_of(generate_procedure(Cell(steps=steps, lookback=lookback), 7, index))
    )
    values = st.sampled_from(wf.correct[1:]) | st.integers(-5, 5)  # collisions are the point
    core, n_vars = _core_with_own_values(wf, data, values)
    var = data.draw(st.integers(1, n_vars))
    read = data.draw(values | st.sampled_from(list(core.produced.values()) or [0]))
    assert core.confusion_of(var, read) == core.confusion([(var, read.__eq__)])


@settings(max_examples=300, deadline=None)
@given(
    steps=st.integers(3, 30),
    index=st.integers(0, 50),
    decimals=st.integers(0, 2),
    data=st.data(),
)
def test_the_search_for_a_cut_value_is_a_window_with_the_searchs_answer(
    steps: int, index: int, decimals: int, data: st.DataObject
) -> None:
    wf = build_workflow(scenario_of(generate_procedure(Cell(steps=steps, lookback=7), 3, index)))
    near = st.sampled_from(wf.correct[1:]).flatmap(lambda v: st.integers(v - 150, v + 150))
    core, n_vars = _core_with_own_values(wf, data, near)
    # got: a value near some variable's, written with fewer decimals than the mode's
    got = round(data.draw(near) / wf.scale, decimals)
    cuts = _shortener(got, wf.scale)
    assert cuts is not None
    matches, lo, hi = cuts
    var = data.draw(st.integers(1, n_vars))
    assert core.confusion_in(var, lo, hi, matches) == core.confusion([(var, matches)])
    # and nothing outside the window passes
    for value in data.draw(st.lists(st.integers(-(10**6), 10**6), max_size=20)):
        assert not matches(value) or lo <= value <= hi


def test_skipped_steps_say_their_own_scenarios_liveness_across_scenarios():
    # The same step number is live in one procedure and dead in another: each episode's
    # skipped labels follow its own scenario, however many were labelled before it.
    seen: dict[int, set[bool]] = {}
    for i in range(40):
        wf = build_workflow(scenario_of(generate_procedure(Cell(steps=12, lookback=4), 0, i)))
        labels, _ = LabelCore(wf).finish()
        skipped = [lab for lab in labels if lab.kind is K.SKIPPED_STEP]
        assert [(lab.step, lab.live) for lab in skipped] == [(s.step, s.live) for s in wf.steps]
        for s in wf.steps:
            seen.setdefault(s.step, set()).add(s.live)
    assert any(len(both) == 2 for both in seen.values())  # the case above did arise
