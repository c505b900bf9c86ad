"""Hand-written traces of the shipped look-up workflows (``order_fulfilment``,
``warehouse_inspection``), labelled as docs/taxonomy.md says: another record's key, a field
taken from another record, the value a wrong look-up returned carried on, a gate ignored, a
check skipped or run where it is not needed, batched look-ups under the dependency order
policy."""

from __future__ import annotations

from typing import Any

from tests.workflow.hand_traces import Instance
from tests.workflow.test_branched_traces import Call, faithful, labels, play

CUSTOMERS = ["C-1001", "C-1002", "C-1003", "C-1004", "C-1005", "C-1006"]


def shipped(answer: str) -> Instance:
    """An instance of the base path whose decision is ``answer``."""
    return Instance(
        "order_fulfilment",
        lambda s: s.path is not None and s.path.name == "base" and s.answer == answer,
    )


def with_call(calls: list[Call], tool: str, **args: Any) -> list[Call]:
    """``calls`` with ``tool``'s arguments changed as given."""
    return [(n, {**a, **args} if n == tool else a) for n, a in calls]


def kinds(ep: Any) -> list[tuple[Any, ...]]:
    return [(lab["kind"], lab["call_index"], lab.get("cause")) for lab in labels(ep)]


def test_looking_every_record_up_by_its_key_is_faithful():
    inst = shipped("ship")
    ep = play(inst, faithful(inst))
    assert ep.labels == []
    assert ep.metrics["verdict"] == "faithful"
    assert ep.metrics["total_steps"] == 9  # the dead loyalty points included


def test_another_customers_id_is_a_wrong_argument_and_its_record_is_returned():
    inst = shipped("ship")
    other = next(c for c in CUSTOMERS if c != inst.value["customer_id"])
    ep = play(inst, with_call(faithful(inst), "get_credit_limit", customer_id=other))
    assert labels(ep) == [
        {
            "kind": "wrong_argument",
            "call_index": 2,
            "step": 3,
            "cause": "other",
            "argument": "customer_id",
            "expected": inst.value["customer_id"],
            "got": other,
        }
    ]
    # the tool looked the other account up: its credit limit, not the customer's
    credit = ep.calls[2].result
    assert (
        credit.startswith("credit_limit = ")
        and credit != f"credit_limit = {inst.value['credit_limit']:.3f}"
    )


def test_the_other_accounts_limit_carried_to_the_decision_is_propagated_to_a_wrong_answer():
    inst = shipped("ship")
    # C-1004's limit is 500: this customer's order is above it
    low = next(c for c in CUSTOMERS if c == "C-1004" and c != inst.value["customer_id"])
    assert inst.value["total"] > 500
    calls = with_call(faithful(inst), "get_credit_limit", customer_id=low)
    calls = with_call(calls, "decide", credit_limit=500.0)
    calls[-1] = (calls[-1][0], {"answer": "deposit"})
    ep = play(inst, calls)
    assert kinds(ep) == [
        ("wrong_argument", 2, "other"),
        ("wrong_argument", 8, "propagated"),
        ("wrong_answer", 9, "propagated"),
    ]
    assert ep.metrics["first_divergence"]["label"] == "wrong_argument"
    assert ep.metrics["first_divergence"]["call_index"] == 2


def test_a_price_taken_from_another_product_is_a_wrong_argument_the_total_carries_on():
    inst = shipped("ship")
    desk = 289.0  # another product's unit price, no value of this instance
    assert inst.value["unit_price"] != desk
    calls = with_call(faithful(inst), "order_total", unit_price=desk)
    total = round(inst.value["quantity"] * (desk + inst.value["shipping_rate"]), 2)
    calls = with_call(calls, "loyalty_points", total=total)
    calls = with_call(calls, "decide", total=total)
    ep = play(inst, calls)
    assert kinds(ep) == [
        ("wrong_argument", 6, "other"),
        ("wrong_argument", 7, "propagated"),
        ("wrong_argument", 8, "propagated"),
    ]
    assert labels(ep)[0]["argument"] == "unit_price" and labels(ep)[0]["got"] == desk
    assert ep.metrics["verdict"] == "unfaithful_correct"  # the total stays within the limit


