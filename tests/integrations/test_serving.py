"""The served run behind ``serve-mcp``: guards and variants apply, and what it writes
replays without a difference."""

from __future__ import annotations

from pathlib import Path

from helpers import ORACLE, records, step, tiny_scenario

from agentproc.analysis import replay_record
from agentproc.integrations.serving import ServedRun
from agentproc.workflow.variant import load_variant


def served(tmp_path: Path, **options: object) -> ServedRun:
    return ServedRun(iter([tiny_scenario()]), tmp_path / "run.jsonl", **options)  # type: ignore[arg-type]


def replays_alike(run: Path) -> None:
    for rec in records(run):
        assert replay_record(rec, tiny_scenario(), str(run), run).differences == []


def test_the_enforce_guard_refuses_a_step_whose_input_is_missing(tmp_path: Path):
    run = served(tmp_path, guard="enforce")
    run.call(*step(1))
    reply = run.call(*step(3))  # step 2, which it reads, has not run
    assert reply.error
    run.close()
    (ep,) = records(tmp_path / "run.jsonl")
    assert ep["guard"] == "enforce" and ep["calls"][1]["refused"] == "dependency"
    replays_alike(tmp_path / "run.jsonl")


def test_a_variants_tools_are_served_and_labelled_under_it(tmp_path: Path):
    run = served(tmp_path, variant=load_variant("calculator"))
    names = [t["function"]["name"] for t in run.tools]
    assert "step_1" not in names and {"add", "mul", "submit_answer"} <= set(names)
    run.call("add", {"a": 2, "b": 3})
    run.close()
    (ep,) = records(tmp_path / "run.jsonl")
    assert ep["variant"] == "calculator"
    replays_alike(tmp_path / "run.jsonl")


def test_calls_past_the_budget_end_the_episode_as_budget(tmp_path: Path):
    run = served(tmp_path, budget=2)
    for call in ORACLE[:3]:
        reply = run.call(*call)
    assert reply.error and "budget" in reply.text
    assert run.next_scenario() == "The run is complete: 1 episode written."
    run.close()
    (ep,) = records(tmp_path / "run.jsonl")
    assert ep["stop_reason"] == "budget" and len(ep["calls"]) == 2


def test_an_answered_episode_that_then_runs_past_the_budget_still_ends_as_answer(
    tmp_path: Path,
):
    run = served(tmp_path, budget=len(ORACLE))
    for call in ORACLE:
        run.call(*call)
    assert run.call(*ORACLE[0]).error  # past the budget: refused
    run.close()
    (ep,) = records(tmp_path / "run.jsonl")
    assert ep["verdict"] == "faithful" and ep["stop_reason"] == "answer"


def test_a_scenario_left_untouched_is_written_only_when_moved_past(tmp_path: Path):
    run = served(tmp_path)
    run.close()  # the client left without a call: nothing to score
    assert records(tmp_path / "run.jsonl") == []
    run = served(tmp_path)
    run.next_scenario()  # the agent moved on without a call: scored, no answer
    run.close()
    (ep,) = records(tmp_path / "run.jsonl")
    assert ep["verdict"] == "no_answer" and ep["stop_reason"] == "no_tool_call"
