"""Hand-written traces of ``return_window`` (ids and dates, records drawn per instance),
labelled as docs/taxonomy.md says: another record's id, a key that is no record (the tool
refuses it), an id carried from another step (a confusion, as for numbers), a date off by
one, a date not written as ISO text; and a wrong boolean, which is never a confusion."""

from __future__ import annotations

import json
from typing import Any

from agentproc.analysis import label_record, replay_calls
from agentproc.declared.dates import shift
from agentproc.runs import episode_record
from tests.workflow.hand_traces import Instance
from tests.workflow.test_branched_traces import Call, faithful, labels, play
from tests.workflow.test_lookup_traces import kinds, shipped, with_call


def fee_path() -> Instance:
    """The first instance on the restocking fee's path (no exit, no early credit)."""
    return Instance(
        "return_window", lambda s: s.path is not None and s.path.name == "restocking_fee"
    )


def other_order(inst: Instance) -> dict[str, Any]:
    """A record of another order of the instance whose id no variable holds."""
    rows = inst.scenario.tables["orders"].rows  # type: ignore[index]
    return next(r for r in rows if r["order_id"] != inst.value["order_id"])


def test_an_order_settled_by_its_id_is_faithful_and_no_record_is_shown():
    inst = fee_path()
    ep = play(inst, faithful(inst))
    assert ep.labels == [] and ep.metrics["verdict"] == "faithful"
    other = other_order(inst)
    assert other["order_id"] not in inst.scenario.prompt
    assert set(inst.scenario.inputs) == {"order_id", "request_date"}


def test_another_orders_id_is_a_wrong_argument_and_its_record_is_returned():
    inst = fee_path()
    other = other_order(inst)
    ep = play(inst, with_call(faithful(inst), "get_order_amount", order_id=other["order_id"]))
    assert labels(ep)[0] == {
        "kind": "wrong_argument",
        "call_index": 2,
        "step": 3,
        "cause": "other",
        "argument": "order_id",
        "expected": inst.value["order_id"],
        "got": other["order_id"],
    }
    assert ep.calls[2].result == f"amount = {other['amount']:.3f}"


def test_an_id_that_is_no_record_gets_an_error_result_and_a_wrong_argument_on_the_key():
    inst = fee_path()
    calls = faithful(inst)
    calls.insert(2, ("get_order_amount", {"order_id": "ORD-00000"}))
    ep = play(inst, calls)
    assert ep.calls[2].refused == "unknown_key"
    assert ep.calls[2].result.startswith("Error: orders has no record 'ORD-00000'")
    assert kinds(ep) == [("wrong_argument", 2, "other")]
    # the retry with the right id is the step's first run, not a repeat
    assert ep.metrics["verdict"] == "unfaithful_correct"


def test_the_customer_id_carried_to_the_orders_look_up_is_a_stale_output():
    inst = fee_path()
    calls = faithful(inst)
    amount = calls.pop(2)  # run after the customer's id came back, given that id
    calls.insert(3, ("get_order_amount", {"order_id": inst.value["customer_id"]}))
    calls.insert(4, amount)
    ep = play(inst, calls, order="dependency")
    first = labels(ep)[0]
    assert (first["kind"], first["cause"], first["confused_with"]) == (
        "wrong_argument",
        "stale_output",
        "customer_id",
    )
    assert ep.calls[3].refused == "unknown_key"  # a customer's id is no order


def test_the_order_id_given_for_the_customer_is_a_lookback_confusion():
    inst = fee_path()
    ep = play(
        inst, with_call(faithful(inst), "get_customer_tier", customer_id=inst.value["order_id"])
    )
    first = labels(ep)[0]
    assert (first["kind"], first["call_index"], first["cause"], first["confused_with"]) == (
        "wrong_argument",
        4,
        "lookback_confusion",
        "order_id",
    )
    assert "customers has no record" in ep.calls[4].result


def test_a_purchase_date_a_day_off_is_a_wrong_argument_and_the_days_carry_on():
    inst = fee_path()
    late = shift(inst.value["purchase_date"], 1)
    calls = with_call(faithful(inst), "count_days", purchase_date=late)
    days = inst.value["days_since_purchase"] - 1
    calls = with_call(calls, "refund", days_since_purchase=days)
    ep = play(inst, calls)
    assert kinds(ep) == [("wrong_argument", 1, "other"), ("wrong_argument", 7, "propagated")]
    assert labels(ep)[0]["got"] == late
    assert ep.calls[1].result == f"days_since_purchase = {days:.3f}"


def test_a_date_not_written_as_iso_text_is_refused_by_the_tool():
    inst = fee_path()
    y, m, d = inst.value["purchase_date"].split("-")
    loose = f"{y}-{int(m)}-{int(d)}"
    ep = play(inst, with_call(faithful(inst), "count_days", purchase_date=loose))
    assert ep.calls[1].refused == "invalid_arguments"
    assert kinds(ep)[0] == ("invalid_arguments", 1, None)


def test_a_category_key_that_is_no_record_is_refused_as_an_unknown_key():
    inst = shipped("ship")
    ep = play(inst, with_call(faithful(inst), "get_credit_limit", customer_id="C-9999"))
    assert ep.calls[2].refused == "unknown_key"
    assert ep.calls[2].result.startswith("Error: customers has no record 'C-9999'")
    assert kinds(ep)[0] == ("wrong_argument", 2, "other")


def test_a_wrong_boolean_another_variable_holds_is_other_never_a_confusion():
    inst = Instance(
        "refund_approval",
        lambda s: (
            s.path is not None and s.path.name == "base" and s.inputs.get("is_member") is True
        ),
    )
    assert inst.value["needs_manager"] is False and inst.value["is_member"] is True
    # the manager's branch read on the wrong condition: it takes the refund as approved
    calls: list[Call] = with_call(
        faithful(inst), "refund_paid", needs_manager=True, approved=inst.value["refund"]
    )
    ep = play(inst, calls)
    wrong = [lab for lab in labels(ep) if lab["kind"] == "wrong_argument"]
    assert wrong and wrong[0]["argument"] == "needs_manager"
    assert wrong[0]["cause"] == "other" and "confused_with" not in wrong[0]


def test_an_unknown_key_relabels_and_replays_as_it_was_labelled():
    inst = fee_path()
    calls = faithful(inst)
    calls.insert(2, ("get_order_amount", {"order_id": "ORD-00000"}))
    calls = with_call(calls, "get_customer_tier", customer_id=inst.value["order_id"])
    ep = play(inst, calls)
    rec = json.loads(json.dumps(episode_record(ep)))
    labels_again, metrics = label_record(rec)
    assert [lab.to_json() for lab in labels_again] == labels(ep) and metrics == ep.metrics
    replayed = replay_calls(inst.scenario, [(n, json.dumps(a)) for n, a in calls])
    assert [lab.to_json() for lab in replayed.labels] == labels(ep)