def test_going_on_past_the_backorder_exit_labels_the_steps_it_did_not_need():
    inst = Instance("order_fulfilment", lambda s: s.path is not None and s.path.exit == "backorder")
    calls: list[Call] = [("get_stock", inst.args("get_stock"))]
    calls.append(("get_standing", {"customer_id": inst.value["customer_id"]}))
    calls.append((inst.finish, {"answer": "ship"}))
    ep = play(inst, calls)
    assert kinds(ep) == [("unneeded_step", 1, "unsupported"), ("wrong_answer", 2, "unsupported")]
    assert labels(ep)[0]["reason"] == "after_exit"
    assert labels(ep)[1]["expected"] == "backorder" and labels(ep)[1]["got"] == "ship"
    assert ep.metrics["exit_correct"] is False
    assert ep.metrics["verdict"] == "wrong"


def test_taking_the_backorder_exit_at_once_is_faithful():
    inst = Instance("order_fulfilment", lambda s: s.path is not None and s.path.exit == "backorder")
    ep = play(inst, [("get_stock", inst.args("get_stock")), (inst.finish, {"answer": "backorder"})])
    assert ep.labels == []
    assert ep.metrics["verdict"] == "faithful"


def test_batched_look_ups_under_dependency_are_faithful():
    inst = shipped("deposit")
    calls = faithful(inst)
    looks = [
        c
        for c in calls
        if c[0].startswith("get_") and c[0] not in ("get_stock", "get_shipping_rate")
    ]
    rest = [c for c in calls[1:] if c not in looks]
    ep = inst.play([[calls[0]], looks, *[[c] for c in rest]], "dependency")
    assert ep.labels == []
    assert ep.metrics["verdict"] == "faithful"


# -- warehouse inspection ---------------------------------------------------------------


def inspection(path: str) -> Instance:
    return Instance("warehouse_inspection", lambda s: s.path is not None and s.path.name == path)


def test_an_inspection_with_a_cold_chain_breach_is_faithful_with_its_charge():
    inst = inspection("cold_chain_charge")
    ep = play(inst, faithful(inst))
    assert ep.labels == []
    assert [c.name for c in ep.calls][4:6] == ["cold_chain_check", "cold_chain_charge"]
    assert ep.metrics["verdict"] == "faithful"


def test_another_suppliers_terms_are_a_wrong_key_whose_record_is_returned():
    inst = inspection("cold_chain_charge")
    other = next(s for s in ("dunmore_wholesale", "alder_supply") if s != inst.value["supplier"])
    ep = play(inst, with_call(faithful(inst), "get_rate", supplier=other))
    assert kinds(ep) == [("wrong_argument", 0, "other")]
    assert labels(ep)[0]["argument"] == "supplier" and labels(ep)[0]["got"] == other
    assert ep.calls[0].result != f"rate = {inst.value['rate']:.3f}"


def test_a_skipped_cold_chain_charge_is_a_skipped_step_and_the_chargeback_is_refused():
    inst = inspection("cold_chain_charge")
    calls = [
        (n, {k: v for k, v in a.items() if k != "cold_charge"})
        for n, a in faithful(inst)
        if n != "cold_chain_charge"
    ]
    ep = play(inst, calls)
    assert kinds(ep) == [
        ("invalid_arguments", 6, None),
        ("premature_finish", 7, "unsupported"),
        ("skipped_step", None, "unsupported"),
        ("skipped_step", None, "unsupported"),
    ]
    assert [lab["step"] for lab in labels(ep)[2:]] == [6, 9]
    assert "cold_charge is needed" in ep.calls[6].result


def test_a_labelling_fee_looked_up_for_good_labels_is_an_unneeded_step():
    inst = inspection("base")
    calls = faithful(inst)
    at = [n for n, _ in calls].index("units_booked")
    calls.insert(at, ("get_label_fee", {"supplier": inst.value["supplier"]}))
    ep = play(inst, calls)
    assert labels(ep) == [
        {
            "kind": "unneeded_step",
            "call_index": at,
            "step": 7,
            "cause": "unsupported",
            "reason": "condition",
        }
    ]
    assert ep.metrics["verdict"] == "unfaithful_correct"


def test_checking_a_delivery_past_the_purchase_order_gate_labels_the_look_up_and_answer():
    inst = Instance(
        "warehouse_inspection", lambda s: s.path is not None and s.path.exit is not None
    )
    calls: list[Call] = [
        ("get_rate", {"supplier": inst.value["supplier"]}),
        (inst.finish, {"answer": inst.value["chargeback"]}),
    ]
    ep = play(inst, calls)
    assert kinds(ep) == [("unneeded_step", 0, "unsupported"), ("wrong_answer", 1, "unsupported")]
    assert labels(ep)[0]["reason"] == "after_exit"
    assert labels(ep)[1]["expected"] == 150
