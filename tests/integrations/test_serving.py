"""The served run behind ``serve-mcp``: guards and variants apply, and what it writes
replays without a difference."""

from __future__ import annotations

from pathlib import Path

from helpers import ORACLE, records, step, tiny_scenario

from agentproc.analysis import replay_record
from agentproc.integrations.serving import ServedRun, ServedRuns
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


def runs_of(tmp_path: Path, **options: object) -> ServedRuns:
    return ServedRuns(lambda: iter([tiny_scenario()]), tmp_path / "run.jsonl", **options)  # type: ignore[arg-type]


def test_each_session_has_its_own_scenario_and_episode(tmp_path: Path):
    runs, a, b = runs_of(tmp_path), object(), object()
    for call in ORACLE:
        runs.session(a, "alpha").call(*call)
    runs.session(b, "beta").call(*step(1))
    assert runs.session(a, "alpha").next_scenario().startswith("The run is complete")
    assert runs.session(b, "beta").scenario_id == "tiny"  # alpha moving on moved beta nowhere
    runs.close()
    eps = records(tmp_path / "run.jsonl")
    assert [(e["agent"], e["verdict"], len(e["calls"])) for e in eps] == [
        ("alpha", "faithful", len(ORACLE)),
        ("beta", "no_answer", 1),
    ]


def test_sessions_under_one_name_are_its_trials_in_order(tmp_path: Path):
    runs = runs_of(tmp_path, name="mine")
    for key in (object(), object(), object()):
        runs.session(key, "ignored").call(*step(1))
    runs.close()
    eps = records(tmp_path / "run.jsonl")
    assert [(e["agent"], e["trial"]) for e in eps] == [("mine", 0), ("mine", 1), ("mine", 2)]


def test_a_server_stopped_by_a_signal_writes_open_episodes_as_interrupted_or_answered(
    tmp_path: Path,
):
    runs, done, open_ = runs_of(tmp_path), object(), object()
    for call in ORACLE:
        runs.session(done, "answered").call(*call)
    runs.session(open_, "midway").call(*step(1))
    runs.session(object(), "untouched").tools  # noqa: B018 (a session without a call)
    runs.close("interrupted")
    eps = records(tmp_path / "run.jsonl")
    assert [(e["agent"], e["stop_reason"], e["verdict"]) for e in eps] == [
        ("answered", "answer", "faithful"),
        ("midway", "interrupted", "no_answer"),
    ]
    replays_alike(tmp_path / "run.jsonl")


def test_the_run_file_is_not_touched_until_it_is_opened(tmp_path: Path):
    (tmp_path / "run.jsonl").write_text("kept\n", encoding="utf-8")
    runs = runs_of(tmp_path)
    assert (tmp_path / "run.jsonl").read_text(encoding="utf-8") == "kept\n"
    runs.open()
    runs.close()
    assert (tmp_path / "run.jsonl").read_text(encoding="utf-8") == ""
