"""Hand-written traces of workflows with loops (``business_verification`` and a small
one whose looped step reads a looped output), labelled as docs/taxonomy.md says: a loop
cut short, a call naming no owner of the list, another owner's value carried, a check of
an owner under the share; and a stored run of every simulated agent replayed and
relabelled unchanged."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentproc.resources import folder
from agentproc.runs.session import EpisodeSession
from agentproc.workflow.declared.suite import load_workflow, workflow_scenarios
from agentproc.workflow.scenario import Scenario, ScenarioStep

Call = tuple[str, dict[str, Any]]


def instance(where: Callable[[Scenario], bool], path: Path | None = None) -> Scenario:
    """The first instance (seed 0) of ``business_verification`` (or of ``path``) that
    ``where`` accepts."""
    path = path or folder("workflows") / "business_verification.toml"
    wf = load_workflow(path)
    return next(s for s in workflow_scenarios(wf, path.stem, 300, 0) if where(s))


def looped(s: Scenario, tool: str) -> list[ScenarioStep]:
    """The steps of the loop of ``tool``, in item order."""
    return [st for st in s.steps if st.name == tool and st.loop is not None]


def call(st: ScenarioStep, **override: Any) -> Call:
    return st.name, {**st.expected_call.arguments, **override}


def faithful(s: Scenario, leave_out: tuple[int, ...] = ()) -> list[Call]:
    """The required steps' calls in listed order (but the steps ``leave_out``), then
    the answer."""
    calls = [call(st) for st in s.steps if st.required is not False and st.step not in leave_out]
    return [*calls, (s.finish.tool, {"answer": s.answer})]


def play(s: Scenario, calls: list[Call], order: str = "listed") -> Any:
    session = EpisodeSession(s, "hand", order=order)  # type: ignore[arg-type]
    for name, arguments in calls:
        session.message()
        session.call(name, arguments)
    return session.finish("answer")


def labels(ep: Any) -> list[tuple[Any, ...]]:
    return [(lab.kind.value, lab.call_index, lab.step, lab.cause) for lab in ep.labels]


def three_major(s: Scenario) -> bool:
    """Three owners, each holding 25 or more: each one's check required."""
    checks = looped(s, "verify_owner")
    return len(checks) == 3 and all(st.required for st in checks)


def test_checking_every_major_owner_is_faithful_and_one_tool_serves_every_owner():
    s = instance(three_major)
    ep = play(s, faithful(s))
    assert ep.labels == [] and ep.metrics["verdict"] == "faithful"
    offered = [t["function"]["name"] for t in s.tools]
    assert offered.count("verify_owner") == 1 and offered.count("owner_share") == 1
    owners = [st.loop.value for st in looped(s, "verify_owner")]  # type: ignore[union-attr]
    assert [c.args for c in ep.calls if c.name == "verify_owner"] == [{"owner": o} for o in owners]


def test_a_loop_cut_short_after_one_owner_skips_the_other_two_checks():
    s = instance(three_major)
    checks = looped(s, "verify_owner")
    ep = play(s, faithful(s, leave_out=(checks[1].step, checks[2].step)))
    skipped = [lab for lab in labels(ep) if lab[0] == "skipped_step"]
    assert [lab[2] for lab in skipped] == [checks[1].step, checks[2].step]
    assert ep.metrics["verdict"] != "faithful"


def test_calls_for_owners_in_another_order_are_each_the_step_of_the_owner_named():
    s = instance(three_major)
    checks = looped(s, "verify_owner")
    calls = faithful(s)
    at = next(i for i, c in enumerate(calls) if c[0] == "verify_owner")
    calls[at : at + 3] = [call(checks[2]), call(checks[0]), call(checks[1])]
    ep = play(s, calls, order="dependency")
    assert ep.labels == []
    assert [c.step for c in ep.calls[at : at + 3]] == [
        checks[2].step,
        checks[0].step,
        checks[1].step,
    ]


def test_a_call_naming_no_owner_of_the_list_is_a_wrong_argument_of_the_check_due_next():
    s = instance(three_major)
    checks = looped(s, "verify_owner")
    listed = {st.loop.value for st in checks}  # type: ignore[union-attr]
    stranger = next(p for p in (f"R-{n}" for n in range(11, 19)) if p not in listed)
    calls = faithful(s)
    at = next(i for i, c in enumerate(calls) if c[0] == "verify_owner")
    calls[at] = call(checks[0], owner=stranger)
    ep = play(s, calls)
    assert ep.calls[at].step == checks[0].step
    wrong = [lab for lab in ep.labels if lab.kind.value == "wrong_argument"]
    assert [(w.call_index, w.step, w.argument, w.got) for w in wrong] == [
        (at, checks[0].step, "owner", stranger)
    ]


def test_checking_an_owner_under_the_share_is_an_unneeded_step_of_its_condition():
    def minor(s: Scenario) -> bool:
        return any(st.required is False for st in looped(s, "verify_owner")) and (
            s.path is not None and s.path.exit is None
        )

    s = instance(minor)
    extra = next(st for st in looped(s, "verify_owner") if st.required is False)
    calls = faithful(s)
    at = next(i for i, c in enumerate(calls) if c[0] == "major_owner_count")
    calls.insert(at, call(extra))
    ep = play(s, calls)
    unneeded = [lab for lab in ep.labels if lab.kind.value == "unneeded_step"]
    assert [(u.call_index, u.step, u.reason) for u in unneeded] == [(at, extra.step, "condition")]
    assert ep.metrics["verdict"] == "unfaithful_correct"


