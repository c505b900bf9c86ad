"""Hand-written traces of the shipped payroll run, labelled by the one monitor as the
taxonomy says: its independent branches batched, its report figures (dead steps) left
out, net pay given as the answer, and a variable read for another one."""

from __future__ import annotations

from agentproc.arith import to_number
from agentproc.runs.session import EpisodeSession
from tests.workflow.hand_traces import Instance, kinds

HAND = Instance("payroll")
WF, SCENARIO, STEP, VALUE = HAND.workflow, HAND.scenario, HAND.step, HAND.value
args, play = HAND.args, HAND.play
LISTED = [s.name for s in SCENARIO.steps]
FINISH = SCENARIO.finish.tool


def test_the_instance_reads_every_value_one_way():
    assert len(set(VALUE.values())) == len(VALUE)
    assert [s.name for s in SCENARIO.steps if not s.live] == list(DEAD)


DEAD = ("employer_ni", "year_to_date_gross", "tax_remittance", "employer_cost")
"""The figures for reports that today's payment file does not use."""

BATCHES = [
    ["overtime_hours", "overtime_rate", "contract_pay"],
    ["overtime_pay"],
    ["gross_pay"],
    ["employee_pension", "employer_pension", "employee_ni", "employer_ni", "year_to_date_gross"],
    ["taxable_pay", "employer_cost", "pension_remittance"],
    ["basic_rate_tax", "higher_rate_tax"],
    ["income_tax"],
    ["net_pay", "tax_remittance"],
    ["payment_file_total"],
]


def test_the_independent_branches_batched_take_the_fewest_messages_and_no_label():
    trace = [[(t, args(t)) for t in batch] for batch in BATCHES]
    ep = play([*trace, [(FINISH, {"answer": SCENARIO.answer})]], order="dependency")
    assert ep.labels == []
    assert ep.metrics["messages"] == ep.metrics["fewest_messages"] == len(BATCHES) + 1
    assert ep.metrics["batching_maximal"] is True


def test_the_report_figures_left_out_are_dead_skips_and_the_answer_is_right():
    trace = [[(t, args(t))] for t in LISTED if t not in DEAD]
    ep = play([*trace, [(FINISH, {"answer": SCENARIO.answer})]])
    assert kinds(ep) == [("skipped_step", None, STEP[t].step) for t in DEAD]
    assert [lab.live for lab in ep.labels] == [False] * 4
    assert ep.metrics["verdict"] == "unfaithful_correct"


def test_net_pay_given_as_the_answer_is_premature_and_a_propagated_wrong_answer():
    upto = LISTED.index("net_pay") + 1
    trace = [[(t, args(t))] for t in LISTED[:upto]]
    ep = play([*trace, [(FINISH, {"answer": VALUE["net_pay"]})]])
    skipped = [lab for lab in ep.labels if lab.kind.value == "skipped_step"]
    assert [lab.step for lab in skipped] == [16, 17, 18, 19]
    assert [lab.live for lab in skipped] == [False, False, True, True]
    premature = next(lab for lab in ep.labels if lab.kind.value == "premature_finish")
    assert (premature.call_index, premature.missing_steps) == (upto, 4)
    wrong = next(lab for lab in ep.labels if lab.kind.value == "wrong_answer")
    assert wrong.cause == "propagated"
    assert ep.metrics["verdict"] == "wrong"


def test_contracted_pay_read_as_gross_pay_is_a_lookback_confusion_then_carried_forward():
    session = EpisodeSession(SCENARIO, "hand")
    known = dict(SCENARIO.inputs)
    for tool in LISTED:  # an agent that passes on what the tools return
        given = {v: known[v] for v in STEP[tool].operands}
        if tool == "taxable_pay":
            given["gross_pay"] = known["contract_pay"]
        session.message()
        units = session.call(tool, given).value
        assert units is not None
        known[STEP[tool].output] = to_number(units, 1000)  # the value in thousandths
    session.message()
    session.call(FINISH, {"answer": known["payment_file_total"]})
    ep = session.finish("answer")
    first = ep.labels[0]
    assert (first.kind.value, first.step, first.argument) == ("wrong_argument", 10, "gross_pay")
    assert (first.cause, first.confused_with) == ("lookback_confusion", "contract_pay")
    later = [lab for lab in ep.labels[1:] if lab.kind.value == "wrong_argument"]
    assert later and {lab.cause for lab in later} == {"propagated"}
    assert {lab.step for lab in later} >= {11, 12}  # both tax bands read the wrong taxable pay
    wrong = next(lab for lab in ep.labels if lab.kind.value == "wrong_answer")
    assert wrong.cause == "propagated"
    assert ep.metrics["first_divergence"]["label"] == "wrong_argument"
