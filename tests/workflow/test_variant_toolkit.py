"""The mock tools under a variant: guard feedback, distractors, faults, calculator, names."""

from __future__ import annotations

from helpers import RIGHT, tiny_scenario

from agentproc.agents.sim import run_sim_episode
from agentproc.labelling import LabelKind
from agentproc.labelling.calculator import monitor_for
from agentproc.runs import EpisodeSession
from agentproc.workflow import Toolkit, build_workflow
from agentproc.workflow.present import present
from agentproc.workflow.variant import Variant


def tools(variant: Variant, guard: str = "observe") -> Toolkit:
    p = present(tiny_scenario(), variant)
    return Toolkit(build_workflow(p.scenario, variant), guard, p)  # type: ignore[arg-type]


def test_feedback_refuses_like_enforce_and_names_the_step_expected_next():
    enforce = Toolkit(build_workflow(tiny_scenario()), "enforce")
    feedback = tools(Variant(guard="feedback"), "feedback")
    for tk in (enforce, feedback):
        tk.call("step_1", RIGHT[1])
        rec = tk.call("step_4", RIGHT[4])
        assert rec.refused == "dependency" and rec.value is None
    assert "next step" not in enforce.calls[1].result
    assert feedback.calls[1].result.endswith("The next step is step 2 (S4 = S3 * S2): call step_2.")
    early = feedback.call("submit_answer", {"answer": 3})
    assert early.refused == "premature" and "The next step is step 2" in early.result


def test_feedback_after_the_last_step_names_the_finish_tool():
    tk = tools(Variant(guard="feedback"), "feedback")
    for k in (1, 2, 4):
        tk.call(f"step_{k}", RIGHT[k])
    tk.call("step_3", RIGHT[3])
    assert tk.call("submit_answer", {"answer": 3}).refused is None


def test_a_distractor_answers_executes_nothing_and_is_labelled_as_a_call_outside_the_procedure():
    session = EpisodeSession(tiny_scenario(), "me", variant=Variant(distractors=2))
    rec = session.call("convert_units", {"value": 5})
    assert rec.refused == "distractor" and rec.result == "OK." and rec.value is None
    for k in (1, 2, 3, 4):
        session.call(f"step_{k}", RIGHT[k])
    session.call("submit_answer", {"answer": 3})
    ep = session.finish("answer")
    assert [lab.kind for lab in ep.labels] == [LabelKind.HALLUCINATED_CALL]
    assert ep.metrics["first_divergence"]["label"] == "hallucinated_call"


def test_a_transient_fault_executes_nothing_is_seeded_and_a_retry_is_no_repeat():
    variant = Variant(faults={"transient": 0.5})
    first = [tools(variant).call("step_1", RIGHT[1]).refused for _ in range(1)]
    runs = []
    for _ in range(2):
        tk = tools(variant)
        runs.append([tk.call("step_1", RIGHT[1]).refused for _ in range(12)])
    assert runs[0] == runs[1] and "transient" in runs[0] and None in runs[0]
    assert first[0] == runs[0][0]
    other = tools(Variant(faults={"transient": 0.5}, seed=3))
    assert [other.call("step_1", RIGHT[1]).refused for _ in range(12)] != runs[0]
    # An agent that retries each failed call is faithful: the faults are not its doing.
    ep = run_sim_episode(tiny_scenario(), "sim:oracle", variant=variant)
    refused = [c.refused for c in ep.calls]
    assert "transient" in refused and ep.metrics["verdict"] == "faithful" and ep.labels == []


def test_the_finish_tool_never_fails_transiently():
    tk = tools(Variant(faults={"transient": 0.99}))
    assert all(tk.call("submit_answer", {"answer": 3}).refused is None for _ in range(5))


def test_calculator_tools_compute_any_operation_and_name_no_step():
    tk = tools(Variant(tools="calculator"))
    rec = tk.call("mul", {"a": 1.5, "b": 2})
    assert rec.refused is None and rec.result == "3.000" and rec.step is None
    assert tk.call("div", {"a": 1, "b": 0}).refused == "division_by_zero"
    assert tk.call("mul", {"a": 1}).refused == "invalid_arguments"
    assert tk.call("step_1", RIGHT[1]).refused == "unknown_tool"


def test_scrambled_names_hide_the_step_tools_behind_their_descriptions():
    variant = Variant(scramble_names=True)
    p = present(tiny_scenario(), variant)
    tk = Toolkit(build_workflow(p.scenario, variant), "observe", p)
    assert tk.call("step_1", RIGHT[1]).refused == "unknown_tool"
    rec = tk.call(p.tool_names["step_1"], RIGHT[1])
    assert rec.refused is None and rec.step == 1 and rec.result == "S3 = 5.000"
    monitor = monitor_for(tk.workflow, p)
    labels = [monitor.observe(c) for c in tk.calls]
    assert labels[0][0].kind is LabelKind.HALLUCINATED_CALL and labels[1] == []
