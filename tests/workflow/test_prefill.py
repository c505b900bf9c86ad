"""Pre-filled steps: the plan of the calls, their slips carried forward, and the workflow
the agent is judged against after them."""

from __future__ import annotations

import pytest

from agentproc.errors import InputError, StoredCallError
from agentproc.procedures import Cell, generate_procedure
from agentproc.workflow import build_workflow, scenario_of
from agentproc.workflow.prefill import (
    conditioned,
    given_steps,
    plan_prefill,
    prefill_seed,
    stored_prefill,
)
from agentproc.workflow.variant import load_variant, read_variant, variant_from_json
from agentproc.workflow.variant_prefill import Prefill


def workflow(steps: int = 10, lookback: int = 2, index: int = 3, mode: str = "decimal"):
    return build_workflow(
        scenario_of(generate_procedure(Cell(steps=steps, lookback=lookback, mode=mode), 0, index))
    )


def test_the_plan_prefills_the_first_steps_with_the_share_of_them_wrong():
    wf = workflow(10)
    plan = plan_prefill(wf, Prefill(steps=4, wrong_share=0.5), "k")
    assert [c.step for c in plan.calls] == [1, 2, 3, 4]
    assert len(plan.wrong_steps) == 2
    clean = plan_prefill(wf, Prefill(steps=4), "k")
    assert clean.wrong_steps == () and clean.values == {s: wf.correct[s + 2] for s in range(1, 5)}


def test_a_wrong_call_slips_one_argument_and_later_calls_read_what_the_tools_returned():
    wf = workflow(25, lookback=3)
    plan = plan_prefill(wf, Prefill(steps=20, wrong_share=0.25), "k")
    state = list(wf.correct)
    carried = False
    for call in plan.calls:
        spec = wf.steps[call.step - 1]
        off = [p for p in spec.params if call.args[p] != state[wf.var_of(p)]]
        assert len(off) == (1 if call.wrong else 0)
        assert call.value == spec.compute(call.args, wf.scale)  # as the mock tool computes
        if call.wrong:
            assert call.value != spec.compute(
                {p: state[wf.var_of(p)] for p in spec.params}, wf.scale
            )
        carried = carried or any(state[v] != wf.correct[v] for v in spec.operand_vars)
        state[spec.target] = call.value
    assert carried  # a wrong value reached a later pre-filled call, which read it as given


def test_the_plan_is_fixed_by_its_key_and_differs_between_keys():
    wf = workflow(25)
    prefill = Prefill(steps=12, wrong_share=0.5)
    a = plan_prefill(wf, prefill, prefill_seed(0, "s", 0))
    assert a == plan_prefill(wf, prefill, prefill_seed(0, "s", 0))
    keys = [prefill_seed(0, "s", 1), prefill_seed(0, "t", 0), prefill_seed(1, "s", 0)]
    assert all(plan_prefill(wf, prefill, k).wrong_steps != a.wrong_steps for k in keys)
    assert prefill_seed(0, "s") == prefill_seed(0, "s", 0) == "agentproc-prefill:0:s"


@pytest.mark.parametrize(
    ("prefill", "n", "k", "wrong"),
    [
        (Prefill(steps=3, wrong_share=1.0), 10, 3, 3),
        (Prefill(steps=30), 10, 9, 0),  # the agent always has a step of its own
        (Prefill(fraction=0.5, wrong_share=0.25), 5, 3, 1),  # 2.5 -> 3, 0.75 -> 1
        (Prefill(fraction=0.5, wrong_share=0.5), 1, 0, 0),
    ],
)
def test_counts_round_half_up_and_leave_the_agent_a_step(prefill, n, k, wrong):
    assert prefill.count(n) == k and prefill.wrong(k) == wrong


def test_a_prefill_gives_steps_or_fraction_and_needs_per_step_tools():
    with pytest.raises(InputError, match="steps or fraction"):
        variant_from_json({"prefill": {"wrong_share": 0.5}})
    with pytest.raises(InputError, match="steps or fraction"):
        variant_from_json({"prefill": {"steps": 2, "fraction": 0.5}})
    with pytest.raises(InputError, match="wrong_share"):
        variant_from_json({"prefill": {"steps": 2, "wrong_share": 1.5}})
    with pytest.raises(InputError, match="per-step tools"):
        variant_from_json({"tools": "calculator", "prefill": {"steps": 2}})


def test_a_toml_variant_file_sets_the_prefill(tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text("[prefill]\nsteps = 3\nwrong_share = 0.5\n")
    v = read_variant(path)
    assert v.prefill == Prefill(steps=3, wrong_share=0.5) and not v.is_default
    assert v.spec() == {"name": "mine", "prefill": {"steps": 3, "wrong_share": 0.5}}
    assert v.changes() == ["pre-filled 3 steps (50% wrong)"]


def test_a_variant_without_a_prefill_keeps_its_digest():
    assert load_variant("prose").digest == "89e01bd8d66c"


def test_the_shipped_prefill_variants_vary_only_the_wrong_share():
    shares = {
        n: load_variant(n).prefill
        for n in ("prefill-clean", "prefill-wrong-25", "prefill-wrong-50", "prefill-wrong-100")
    }
    assert {n: p.wrong_share for n, p in shares.items() if p} == {
        "prefill-clean": 0.0,
        "prefill-wrong-25": 0.25,
        "prefill-wrong-50": 0.5,
        "prefill-wrong-100": 1.0,
    }
    assert {p.fraction for p in shares.values() if p} == {0.5}


def test_the_conditioned_workflow_keeps_the_given_values_and_computes_the_rest_from_them():
    wf = workflow(10)
    plan = plan_prefill(wf, Prefill(steps=4, wrong_share=1.0), "k")
    cond = conditioned(wf, plan.values, plan.wrong_steps)
    assert cond.given == 4 and cond.given_wrong == plan.wrong_steps
    for spec in wf.steps:
        if spec.step <= 4:
            assert cond.correct[spec.target] == plan.values[spec.step]
        else:
            args = {p: cond.correct[wf.var_of(p)] for p in spec.params}
            assert cond.correct[spec.target] == spec.compute(args, wf.scale)
    assert cond.answer != wf.answer  # every pre-filled call wrong: the answer moves
    assert cond.expected[cond.answer_index] == cond.answer / wf.scale
    assert conditioned(wf, plan_prefill(wf, Prefill(steps=4), "k").values).correct == wf.correct


def test_the_given_steps_must_be_the_first_and_not_all():
    wf = workflow(3)
    with pytest.raises(ValueError, match="first ones"):
        conditioned(wf, {2: wf.correct[4]})
    with pytest.raises(ValueError, match="first ones"):
        conditioned(wf, {1: wf.correct[3], 2: wf.correct[4], 3: wf.correct[5]})


def test_a_stored_episode_is_judged_against_its_stored_prefilled_values():
    wf = workflow(10)
    variant = variant_from_json({"prefill": {"steps": 2}})
    assert given_steps(wf, variant) == 2 and given_steps(wf, None) == 0
    calls = [
        ["step_1", "{}", 1, None, 1.5],
        ["step_2", "{}", 2, None, 2.5],
        ["step_3", "{}", 3, None, 0],
    ]
    cond, k = stored_prefill(wf, variant, calls)
    assert k == 2 and cond.expected[3:5] == (1.5, 2.5)
    with pytest.raises(StoredCallError, match="pre-filled call of step 2"):
        stored_prefill(wf, variant, [calls[0], calls[2]])
    with pytest.raises(StoredCallError, match="missing"):
        stored_prefill(wf, variant, calls[:1])
