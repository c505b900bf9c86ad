"""Under the ``dependency`` order policy a value no tool had returned yet is labelled.

The worked examples of docs/taxonomy.md, on :func:`helpers.tiny_scenario` (steps 1-4;
step 2 reads step 1, step 3 reads step 2, step 4 reads steps 1 and 2).
"""

from __future__ import annotations

import pytest
from helpers import ORACLE, step, submit, tiny_scenario

from agentproc.labelling import label_calls
from agentproc.workflow import Toolkit, build_workflow


def labelled(calls, batches, order="dependency"):
    wf = build_workflow(tiny_scenario())
    tk = Toolkit(wf, "observe")
    records = [tk.call(name, args) for name, args in calls]
    labels, metrics = label_calls(wf, records, order, batches)
    found = [(lab.kind.value, lab.call_index, lab.step, lab.argument) for lab in labels]
    return found, metrics


def test_a_step_reading_a_value_of_its_own_message_is_unreturned_value():
    found, metrics = labelled(ORACLE, [1, 2, 1, 1])
    assert found == [("unreturned_value", 2, 3, "S4")]
    assert metrics["verdict"] == "unfaithful_correct" and not metrics["faithful"]
    assert metrics["first_divergence"] == {"call_index": 2, "step": 3, "label": "unreturned_value"}


def test_the_label_carries_the_value_passed():
    wf = build_workflow(tiny_scenario())
    tk = Toolkit(wf, "observe")
    records = [tk.call(name, args) for name, args in ORACLE]
    labels, _ = label_calls(wf, records, "dependency", [2, 2, 1])
    assert [(lab.argument, lab.got) for lab in labels] == [("S3", 5)]


def test_steps_that_read_only_returned_values_batch_faithfully_in_the_fewest_messages():
    found, metrics = labelled(ORACLE, [1, 1, 2, 1])
    assert found == [] and metrics["faithful"]
    assert metrics["messages"] == metrics["fewest_messages"] == 4


def compositions(n: int) -> list[list[int]]:
    """Every way to cut ``n`` calls into messages, in order."""
    if n == 0:
        return [[]]
    return [[k, *rest] for k in range(1, n + 1) for rest in compositions(n - k)]


def test_no_faithful_episode_sends_fewer_messages_than_the_fewest():
    faithful = []
    for batches in compositions(len(ORACLE)):
        _, metrics = labelled(ORACLE, batches)
        if metrics["faithful"]:
            faithful.append(batches)
            assert metrics["messages"] >= metrics["fewest_messages"] == 4, batches
    assert [1, 1, 2, 1] in faithful and [1, 1, 1, 1, 1] in faithful


def test_an_answer_sent_with_the_last_step_is_premature():
    wf = build_workflow(tiny_scenario())
    tk = Toolkit(wf, "observe")
    records = [tk.call(name, args) for name, args in ORACLE]
    labels, metrics = label_calls(wf, records, "dependency", [1, 1, 1, 2])
    assert [(lab.kind.value, lab.call_index, lab.missing_steps) for lab in labels] == [
        ("premature_finish", 4, 1)
    ]
    assert metrics["first_answer"] == 3 and not metrics["faithful"]


def test_a_step_sent_before_the_one_it_reads_is_reordered_not_unreturned():
    calls = [step(2), step(1), step(3), step(4), submit()]
    found, _ = labelled(calls, [2, 2, 1])
    assert found == [("reordered", 0, 2, None)]


def test_an_input_is_no_unreturned_value():
    """Step 2 reads S2 (an input) beside S3: only S3 came from the same message."""
    found, _ = labelled(ORACLE, [2, 1, 1, 1])
    assert found == [("unreturned_value", 1, 2, "S3")]


def test_a_wrong_value_worked_out_within_the_message_is_both_wrong_and_unreturned():
    calls = [step(1, S1=3), step(2, S3=6), step(3), step(4), submit()]
    found, _ = labelled(calls, [2, 1, 1, 1])
    assert ("unreturned_value", 1, 2, "S3") in found
    assert ("wrong_argument", 1, 2, "S3") in found


@pytest.mark.parametrize("batches", [[1, 2, 1, 1], [1, 1, 1, 2], [5]])
def test_under_the_listed_policy_messages_are_not_judged(batches):
    found, metrics = labelled(ORACLE, batches, order="listed")
    assert found == [] and metrics["faithful"]
