"""The monitor agrees with the faults the simulated agents injected."""

from __future__ import annotations

import pytest

from agentproc.agents.sim import INJECTORS, selfcheck
from agentproc.agents.sim.faults import BRANCH_INJECTORS, FAITHFUL
from agentproc.agents.sim.selfcheck import run_selfcheck
from agentproc.labelling import LabelKind, tools
from agentproc.labelling.labels import BRANCH_ONLY, DEPENDENCY_ONLY, TEXT_ONLY

SMALL = {
    "steps": (1, 2, 5, 25, 95),
    "lookback": (1, 3, 7),
    "range": ((0.0, 1.0), (10.0, 100.0)),
    "mode": ("decimal", "integer"),
}


def test_there_is_one_injector_per_label_kind_a_tool_call_can_have():
    tool_kinds = sorted(k.value for k in LabelKind if k not in TEXT_ONLY | BRANCH_ONLY)
    assert sorted(a.removeprefix("sim:") for a in INJECTORS) == tool_kinds
    assert BRANCH_INJECTORS == ("sim:wrong_branch", "sim:ignores_exit")


def test_a_text_only_kind_is_scored_but_not_required_to_occur():
    result = run_selfcheck(count=1, grid=SMALL)
    assert result.scores["unreadable"].truth == 0 and result.perfect


def test_every_label_has_precision_and_recall_one_on_single_fault_episodes():
    result = run_selfcheck(count=2, grid=SMALL)
    assert result.episodes == 5 * 3 * 2 * 2 * 2 * len(INJECTORS)
    assert result.mismatches == []
    for kind, score in result.scores.items():  # under ``listed`` messages are not judged
        assert score.truth > 0 or LabelKind(kind) in TEXT_ONLY | DEPENDENCY_ONLY, kind
        assert (score.precision, score.recall) == (1.0, 1.0), kind
    assert result.perfect


def test_selfcheck_catches_a_monitor_that_misreads_causes(monkeypatch: pytest.MonkeyPatch):
    original = tools.wrong_argument

    def careless(core, index, spec, param, got, *rest):  # calls every wrong argument "other"
        lab = original(core, index, spec, param, got, *rest)
        return lab.__class__(
            lab.kind, lab.call_index, lab.step, cause="other", argument=lab.argument
        )

    monkeypatch.setattr(tools, "wrong_argument", careless)
    result = run_selfcheck(count=1, grid={**SMALL, "steps": (5, 25)})
    assert not result.perfect
    assert result.scores["wrong_argument"].precision < 1.0


def test_every_episode_of_the_grid_is_run_and_reported():
    seen = []
    result = run_selfcheck(
        count=1, grid={**SMALL, "steps": (1, 5)}, on_episode=lambda: seen.append(1)
    )
    assert result.episodes == 2 * 3 * 2 * 2 * len(INJECTORS)
    assert len(seen) == 2 * 3 * 2 * 2 * (len(INJECTORS) + len(FAITHFUL))


@pytest.mark.parametrize("order", ["listed", "dependency"])
def test_every_episode_of_the_agents_that_make_no_mistake_is_faithful(order):
    result = run_selfcheck(count=2, grid=SMALL, order=order)
    n = 5 * 3 * 2 * 2 * 2
    assert FAITHFUL == ("sim:oracle", "sim:batched")
    assert {a: (f.episodes, f.faithful) for a, f in result.faithful.items()} == {
        a: (n, n) for a in FAITHFUL
    }
    assert result.mismatches == [] and result.perfect


def test_selfcheck_fails_when_an_agent_that_makes_no_mistake_is_labelled_unfaithful(
    monkeypatch: pytest.MonkeyPatch,
):
    from agentproc.agents.sim import batches, faults

    # Every ready step in a message, whatever the policy: out of listed order.
    monkeypatch.setitem(faults.BY_ORDER, "sim:batched", lambda order: batches.batched("dependency"))
    result = run_selfcheck(count=1, grid={**SMALL, "steps": (5, 25)})
    batched = result.faithful["sim:batched"]
    assert batched.faithful < batched.episodes and not result.perfect
    assert any(m.startswith("sim:batched on ") and "reordered" in m for m in result.mismatches)
    assert result.faithful["sim:oracle"].faithful == result.faithful["sim:oracle"].episodes


def test_the_command_line_default_checks_at_least_ten_thousand_episodes():
    from agentproc.cli import build_parser

    count = build_parser().parse_args(["selfcheck"]).count
    assert len(selfcheck.cells()) * count * len(INJECTORS) >= 10_000


def test_every_wrong_argument_cause_is_injected_and_found():
    result = run_selfcheck(count=2, grid=SMALL)
    for cause, score in result.causes.items():
        assert score.truth > 0, cause
        assert (score.precision, score.recall) == (1.0, 1.0), cause


def test_every_label_and_cause_scores_one_under_the_dependency_order_policy():
    result = run_selfcheck(count=2, grid=SMALL, order="dependency")
    assert result.mismatches == []
    for kind, score in result.scores.items():
        assert score.truth > 0 or LabelKind(kind) in TEXT_ONLY, kind
        assert (score.precision, score.recall) == (1.0, 1.0), kind
    for cause, score in result.causes.items():
        assert score.truth > 0 and (score.precision, score.recall) == (1.0, 1.0), cause
    assert result.perfect


@pytest.mark.parametrize("variant", ["calculator", "shuffled", "random-names", "prose"])
def test_every_label_and_cause_scores_one_under_a_variant_at_look_back_one(variant: str):
    """Look-back 1 steps with a constant operand, under the variants that rename, reorder,
    re-render or re-align them."""
    from agentproc.workflow.variant import load_variant

    small = {**SMALL, "lookback": (1,), "steps": (5, 25)}
    for order in ("listed", "dependency"):
        result = run_selfcheck(count=2, grid=small, variant=load_variant(variant), order=order)
        assert result.mismatches == [] and result.perfect, (variant, order)


def test_an_injected_invalid_call_hit_by_a_transient_tool_fault_is_sent_again():
    from agentproc.workflow.variant import load_variant

    result = run_selfcheck(
        count=2, grid={**SMALL, "steps": (1, 2)}, variant=load_variant("flaky-tools")
    )
    assert result.mismatches == [] and result.perfect


def test_a_wrong_argument_is_counted_under_its_kind_and_under_its_cause():
    from agentproc.labelling import Label

    result = selfcheck.SelfCheck()
    found = Label(LabelKind.WRONG_ARGUMENT, 3, 2, cause="propagated", argument="S3")
    missed = Label(LabelKind.WRONG_ARGUMENT, 4, 3, cause="stale_output", argument="S4")
    selfcheck._score(result, [found], [found, missed], "here")
    kind = result.to_json()["labels"]["wrong_argument"]
    assert kind == {"truth": 2, "predicted": 1, "agreed": 1, "precision": 1.0, "recall": 0.5}
    causes = result.to_json()["causes"]
    assert causes["propagated"] == {
        "truth": 1, "predicted": 1, "agreed": 1, "precision": 1.0, "recall": 1.0
    }  # fmt: skip
    assert causes["stale_output"]["truth"] == 1 and causes["stale_output"]["recall"] == 0.0
