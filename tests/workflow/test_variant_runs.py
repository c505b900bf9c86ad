"""Episodes under a variant: records, replay and relabel, today's bytes, and sim:decay's
known effect under prose rendering."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from agentproc.agents.sim import run_sim_episode
from agentproc.agents.sim.faults import PROSE_SKIP
from agentproc.analysis import relabel_run, replay_record
from agentproc.errors import ConfigError
from agentproc.labelling import LabelKind
from agentproc.procedures import Cell, generate_procedure
from agentproc.runs import EpisodeSession, RunWriter, episode_record, scenario_of_record
from agentproc.runs.layout import line_of
from agentproc.workflow import scenario_of
from agentproc.workflow.variant import DEFAULT_VARIANT, Variant, load_variant

ROOT = Path(__file__).resolve().parents[2]
VARIANTS = [
    "calculator",
    "shuffled",
    "random-names",
    "descriptive-names",
    "scrambled-names",
    "distractors",
    "flaky-tools",
    "feedback",
    "prose",
    "checklist",
]


def scenarios(steps: int = 6, lookback: int = 3, count: int = 6):
    return [
        scenario_of(generate_procedure(Cell(steps=steps, lookback=lookback), 0, i))
        for i in range(count)
    ]


def test_the_default_variant_leaves_every_recorded_byte_as_it_was():
    for s in scenarios():
        for agent in ("sim:decay", "sim:wrong_argument", "sim:reordered"):
            today = json.dumps(episode_record(run_sim_episode(s, agent)))
            named = json.dumps(episode_record(run_sim_episode(s, agent, variant=DEFAULT_VARIANT)))
            assert named == today


@pytest.mark.parametrize("name", VARIANTS)
def test_a_run_under_a_variant_records_it_replays_and_relabels_to_the_same_labels(tmp_path, name):
    variant = load_variant(name)
    schema = json.loads((ROOT / "schemas" / "run.schema.json").read_text(encoding="utf-8"))
    validator = Draft202012Validator(schema)
    path = tmp_path / "run.jsonl"
    with RunWriter(path) as writer:
        for s in scenarios(steps=8, count=4):
            for agent in ("sim:decay", "sim:wrong_argument", "sim:skipped_step"):
                ep = run_sim_episode(s, agent, variant=variant)
                if variant.guard is None:  # the injected truth assumes nothing is refused
                    truth = {lab.key() for lab in ep.injected or []}
                    assert {lab.key() for lab in ep.labels} == truth
                rec = json.loads(json.dumps(episode_record(ep)))
                assert rec["variant"] == name and rec["variant_spec"] == variant.spec()
                assert [e.message for e in validator.iter_errors(json.loads(line_of(rec)))] == []
                replay = replay_record(rec, scenario_of_record(path, 1, rec), "run")
                assert replay.differences == []
                writer.write(rec)
    result = relabel_run(path)
    assert result.episodes == 12 and result.changed_episodes == 0


def test_the_agent_is_shown_the_variant_and_the_record_keeps_the_original_scenario():
    s = scenarios(count=1)[0]
    variant = load_variant("random-names")
    session = EpisodeSession(s, "me", variant=variant)
    assert session.presented is not None
    shown = session.presented.names
    assert (
        shown["S3"] in session.messages[1]["content"] and "S3" not in session.messages[1]["content"]
    )
    assert {t["function"]["name"] for t in session.tools} == {st.name for st in s.steps} | {
        "submit_answer"
    }
    ep = session.finish("no_tool_call")
    assert ep.scenario == s and ep.variant == "random-names"


def test_text_mode_takes_only_a_variant_that_changes_nothing():
    s = scenarios(count=1)[0]
    EpisodeSession(s, "me", mode="text", variant=Variant(name="same"))
    with pytest.raises(ConfigError, match="text mode takes only variants that change nothing"):
        EpisodeSession(s, "me", mode="text", variant=load_variant("prose"))


def test_a_variant_guard_overrides_the_run_guard_and_is_recorded():
    s = scenarios(count=1)[0]
    ep = run_sim_episode(s, "sim:reordered", variant=load_variant("feedback"))
    assert ep.guard == "feedback"
    refused = [c for c in ep.calls if c.refused == "dependency"]
    assert all("The next step is step" in c.result for c in refused)


def test_decay_under_prose_skips_more_and_nothing_else_changes():
    """The known effect for comparisons: per step that does not slip, an extra skip with
    probability PROSE_SKIP, so faithful accuracy falls to about (1 - p)^N of itself; an
    episode without an extra skip is the same episode, and a skipped step is computed in
    the head, so no right first answer turns wrong."""
    pool = scenarios(steps=5, lookback=1, count=300)
    numbered = [run_sim_episode(s, "sim:decay") for s in pool]
    prose = [run_sim_episode(s, "sim:decay", variant=load_variant("prose")) for s in pool]
    terse = [run_sim_episode(s, "sim:decay", variant=load_variant("terse")) for s in pool]
    for a, b in zip(numbered, prose, strict=True):
        skips = {lab.step for lab in b.labels if lab.kind is LabelKind.SKIPPED_STEP}
        if skips == {lab.step for lab in a.labels if lab.kind is LabelKind.SKIPPED_STEP}:
            assert b.labels == a.labels  # no extra skip: the very same episode
        assert b.metrics["first_answer_correct"] >= a.metrics["first_answer_correct"]
    assert [e.labels for e in terse] == [e.labels for e in numbered]  # a prompt style: none
    faithful = sum(e.metrics["faithful"] for e in numbered)
    lost = faithful - sum(e.metrics["faithful"] for e in prose)
    expected = faithful * (1 - (1 - PROSE_SKIP) ** 5)
    assert abs(lost - expected) < 4 * (expected**0.5)
    assert any(lab.kind is LabelKind.SKIPPED_STEP for e in prose for lab in e.labels)
