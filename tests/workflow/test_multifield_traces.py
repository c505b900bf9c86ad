"""Hand-written traces of ``claim_settlement``, whose answer has three fields (decision,
payout, reason_code): the finish tool takes one argument per field, a wrong field is one
``wrong_answer`` carrying its ``field`` (``propagated`` when the agent's own value of the
field's variable gives it), a field left out is wrong, an unknown argument is invalid, an
exit's answer is compared field by field, and relabelling a stored run reproduces it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import cli

from agentproc.resources import folder
from tests.workflow.hand_traces import Instance
from tests.workflow.test_branched_traces import Call, labels, play

FIELDS = ("decision", "payout", "reason_code")


def where(path: str, decision: str | None = None) -> Any:
    """Accept an instance whose path is ``path`` (and whose decision is ``decision``)."""
    return lambda s: (
        s.path is not None
        and s.path.name == path
        and (decision is None or (s.answer_fields or {}).get("decision") == decision)
    )


def steps(inst: Instance) -> list[Call]:
    """The instance's required steps in listed order."""
    return [(s.name, inst.args(s.name)) for s in inst.scenario.steps if s.required]


def answer(inst: Instance, **fields: Any) -> Call:
    """The finish call with the instance's right fields, but those given."""
    right = dict(inst.scenario.answer_fields or {})
    return (inst.finish, {**right, **fields})


@pytest.fixture(scope="module")
def approved() -> Instance:
    return Instance("claim_settlement", where("base", "approve"))


def test_every_field_right_is_faithful(approved: Instance) -> None:
    assert tuple(approved.scenario.answer_fields or ()) == FIELDS
    ep = play(approved, [*steps(approved), answer(approved)])
    assert ep.labels == []
    assert ep.metrics["verdict"] == "faithful"
    assert ep.metrics["first_answer"] == approved.scenario.answer_fields


def test_a_half_right_answer_is_one_wrong_answer_on_the_wrong_field_only(
    approved: Instance,
) -> None:
    calls = [*steps(approved), answer(approved, reason_code="R-LIMIT")]
    ep = play(approved, calls)
    assert labels(ep) == [
        {
            "kind": "wrong_answer",
            "call_index": len(calls) - 1,
            "step": None,
            "cause": "unsupported",
            "expected": approved.scenario.answer_fields["reason_code"],  # type: ignore[index]
            "got": "R-LIMIT",
            "field": "reason_code",
        }
    ]
    assert ep.metrics["verdict"] == "wrong"
    assert not ep.metrics["first_answer_correct"]


def test_a_wrong_field_from_the_agents_own_wrong_step_value_is_propagated(
    approved: Instance,
) -> None:
    settled = approved.value["settled"]
    calls = steps(approved)
    at = [name for name, _ in calls].index("payout")
    calls[at] = ("payout", approved.args("payout", settled=round(settled + 10, 2)))
    calls.append(answer(approved, payout=round(settled + 10, 2)))  # its own payout
    ep = play(approved, calls)
    found = labels(ep)
    assert [(x["kind"], x.get("argument"), x.get("field"), x.get("cause")) for x in found] == [
        ("wrong_argument", "settled", None, "other"),
        ("wrong_answer", None, "payout", "propagated"),
    ]


def test_a_field_left_out_is_wrong_and_unsupported(approved: Instance) -> None:
    right = dict(approved.scenario.answer_fields or {})
    del right["payout"]
    calls = [*steps(approved), (approved.finish, right)]
    ep = play(approved, calls)
    assert labels(ep) == [
        {
            "kind": "wrong_answer",
            "call_index": len(calls) - 1,
            "step": None,
            "cause": "unsupported",
            "expected": approved.scenario.answer_fields["payout"],  # type: ignore[index]
            "field": "payout",
        }
    ]
    assert ep.calls[-1].refused is None and ep.metrics["first_answer"] == right


def test_an_unknown_argument_refuses_the_finish_call_as_a_step_tool_would(
    approved: Instance,
) -> None:
    calls = [*steps(approved), answer(approved, note="ok"), answer(approved)]
    ep = play(approved, calls)
    assert [(x["kind"], x["call_index"]) for x in labels(ep)] == [
        ("invalid_arguments", len(calls) - 2)
    ]
    assert ep.calls[-2].refused == "invalid_arguments"
    assert "'note' is not a field of the answer" in ep.calls[-2].result
    assert ep.metrics["first_answer_correct"]


def test_an_ill_typed_field_refuses_the_finish_call(approved: Instance) -> None:
    ep = play(approved, [*steps(approved), answer(approved, decision="maybe")])
    assert [x["kind"] for x in labels(ep)] == ["invalid_arguments", "missing_answer"]


def test_an_exits_answer_is_compared_field_by_field() -> None:
    inst = Instance("claim_settlement", where("exit:lapsed_policy"))
    fields = inst.scenario.answer_fields
    assert fields == {"decision": "reject", "payout": 0, "reason_code": "R-LAPSED"}
    ep = play(inst, [*steps(inst), answer(inst)])
    assert ep.labels == [] and ep.metrics["exit_correct"]
    ep = play(inst, [*steps(inst), answer(inst, payout=100.0, reason_code="R-LATE")])
    assert [(x["kind"], x["field"], x["cause"]) for x in labels(ep)] == [
        ("wrong_answer", "payout", "unsupported"),
        ("wrong_answer", "reason_code", "unsupported"),
    ]
    assert not ep.metrics["exit_correct"]


def test_an_answer_from_the_exit_its_own_wrong_status_fired_is_propagated() -> None:
    inst = Instance("claim_settlement", where("base", "approve"))
    ep = play(
        inst,
        [
            ("get_status", {"policy_id": "P-203"}),  # the lapsed policy's record
            answer(inst, decision="reject", payout=0, reason_code="R-LAPSED"),
        ],
    )
    wrong = [(x["field"], x["cause"]) for x in labels(ep) if x["kind"] == "wrong_answer"]
    assert wrong == [(f, "propagated") for f in FIELDS]


def test_relabelling_a_stored_multi_field_run_reproduces_its_labels(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite, run, again = tmp_path / "suite", tmp_path / "run.jsonl", tmp_path / "again.jsonl"
    toml = folder("workflows") / "claim_settlement.toml"
    argv = ["generate", "--workflow", toml, "--count", "12", "--balance", "paths", "--out", suite]
    assert cli(capsys, *argv)[0] == 0
    assert cli(capsys, "run", suite, "--agent", "sim:wrong_answer", "--out", run)[0] == 0
    assert cli(capsys, "relabel", run, "--out", again)[0] == 0
    first = [json.loads(x) for x in run.read_text().splitlines()]
    second = [json.loads(x) for x in again.read_text().splitlines()]
    assert [r["labels"] for r in first] == [r["labels"] for r in second]
    assert all(
        [lab["kind"] for lab in r["labels"]] == ["wrong_answer"] and "field" in r["labels"][0]
        for r in first
    )
    _, out, _ = cli(capsys, "report", run, "--json")
    fields = json.loads(out)["agents"]["sim:wrong_answer"]["overall"]["answer_fields"]
    assert list(fields) == list(FIELDS)
    assert sum(f["n"] - f["correct"] for f in fields.values()) == len(first)