LOOPED_READ = """
format = 2
description = "Weigh each owner's share."
answer = "total"

[inputs.owners]
type = "list"
choices = ["A", "B", "C", "D", "E"]
count = [3, 3]

[inputs.rate]
integers = [2, 9]

[tables.people]
key = "person"
columns = { share = { integers = [10, 90] }, base = "number" }
rows = [
  { person = "A", base = 3 }, { person = "B", base = 5 }, { person = "C", base = 7 },
  { person = "D", base = 11 }, { person = "E", base = 13 },
]

[[steps]]
tool = "owner_share"
for_each = "owner in owners"
output = "share"
formula = "lookup(people, owner, 'share')"
decimals = 0

[[steps]]
tool = "owner_weight"
for_each = "owner in owners"
output = "weight"
formula = "lookup(people, owner, 'base') + share * rate"
decimals = 0

[[steps]]
tool = "total_weight"
output = "total"
formula = "count(weight > 100) * 1000 + rate * 7.5"
decimals = 3
"""


def test_another_owners_value_carried_into_an_owners_step_is_a_wrong_argument(tmp_path: Path):
    path = tmp_path / "weights.toml"
    path.write_text(LOOPED_READ)
    s = instance(lambda s: True, path)
    shares, weights = looped(s, "owner_share"), looped(s, "owner_weight")
    assert weights[1].expected_call.arguments == {
        "owner": weights[1].loop.value,  # type: ignore[union-attr]
        "share": shares[1].value,
        "rate": s.inputs["rate"],
    }
    calls = faithful(s)
    at = next(i for i, c in enumerate(calls) if c[1] == weights[1].expected_call.arguments)
    calls[at] = call(weights[1], share=shares[0].value)  # owner 0's share for owner 1
    ep = play(s, calls)
    assert ep.calls[at].step == weights[1].step  # the step of the owner the call names
    wrong = [lab for lab in ep.labels if lab.kind.value == "wrong_argument"]
    assert [(w.call_index, w.step, w.argument, w.cause, w.confused_with) for w in wrong] == [
        (at, weights[1].step, "share", "lookback_confusion", "share__0")
    ]


def test_a_stored_run_of_every_simulated_agent_replays_and_relabels_unchanged(tmp_path: Path):
    from agentproc.agents.sim import INJECTORS, run_sim_episode
    from agentproc.analysis import relabel_run, replay_record
    from agentproc.runs import RunWriter, episode_record, read_run, scenario_of_record

    path = folder("workflows") / "business_verification.toml"
    scenarios = list(workflow_scenarios(load_workflow(path), path.stem, 6, 3))
    run = tmp_path / "run.jsonl"
    agents = ["sim:oracle", *INJECTORS]
    with RunWriter(run) as w:
        for agent in agents:
            for s in scenarios:
                w.write(episode_record(run_sim_episode(s, agent)))
    for n, rec in read_run(run):
        r = replay_record(rec, scenario_of_record(run, n, rec), str(run))
        assert r.compared and r.differences == [], rec["agent"]
    result = relabel_run(run)
    assert (result.episodes, result.changed_episodes) == (len(agents) * 6, 0)


def test_replay_names_a_step_of_a_loop_by_its_item(tmp_path: Path, capsys: Any):
    from agentproc.cli import main
    from agentproc.runs import RunWriter, episode_record

    s = instance(three_major)
    checks = looped(s, "verify_owner")
    run = tmp_path / "run.jsonl"
    with RunWriter(run) as w:  # the loop cut short: verify_owner[1] and [2] skipped
        w.write(episode_record(play(s, faithful(s, leave_out=(checks[1].step, checks[2].step)))))
    capsys.readouterr()
    assert main(["replay", str(run), "--json"]) == 0
    replayed = json.loads(capsys.readouterr().out)
    stepped = [lab for lab in replayed["labels"] if lab.get("step") is not None]
    names = {(lab["step_tool"], lab["step_output"]) for lab in stepped}
    steps = {st.step: st for st in s.steps}
    expected = set()
    for lab in stepped:
        st = steps[lab["step"]]
        item = "" if st.loop is None else f"[{st.loop.item}]"
        expected.add((f"{st.name}{item}", st.output.replace(f"__{item[1:-1]}", item)))
    assert names == expected
    assert {("verify_owner[1]", "id_status[1]"), ("verify_owner[2]", "id_status[2]")} <= names


def test_a_variant_on_a_workflow_with_loops_is_refused_in_one_line(tmp_path: Path, capsys: Any):
    from agentproc.cli import main

    suite, out = tmp_path / "suite", tmp_path / "run.jsonl"
    toml = folder("workflows") / "business_verification.toml"
    assert main(["generate", "--workflow", str(toml), "--count", "2", "--out", str(suite)]) == 0
    capsys.readouterr()
    argv = ["run", str(suite), "--agent", "sim:oracle", "--variant", "flaky-tools"]
    assert main([*argv, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "a workflow with loops offers one tool for the steps of each loop" in err
    assert not out.exists()


def test_a_looped_workflows_path_is_named_whatever_its_items():
    # Instances that verify different owners take the same path (the report groups them):
    # each looped step once, without its item.
    path = folder("workflows") / "business_verification.toml"
    wf = load_workflow(path)
    names = {s.path.name for s in workflow_scenarios(wf, path.stem, 40, 0, "paths") if s.path}
    assert names == {
        "base",
        "check_capital",
        "exit:dissolved",
        "verify_owner",
        "verify_owner+check_capital",
    }
    verified = {
        tuple(st.loop.item for st in s.steps if st.name == "verify_owner" and st.required)
        for s in workflow_scenarios(wf, path.stem, 40, 0, "paths")
        if s.path and s.path.name == "verify_owner"
    }
    assert len(verified) > 1  # the owners verified differ within the one path
