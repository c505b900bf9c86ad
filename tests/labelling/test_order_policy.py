"""The order policy: ``listed`` holds calls to the listed order of the steps; ``dependency``
only to their dependencies (steps whose inputs are all available may come in any order, several
in one message), and reports whether batching was maximal."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from helpers import cli, records, step, submit, tiny_scenario
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage

from agentproc.agents.harness import arun_model_episode
from agentproc.agents.sim import run_sim_episode
from agentproc.agents.sim.selfcheck import run_selfcheck
from agentproc.analysis import label_record, replay_calls
from agentproc.errors import RunFileError
from agentproc.labelling import label_calls
from agentproc.labelling.order import fewest_messages
from agentproc.procedures import Cell, generate_procedure
from agentproc.runs import episode_record
from agentproc.workflow import Scenario, Toolkit, build_workflow, scenario_of

# tiny scenario (tests/helpers.py): S3 = S1 + S2; S4 = S3 * S2; S5 = S4 - S2; S6 = S4 / S3.
# Steps 3 and 4 both read only S4 (and inputs or S3): after step 2 they may come in any order.


def label(calls: list[tuple[str, Any]], order: str, batches: list[int] | None = None):
    wf = build_workflow(tiny_scenario())
    tk = Toolkit(wf)
    recs = [tk.call(name, args) for name, args in calls]
    return label_calls(wf, recs, order, batches)  # type: ignore[arg-type]


def kinds(labels: list[Any]) -> list[tuple[str, int | None, int | None]]:
    return [(lab.kind.value, lab.call_index, lab.step) for lab in labels]


def test_a_dependency_legal_reordering_is_faithful_under_dependency_only():
    calls = [step(1), step(2), step(4), step(3), submit()]
    labels, metrics = label(calls, "dependency")
    assert labels == [] and metrics["verdict"] == "faithful"
    assert metrics["longest_correct_prefix"] == 4 and metrics["first_divergence"] is None
    labels, _ = label(calls, "listed")
    assert kinds(labels) == [("reordered", 2, 4)]


def test_a_step_run_before_a_step_it_reads_is_reordered_under_dependency():
    labels, metrics = label([step(2), step(1), step(3), step(4), submit()], "dependency")
    assert kinds(labels) == [("reordered", 0, 2)] and labels[0].breaks_dependency is True
    assert metrics["first_divergence"] == {"call_index": 0, "step": 1, "label": "reordered"}


def test_a_step_reading_a_step_never_run_follows_a_skip_not_a_reorder_under_dependency():
    labels, metrics = label([step(1), step(3), step(4), submit()], "dependency")
    assert kinds(labels) == [("skipped_step", None, 2)]
    assert metrics["first_divergence"] == {"call_index": 1, "step": 2, "label": "skipped_step"}


def test_batching_is_maximal_when_every_ready_step_comes_in_one_message():
    calls = [step(1), step(2), step(4), step(3), submit()]
    _, metrics = label(calls, "dependency", [1, 1, 2, 1])
    assert metrics["batching_maximal"] is True
    assert metrics["messages"] == metrics["fewest_messages"] == 4
    _, metrics = label(calls, "dependency")  # one call per message: step 3 waited a message
    assert metrics["batching_maximal"] is False and metrics["messages"] == 5


def test_a_message_that_leaves_out_a_ready_step_is_not_maximal_batching():
    # Step 2 is ready with step 1's result; a message of step 2 alone leaves out nothing,
    # but answering while steps 3 and 4 are ready leaves them out.
    _, metrics = label([step(1), step(2), submit(15)], "dependency", [1, 1, 1])
    assert metrics["batching_maximal"] is False


def test_listed_order_reports_no_batching():
    _, metrics = label([step(1), step(2), step(3), step(4), submit()], "listed", [1, 1, 2, 1])
    assert "batching_maximal" not in metrics and "messages" not in metrics


def test_fewest_messages_is_the_depth_of_the_step_graph_plus_the_answer():
    assert fewest_messages(build_workflow(tiny_scenario()).depends_on) == 4
    assert fewest_messages([(), (), (1, 2)]) == 3


WIDE = scenario_of(generate_procedure(Cell(steps=10, lookback=7), 0, 3))


def test_the_batching_sim_agent_is_faithful_and_maximal_under_dependency():
    ep = run_sim_episode(WIDE, "sim:batched", order="dependency")
    assert ep.labels == [] and ep.metrics["verdict"] == "faithful"
    assert ep.metrics["batching_maximal"] is True
    assert ep.metrics["messages"] == ep.metrics["fewest_messages"] < len(ep.calls)
    assert ep.batches is not None and sum(ep.batches) == len(ep.calls) and max(ep.batches) > 1
    assert [c.index for c in ep.calls] == list(range(len(ep.calls)))  # results in call order


def test_a_dependency_episode_records_its_policy_and_batches_and_relabels_the_same():
    ep = run_sim_episode(WIDE, "sim:batched", order="dependency")
    rec = json.loads(json.dumps(episode_record(ep)))
    assert rec["order"] == "dependency" and rec["batches"] == ep.batches
    labels, metrics = label_record(rec)
    assert labels == [] and metrics == ep.metrics
    listed, _ = label_record(rec, order="listed")
    assert any(lab.kind.value == "reordered" for lab in listed)


def test_a_record_without_an_order_is_labelled_under_listed():
    ep = run_sim_episode(tiny_scenario(), "sim:oracle")
    rec = json.loads(json.dumps(episode_record(ep)))
    assert "order" not in rec and "batches" not in rec
    _, metrics = label_record(rec)
    assert "batching_maximal" not in metrics


@pytest.mark.parametrize(
    ("field", "value"), [("order", "sideways"), ("batches", [2, 0]), ("batches", "2")]
)
def test_a_bad_order_or_batches_field_names_it(field: str, value: Any):
    ep = run_sim_episode(tiny_scenario(), "sim:oracle", order="dependency")
    rec = json.loads(json.dumps(episode_record(ep)))
    rec[field] = value
    with pytest.raises(RunFileError) as err:
        label_record(rec)
    assert err.value.field == field


def test_replay_under_dependency_reads_the_batches():
    calls = [step(1), step(2), step(4), step(3), submit()]
    r = replay_calls(tiny_scenario(), calls, order="dependency", batches=[1, 1, 2, 1])
    assert r.labels == [] and r.metrics["batching_maximal"] is True


class ScriptedChatModel(GenericFakeChatModel):
    def bind_tools(self, tools: Any, **kw: Any) -> ScriptedChatModel:
        return self


def _parallel_replies(scenario: Scenario) -> list[AIMessage]:
    """Every ready step in one message, then the answer."""
    done: set[int] = set()
    replies = []
    while len(done) < len(scenario.steps):
        ready = [s for s in scenario.steps if s.step not in done and set(s.depends_on) <= done]
        calls = [
            {"name": s.expected_call.name, "args": s.expected_call.arguments, "id": f"c{s.step}"}
            for s in reversed(ready)  # any order within the message
        ]
        replies.append(AIMessage(content="", tool_calls=calls))
        done.update(s.step for s in ready)
    answer = {"name": "submit_answer", "args": {"answer": scenario.answer}, "id": "end"}
    replies.append(AIMessage(content="", tool_calls=[answer]))
    return replies


def test_the_harness_takes_parallel_calls_as_one_message():
    model = ScriptedChatModel(messages=iter(_parallel_replies(WIDE)))
    ep = asyncio.run(arun_model_episode(WIDE, model, "scripted", order="dependency"))
    assert ep.labels == [] and ep.metrics["verdict"] == "faithful"
    assert ep.metrics["batching_maximal"] is True and max(ep.batches or [0]) > 1
    model = ScriptedChatModel(messages=iter(_parallel_replies(WIDE)))
    listed = asyncio.run(arun_model_episode(WIDE, model, "scripted"))
    assert any(lab.kind.value == "reordered" for lab in listed.labels)


def test_selfcheck_is_perfect_under_the_dependency_policy():
    grid = {"steps": (3, 10), "lookback": (1, 3), "range": ((1.0, 10.0),), "mode": ("decimal",)}
    result = run_selfcheck(count=2, grid=grid, order="dependency")
    assert result.scores["reordered"].truth > 0
    assert all(
        s.precision == 1.0 and s.recall == 1.0
        for s in (*result.scores.values(), *result.causes.values())
    ), result.mismatches


def test_run_replay_and_relabel_take_the_order_flag(tmp_path: Path, capsys: Any):
    suite = tmp_path / "suite"
    code = cli(
        capsys, "generate", "--steps", "6", "--lookback", "3", "--count", "3", "--out", suite
    )
    assert code[0] == 0
    run = tmp_path / "run.jsonl"
    code, _, _ = cli(
        capsys, "run", suite, "--agent", "sim:batched", "--order", "dependency", "--out", run,
        "--limit", "3",
    )  # fmt: skip
    assert code == 0
    recs = records(run)
    assert all(r["order"] == "dependency" and r["verdict"] == "faithful" for r in recs)
    code, out, _ = cli(capsys, "replay", run)
    assert code == 0 and "0 differ" in out
    out_file = tmp_path / "listed.jsonl"
    code, out, _ = cli(capsys, "relabel", run, "--order", "listed", "--out", out_file)
    assert code == 0
    assert all(r["order"] == "listed" for r in records(out_file))
    code, _, err = cli(capsys, "run", suite, "--order", "sideways", "--out", tmp_path / "x")
    assert code == 2 and "sideways" in err
