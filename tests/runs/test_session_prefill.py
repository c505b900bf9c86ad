"""An episode under a variant's ``[prefill]``: the pre-filled calls are in the messages,
executed by the mock tools and given to the monitor; the agent is judged from there on."""

from __future__ import annotations

from agentproc.arith import to_number
from agentproc.procedures import Cell, generate_procedure
from agentproc.runs import EpisodeSession
from agentproc.workflow import Toolkit, build_workflow, scenario_of
from agentproc.workflow.variant import variant_from_json

SCENARIO = scenario_of(generate_procedure(Cell(steps=8, lookback=2), 0, 5))
WRONG = variant_from_json({"name": "w", "prefill": {"steps": 3, "wrong_share": 1.0}})


def own_steps(session: EpisodeSession, value_of=None) -> None:
    """Call every step after the pre-fill with the values the state holds, then answer."""
    wf = session.workflow
    for spec in wf.steps[wf.given :]:
        args = {
            p: wf.to_number(session.toolkit.values.get(wf.var_of(p), wf.correct[wf.var_of(p)]))
            for p in spec.params
        }
        session.call(spec.name, args)
    session.call("submit_answer", {"answer": wf.to_number(session.toolkit.values[wf.answer_index])})


def test_the_prefilled_calls_follow_the_opening_messages_as_the_agents_own():
    s = EpisodeSession(SCENARIO, "me", variant=WRONG)
    assert [m["role"] for m in s.messages] == ["system", "user"] + ["assistant", "tool"] * 3
    names = [m["tool_calls"][0]["function"]["name"] for m in s.messages[2::2]]
    assert names == ["step_1", "step_2", "step_3"]
    assert [m["content"] for m in s.messages[3::2]] == [c.result for c in s.calls]
    assert s.given == 3 and [c.index for c in s.calls] == [0, 1, 2]


def test_the_state_after_the_prefill_is_what_those_calls_produce():
    s = EpisodeSession(SCENARIO, "me", variant=WRONG)
    fresh = Toolkit(build_workflow(SCENARIO))
    for c in s.calls:
        fresh.call(c.name, c.arguments)
    assert fresh.state_hash == s.toolkit.state_hash
    wf = s.workflow
    assert wf.given == 3 and len(wf.given_wrong) == 3
    assert all(s.toolkit.values[k + 2] == wf.correct[k + 2] for k in (1, 2, 3))
    assert wf.answer != build_workflow(SCENARIO).answer  # judged against the given state


def test_carrying_a_given_wrong_value_forward_is_faithful():
    s = EpisodeSession(SCENARIO, "me", variant=WRONG)
    own_steps(s)
    ep = s.finish("answer")
    assert ep.labels == [] and ep.metrics["verdict"] == "faithful"
    m = ep.metrics
    assert (m["calls"], m["executed_steps"], m["total_steps"]) == (6, 5, 5)
    assert (m["longest_correct_prefix"], m["progress_rate"], m["given_steps"]) == (5, 1.0, 3)
    assert m["first_divergence"] is None


def test_the_true_value_in_place_of_a_given_one_is_the_agents_error():
    s = EpisodeSession(SCENARIO, "me", variant=WRONG)
    wf, truth = s.workflow, build_workflow(SCENARIO)
    spec = wf.steps[3]  # step 4 reads a given wrong value
    args = {p: truth.to_number(truth.correct[wf.var_of(p)]) for p in spec.params}
    rec = s.call(spec.name, args)
    ep = s.finish("no_tool_call")
    wrong = [lab for lab in ep.labels if lab.kind.value == "wrong_argument"]
    assert wrong and all(lab.call_index == rec.index == 3 and lab.step == 4 for lab in wrong)
    assert ep.metrics["first_divergence"] == {"call_index": 3, "step": 4, "label": "wrong_argument"}
    assert ep.metrics["longest_correct_prefix"] == 0 and ep.metrics["calls"] == 1


def test_the_given_calls_carry_no_label_and_a_rerun_of_one_is_the_agents_repeat():
    s = EpisodeSession(SCENARIO, "me", variant=WRONG)
    rec = s.call("step_2", s.calls[1].arguments)
    ep = s.finish("no_tool_call")
    assert all(lab.call_index is None or lab.call_index >= 3 for lab in ep.labels)
    assert any(
        lab.kind.value == "repeated_step" and lab.call_index == rec.index for lab in ep.labels
    )
    skipped = sorted(lab.step for lab in ep.labels if lab.kind.value == "skipped_step")
    assert skipped == [4, 5, 6, 7, 8]  # the given steps ran
    assert ep.metrics["executed_steps"] == 0 and ep.metrics["progress_rate"] == 0.0


def test_the_budget_counts_the_agents_own_calls():
    s = EpisodeSession(SCENARIO, "me", variant=WRONG)
    assert s.budget == 2 * (8 - 3 + 1) + 5 and not s.exhausted
    tight = EpisodeSession(SCENARIO, "me", variant=WRONG, budget=1)
    assert not tight.exhausted
    tight.call("step_4", "{}")
    assert tight.exhausted


def test_tool_faults_never_hit_a_prefilled_call():
    flaky = variant_from_json({"faults": {"transient": 0.9}, "prefill": {"steps": 5}})
    s = EpisodeSession(SCENARIO, "me", variant=flaky)
    assert [c.refused for c in s.calls] == [None] * 5
    assert s.call("step_6", "{}").refused == "transient"  # the agent's own calls meet them


def test_the_prefill_is_drawn_by_the_trial_and_spoken_in_the_shown_names():
    half = variant_from_json({"prefill": {"steps": 6, "wrong_share": 0.5}, "names": "descriptive"})
    plans = {
        tuple(EpisodeSession(SCENARIO, "me", variant=half, trial=t).workflow.given_wrong)
        for t in range(6)
    }
    assert len(plans) > 1
    s = EpisodeSession(SCENARIO, "me", variant=half)
    first = s.messages[2]["tool_calls"][0]["function"]["arguments"]
    assert "input_1" in first and "S1" not in first
    assert s.calls[0].args is not None and set(s.calls[0].args) <= {"S1", "S2"}


def test_the_answer_is_judged_against_the_given_state():
    s = EpisodeSession(SCENARIO, "me", variant=WRONG)
    truth = build_workflow(SCENARIO)
    own_steps(s)
    s.call("submit_answer", {"answer": to_number(truth.answer, truth.scale)})
    ep = s.finish("answer")
    assert ep.metrics["first_answer_correct"] and ep.metrics["answers"] == 2
    assert ep.labels[-1].kind.value == "answer_revised"
