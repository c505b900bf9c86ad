"""Aggregation, JSON output and rendering of run-file records."""

from __future__ import annotations

import io
import json
import math
import os
import tracemalloc
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console

from agentproc.agents.sim import SIM_AGENTS, run_sim_episode
from agentproc.analysis.measures.report import CellKey, Report, aggregate
from agentproc.analysis.render.report_json import report_json
from agentproc.analysis.render.report_text import SHORT, render_report
from agentproc.analysis.stats.binomial import wilson
from agentproc.analysis.stats.student_t import t_quantile
from agentproc.errors import ConfigError
from agentproc.labelling import LabelKind
from agentproc.procedures import Cell, generate_procedure
from agentproc.runs import episode_record
from agentproc.workflow import scenario_of

GOLDEN = Path(__file__).parents[2] / "golden"
UPDATE = os.environ.get("AGENTPROC_UPDATE_GOLDEN") == "1"


class Record(dict[str, Any]):
    """A record that can be weakly referenced, to prove aggregation drops it."""


def record(
    agent: str = "model:a",
    steps: int = 5,
    lookback: int = 3,
    verdict: str = "faithful",
    labels: tuple[str, ...] = (),
    final: bool | None = None,
    progress: float = 1.0,
    prefix: int | None = None,
) -> Record:
    """A minimal run-file record with the fields the report reads."""
    first = verdict in ("faithful", "unfaithful_correct")
    cell = f"n{steps}-L{lookback}-r1_10-mixed-decimal"
    return Record(
        agent=agent,
        cell=cell,
        params={"cell": cell, "steps": steps, "lookback": lookback},
        verdict=verdict,
        labels=[{"kind": k, "call_index": i, "step": None} for i, k in enumerate(labels)],
        metrics={
            "verdict": verdict,
            "faithful": verdict == "faithful",
            "first_answer_correct": first,
            "final_answer_correct": first if final is None else final,
            "total_steps": steps,
            "progress_rate": progress,
            "longest_correct_prefix": steps if prefix is None else prefix,
            "first_divergence": (
                {"call_index": 0, "step": min(steps, 1 + (prefix or 0)), "label": labels[0]}
                if labels
                else None
            ),
        },
    )


def sim_records(agents: list[str], count: int = 4) -> Iterator[dict[str, Any]]:
    """Real records: simulated agents on two lengths and two look-backs."""
    for agent in agents:
        for steps in (5, 8):
            for lookback in (1, 3):
                for i in range(count):
                    p = generate_procedure(Cell(steps=steps, lookback=lookback), 0, i)
                    yield episode_record(run_sim_episode(scenario_of(p), agent))


GOLDEN_MIX = {
    # (agent, steps, lookback): (faithful, unfaithful_correct, wrong, no_answer)
    ("model:a", 5, 1): (6, 2, 2, 0),
    ("model:a", 5, 3): (5, 3, 1, 1),
    ("model:a", 10, 1): (3, 3, 3, 1),
    ("model:a", 10, 3): (2, 4, 4, 0),
    ("model:b", 5, 1): (9, 1, 0, 0),
    ("model:b", 5, 3): (8, 1, 1, 0),
    ("model:b", 10, 1): (6, 1, 2, 1),
    ("model:b", 10, 3): (5, 0, 3, 2),
}
GOLDEN_LABELS = {
    "faithful": (),
    "unfaithful_correct": ("repeated_step",),
    "wrong": ("wrong_argument", "wrong_argument", "wrong_answer"),
    "no_answer": ("missing_answer",),
}


def golden_records() -> list[Record]:
    """Two agents, two lengths, two look-backs, four label kinds; fits 120 columns."""
    out = []
    for (agent, steps, lookback), counts in GOLDEN_MIX.items():
        for verdict, count in zip(GOLDEN_LABELS, counts, strict=True):
            for i in range(count):
                prefix = steps if verdict == "faithful" else i % steps
                labels = GOLDEN_LABELS[verdict]
                progress = 1 - i / 10
                out.append(record(agent, steps, lookback, verdict, labels, None, progress, prefix))
    return out


def render(report: Report, width: int = 120) -> str:
    buffer = io.StringIO()
    console = Console(file=buffer, width=width, color_system=None, force_terminal=False)
    render_report(report, console)
    return buffer.getvalue()


# -- aggregation -----------------------------------------------------------------


def test_unfaithful_correct_rate_is_accuracy_minus_faithful_accuracy() -> None:
    report = aggregate(sim_records(["sim:oracle", "sim:decay", "sim:hallucinated_call"]))
    groups = [
        s
        for a in report.agents.values()
        for s in (a.overall, *a.by_length.values(), *a.by_lookback.values(), *a.by_cell.values())
    ]
    for s in groups:
        assert math.isclose(s.unfaithful_correct_rate, s.accuracy - s.faithful_accuracy)
    hallucinating = report.agents["sim:hallucinated_call"].overall
    assert (hallucinating.accuracy, hallucinating.unfaithful_correct_rate) == (1.0, 1.0)


def test_verdicts_counted_and_rates_carry_wilson_intervals() -> None:
    verdicts = ["faithful"] * 5 + ["unfaithful_correct"] * 3 + ["wrong", "no_answer"]
    s = aggregate(record(verdict=v) for v in verdicts).agents["model:a"].overall
    assert s.verdicts == {"faithful": 5, "unfaithful_correct": 3, "wrong": 1, "no_answer": 1}
    assert (s.n, s.first_answer_correct, s.accuracy) == (10, 8, 0.8)
    assert (s.faithful_accuracy, s.rate("faithful_accuracy")[1]) == (0.5, wilson(5, 10))
    assert (s.unfaithful_correct_rate, s.rate("unfaithful_correct_rate")[1]) == (0.3, wilson(3, 10))
    assert s.rate("accuracy")[1] == wilson(8, 10)


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["faithful", "unfaithful_correct", "wrong", "no_answer"]),
            st.sampled_from([5, 10, 25]),
            st.sampled_from([1, 3]),
        ),
        min_size=1,
        max_size=40,
    )
)
def test_every_grouping_partitions_the_episodes(episodes: list[tuple[str, int, int]]) -> None:
    a = aggregate(record(verdict=v, steps=n, lookback=lb) for v, n, lb in episodes).agents[
        "model:a"
    ]
    for groups in (a.by_length, a.by_lookback, a.by_cell):
        for field in ("n", "faithful", "unfaithful_correct", "wrong", "no_answer"):
            total = sum(getattr(s, field) for s in groups.values())
            assert total == getattr(a.overall, field)
    assert sum(a.overall.verdicts.values()) == a.overall.n == len(episodes)


def test_final_accuracy_counts_revised_answers() -> None:
    records = [record(verdict="wrong", final=True), record(verdict="wrong"), record()]
    s = aggregate(records).agents["model:a"].overall
    assert (s.first_answer_correct, s.final_answer_correct) == (1, 2)


def test_progress_and_prefix_are_means_over_episodes() -> None:
    records = [record(steps=4, progress=1.0, prefix=4), record(steps=10, progress=0.5, prefix=2)]
    s = aggregate(records).agents["model:a"].overall
    assert (s.progress_rate, s.prefix_rate) == (0.75, 0.6)


def test_labels_counted_per_kind_and_per_episode() -> None:
    records = [
        record(verdict="wrong", labels=("wrong_argument",) * 3 + ("wrong_answer",)),
        record(verdict="unfaithful_correct", labels=("wrong_argument",)),
        record(),
    ]
    s = aggregate(records).agents["model:a"].overall
    assert list(s.label_counts) == list(LabelKind)
    assert s.label_counts[LabelKind.WRONG_ARGUMENT] == 4
    assert s.episodes_with_label[LabelKind.WRONG_ARGUMENT] == 2
    assert s.label_counts[LabelKind.WRONG_ANSWER] == 1
    assert s.episodes_with_label[LabelKind.WRONG_ANSWER] == 1
    assert sum(s.label_counts.values()) == 5
    assert s.episodes_with_label[LabelKind.SKIPPED_STEP] == 0


def test_groups_by_length_and_lookback() -> None:
    records = [
        record(steps=10, lookback=3),
        record(steps=5, lookback=3, verdict="wrong"),
        record(steps=10, lookback=1),
        record(steps=5, lookback=1),
        record(steps=10, lookback=3, verdict="wrong"),
    ]
    a = aggregate(records).agents["model:a"]
    assert {k: s.n for k, s in a.by_length.items()} == {5: 2, 10: 3}
    assert list(a.by_length) == [5, 10]
    assert {k: s.n for k, s in a.by_lookback.items()} == {1: 2, 3: 3}
    assert list(a.by_lookback) == [1, 3]
    assert a.by_length[10].accuracy == pytest.approx(2 / 3)
    assert a.overall.n == 5


def test_cells_are_ordered_by_steps_then_lookback_not_by_id() -> None:
    records = [record(steps=s, lookback=lb) for s, lb in ((10, 1), (5, 3), (10, 3), (5, 1))]
    cells = list(aggregate(records).agents["model:a"].by_cell)
    assert cells == [
        CellKey(5, 1, "n5-L1-r1_10-mixed-decimal"),
        CellKey(5, 3, "n5-L3-r1_10-mixed-decimal"),
        CellKey(10, 1, "n10-L1-r1_10-mixed-decimal"),
        CellKey(10, 3, "n10-L3-r1_10-mixed-decimal"),
    ]


def test_agents_are_reported_separately() -> None:
    records = [record("z:last"), record("a:first", verdict="wrong"), record("z:last")]
    report = aggregate(records)
    assert list(report.agents) == ["a:first", "z:last"]
    assert report.agents["a:first"].overall.n == 1
    assert report.agents["a:first"].overall.accuracy == 0.0
    assert report.agents["z:last"].overall.n == 2
    assert report.agents["z:last"].overall.accuracy == 1.0
    assert report.episodes == 3


def test_unknown_label_kind_is_a_config_error_listing_the_kinds() -> None:
    with pytest.raises(ConfigError, match=r"unknown label kind 'typo' .*hallucinated_call"):
        aggregate([record(labels=("typo",))])


def test_unknown_verdict_is_a_config_error_listing_the_verdicts() -> None:
    with pytest.raises(ConfigError, match=r"unknown verdict 'maybe' .*unfaithful_correct"):
        aggregate([record(verdict="maybe")])


def test_aggregate_does_not_keep_records() -> None:
    watched: list[weakref.ref[Record]] = []

    def stream() -> Iterator[Record]:
        for i in range(100_000):
            rec = record(steps=5 + i % 3, verdict="wrong" if i % 4 else "faithful")
            if i % 10_000 == 0:
                watched.append(weakref.ref(rec))
            yield rec

    report = aggregate(stream())
    assert report.agents["model:a"].overall.n == 100_000
    assert report.agents["model:a"].overall.faithful == 25_000
    assert [k for k in report.agents["model:a"].by_length] == [5, 6, 7]
    assert all(ref() is None for ref in watched)


def test_aggregate_memory_stays_flat_as_records_stream() -> None:
    tracemalloc.start()
    try:
        aggregate(record(verdict="wrong", labels=("wrong_answer",)) for _ in range(20_000))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 256 * 1024  # keeping 20,000 records would take megabytes


def test_empty_input_gives_an_empty_report() -> None:
    report = aggregate([])
    assert (report.agents, report.episodes) == ({}, 0)


# -- JSON ------------------------------------------------------------------------


def test_json_report_shape() -> None:
    data = report_json(aggregate(golden_records()))
    assert json.loads(json.dumps(data)) == data
    assert data["episodes"] == 80
    assert list(data["agents"]) == ["model:a", "model:b"]
    agent = data["agents"]["model:a"]
    assert list(agent) == [
        "overall",
        "errors",
        "tokens",
        "by_length",
        "by_lookback",
        "by_range",
        "by_ops",
        "by_mode",
        "by_cell",
        "by_sweep",
        "per_step",
        "self_conditioning",
    ]
    assert agent["by_sweep"] == {}  # these records name no sweep
    assert [g["steps"] for g in agent["by_length"]] == [5, 10]
    assert [g["lookback"] for g in agent["by_lookback"]] == [1, 3]
    first_cell = agent["by_cell"][0]
    assert (first_cell["cell"], first_cell["steps"], first_cell["lookback"]) == (
        "n5-L1-r1_10-mixed-decimal",
        5,
        1,
    )
    overall = agent["overall"]
    assert overall["n"] == 40
    assert overall["verdicts"] == {
        "faithful": 16,
        "unfaithful_correct": 12,
        "wrong": 10,
        "no_answer": 2,
    }
    assert (overall["accuracy"], overall["faithful_accuracy"]) == (0.7, 0.4)
    assert overall["accuracy_ci"] == [0.5457, 0.8193]
    assert (overall["unfaithful_correct_rate"], overall["final_accuracy"]) == (0.3, 0.7)
    assert list(overall["label_counts"]) == [k.value for k in LabelKind]
    assert overall["label_counts"]["wrong_argument"] == 20
    assert overall["episodes_with_label"]["wrong_argument"] == 10


def test_json_floats_are_rounded_to_four_decimals() -> None:
    data = report_json(aggregate([record(), record(verdict="wrong"), record(verdict="wrong")]))
    overall = data["agents"]["model:a"]["overall"]
    assert overall["accuracy"] == 0.3333
    assert overall["accuracy_ci"] == [0.0615, 0.7923]


# -- rendering -------------------------------------------------------------------


def check_golden(text: str, name: str) -> None:
    """Compare with ``tests/golden/<name>``; ``AGENTPROC_UPDATE_GOLDEN=1`` rewrites it."""
    path = GOLDEN / name
    if UPDATE:
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8")


def test_rendered_tables_match_golden() -> None:
    check_golden(render(aggregate(golden_records())), "report_tables.txt")


def test_rendered_tables_too_wide_for_labels_match_golden() -> None:
    check_golden(render(aggregate(golden_records()), width=100), "report_tables_narrow.txt")


def test_label_columns_only_for_kinds_that_occur() -> None:
    text = render(aggregate([record(verdict="wrong", labels=("skipped_step",)), record("model:b")]))
    header = "".join(line for line in text.splitlines() if "┃" in line)
    assert "skipped" in header
    others = [short for kind, short in SHORT.items() if kind != LabelKind.SKIPPED_STEP]
    assert not [short for short in others if short in header]


def test_label_counts_get_their_own_table_when_columns_do_not_fit() -> None:
    text = render(aggregate([record(verdict="wrong", labels=tuple(LabelKind))]))
    lines = text.splitlines()
    assert "all episodes: labels" in lines  # one cell: no knob varies
    assert max(len(line) for line in lines) <= 120
    assert "…" not in text
    assert all(short in text for short in SHORT.values())


def test_real_records_render_within_120_columns() -> None:
    text = render(aggregate(sim_records(list(SIM_AGENTS), count=1)))
    assert max(len(line) for line in text.splitlines()) <= 120
    assert "…" not in text


def test_empty_report_renders_a_single_line() -> None:
    assert render(aggregate([])) == "no episodes\n"


# -- causes, first divergence, sweeps ----------------------------------------------


def with_labels(rec: Record, labels: list[dict[str, Any]], divergence: Any = None) -> Record:
    rec["labels"] = labels
    rec["metrics"]["first_divergence"] = divergence
    return rec


def wrong_arg(cause: str | None) -> dict[str, Any]:
    return {"kind": "wrong_argument", "call_index": 0, "step": 1, "cause": cause}


def test_wrong_argument_is_split_into_carried_forward_and_new_mistakes_by_cause() -> None:
    recs = [
        with_labels(record(verdict="wrong"), [wrong_arg("other")] + [wrong_arg("propagated")] * 4),
        with_labels(
            record(verdict="wrong"), [wrong_arg("lookback_confusion"), wrong_arg("propagated")]
        ),
    ]
    s = aggregate(recs).agents["model:a"].overall
    assert s.wrong_argument_causes == {"propagated": 5, "other": 1, "lookback_confusion": 1}
    assert s.slips == 2
    text = render(aggregate(recs))
    assert (
        "wrong_argument 7: 5 carried forward (propagated) from 2 new mistakes "
        "(other 1, lookback_confusion 1)" in text
    )


def test_first_divergence_counts_labels_steps_median_and_position() -> None:
    div = [("wrong_argument", 2), ("wrong_argument", 4), ("skipped_step", 5)]
    recs = [
        with_labels(
            record(steps=10, verdict="wrong"),
            [wrong_arg("other")],
            {"call_index": 0, "step": st, "label": lab},
        )
        for lab, st in div
    ]
    recs.append(record(steps=10))
    s = aggregate(recs).agents["model:a"].overall
    assert (s.diverged, s.divergence_labels) == (3, {"wrong_argument": 2, "skipped_step": 1})
    assert s.divergence_steps == {2: 1, 4: 1, 5: 1}
    assert s.divergence_median_step == 4
    assert s.divergence_position == pytest.approx((1 + 3 + 4) / 30)
    first = report_json(aggregate(recs))["agents"]["model:a"]["overall"]["first_divergence"]
    assert first["episodes"] == 3 and first["median_step"] == 4 and first["rate"] == 0.75
    assert "first divergence: 3 of 4 episodes left the procedure" in render(aggregate(recs))


def in_sweeps(rec: Record, *sweeps: str, **params: Any) -> Record:
    rec["params"].update(params, sweeps=list(sweeps))
    return rec


def sweep_records() -> list[Record]:
    recs = [in_sweeps(record(steps=n), "length") for n in (5, 10, 15)]
    recs += [in_sweeps(record(steps=n, lookback=lb), "lookback") for n in (5, 10) for lb in (1, 7)]
    recs.append(in_sweeps(record(steps=5, lookback=3), "length", "lookback"))
    return recs


def test_episodes_are_grouped_per_sweep_by_every_knob() -> None:
    a = aggregate(sweep_records()).agents["model:a"]
    assert list(a.by_sweep) == ["length", "lookback"]
    assert [k[:2] for k in a.by_sweep["length"]] == [(5, 3), (10, 3), (15, 3)]
    assert a.by_sweep["length"][(5, 3, "?", "?", "?")].n == 2  # the cell both sweeps list
    assert [k[:2] for k in a.by_sweep["lookback"]] == [(5, 1), (5, 3), (5, 7), (10, 1), (10, 7)]


def test_each_sweep_gets_tables_keyed_by_the_knobs_varying_in_it() -> None:
    text = render(aggregate(sweep_records()), width=160)
    lines = text.splitlines()
    assert "sweep length: by length" in lines
    assert "sweep lookback: by length and look-back" in lines
    assert "by length" not in lines  # pooled tables are replaced by the sweeps'
    lookback = text[text.index("sweep lookback: by length and look-back") :].split("└")[0]
    header = [line for line in lookback.splitlines() if "┃" in line][1]
    assert header.split("┃")[1:5] == ["  N ", " L ", " dist ", " n "]
    rows = [line.split("│")[1:3] for line in lookback.splitlines() if line.startswith("│")]
    keys = [(n.strip(), lb.strip()) for n, lb in rows if n.strip()]
    assert keys == [("5", "1"), ("5", "3"), ("5", "7"), ("10", "1"), ("10", "7")]


def test_one_sweep_only_keeps_the_tables_by_knob() -> None:
    recs = [in_sweeps(record(steps=n), "block 1") for n in (5, 10)]
    assert "by length" in render(aggregate(recs)).splitlines()


def test_several_agents_share_one_table_with_a_column_group_each() -> None:
    text = render(aggregate(golden_records()))
    table = text[text.index("by length\n") :].split("by length: labels")[0]
    assert "model:a" in table and "model:b" in table


def test_the_legend_explains_every_header_the_tables_use() -> None:
    text = render(aggregate([record(verdict="wrong", labels=tuple(LabelKind))]), width=200)
    legend = text[text.index("\nlegend\n") :]
    for header in [
        *SHORT.values(),
        "first-answer acc",
        "faithful acc",
        "unfaithful-correct",
        "[a-b]",
    ]:
        assert f"  {header}: " in legend, header
    for header in (
        "exact-step",
        "under-exec",
        "over-exec",
        "no-answer",
        "early-answer",
        "self-corr",
    ):
        assert f"  {header}: " in legend, header


def test_ranges_sort_by_value_not_as_text() -> None:
    recs = [record() for _ in range(3)]
    for rec, rng in zip(recs, ([10, 100], [1, 10], [0, 1]), strict=True):
        rec["params"]["range"] = rng
    assert list(aggregate(recs).agents["model:a"].by_knob["range"]) == ["0:1", "1:10", "10:100"]


# -- trials and empty groups ----------------------------------------------------------


def trial_records(scenarios: int, trials: int) -> list[Record]:
    """Each scenario right on every trial or on none: the trials are copies."""
    out = []
    for i in range(scenarios):
        for t in range(trials):
            rec = record(verdict="faithful" if i % 2 else "wrong")
            rec["scenario_id"], rec["trial"] = f"s{i}", t
            out.append(rec)
    return out


def test_intervals_with_trials_are_on_the_effective_number_of_episodes() -> None:
    s = aggregate(trial_records(10, 10)).agents["model:a"].overall
    assert (s.n, s.scenarios, s.trials) == (100, 10, 10.0)
    assert s.design_effects["faithful"] == pytest.approx(10.0)
    ten = wilson(5, 10, t_quantile(9))  # ten scenarios' worth, with Student's t on 9 df
    assert s.rate("faithful_accuracy")[1] == pytest.approx(ten)  # not wilson(50, 100)
    cell = next(iter(aggregate(trial_records(10, 10)).agents["model:a"].by_cell.values()))
    assert cell.rate("faithful_accuracy")[1] == pytest.approx(ten)


def test_study_measure_and_divergence_intervals_with_trials_carry_the_design_effect() -> None:
    out = []
    for i in range(10):
        for t in range(10):  # trials are copies: half the scenarios finish early every time
            rec = record(verdict="wrong", labels=("premature_finish",)) if i % 2 else record()
            rec["scenario_id"], rec["trial"] = f"s{i}", t
            out.append(rec)
    report = aggregate(out)
    s = report.agents["model:a"].overall
    assert s.design_effects["premature_answer_rate"] == pytest.approx(10.0)
    ten = wilson(5, 10, t_quantile(9))
    assert s.rate("premature_answer_rate") == (0.5, pytest.approx(ten))
    assert s.diverged_ci == pytest.approx(ten)  # not wilson(50, 100)
    low, high = ten
    overall = report_json(report)["agents"]["model:a"]["overall"]
    assert overall["premature_answer_ci"] == pytest.approx([low, high], abs=1e-4)
    assert f"{100 * low:.0f}" in render(report).split("first divergence:")[1].split("\n")[0]


def test_one_trial_per_scenario_keeps_the_plain_wilson_interval() -> None:
    s = aggregate(trial_records(20, 1)).agents["model:a"].overall
    assert s.design_effects == {} and s.rate("faithful_accuracy")[1] == wilson(10, 20)


def test_scenarios_and_trials_are_stated_in_the_report() -> None:
    report = aggregate(trial_records(10, 3))
    assert "(10 scenarios x 3 trials; intervals on n / design effect" in render(report)
    data = report_json(report)["agents"]["model:a"]["overall"]
    assert (data["scenarios"], data["trials"], data["design_effects"]["faithful"]) == (10, 3, 3.0)


def test_no_scored_episode_shows_no_figure_not_zero() -> None:
    rec = record()
    rec["stop_reason"], rec["error"] = "error", {"kind": "endpoint", "message": "down"}
    report = aggregate([rec])
    text = render(report)
    assert "first-answer acc \N{EN DASH}" in text and "0.000 [0.00-1.00]" not in text
    overall = report_json(report)["agents"]["model:a"]["overall"]
    assert overall["accuracy"] is None and overall["accuracy_ci"] is None
    assert overall["faithful_accuracy"] is None


def _long_named() -> list[Record]:
    records = golden_records()
    for r in records:
        r["agent"] = "my_agents/react.py:make_agent" if r["agent"] == "model:a" else "sim:decay"
    return records


@pytest.mark.parametrize("width", [80, 60])
def test_execution_measures_are_split_never_dropped_when_one_agent_is_too_wide(width: int) -> None:
    text = render(aggregate(_long_named()), width=width)
    assert all(len(line) <= width for line in text.splitlines())
    study = text.split("execution measures by length")[1:]
    assert study and "self-corr" in "".join(study).split("legend")[0]
    assert "my_agents/react.py:make_agent" in "".join(study)


def test_a_table_not_even_one_column_of_which_fits_is_stacked_whole() -> None:
    text = render(aggregate(_long_named()), width=36)
    assert all(len(line) <= 36 for line in text.splitlines()) and "…" not in text
    title = "execution measures by length:\n  my_agents/react.py:make_agent\n"
    block = text.split(title)[1]
    assert block.splitlines()[:3] == ["N: 5", "  n: 20", "  exact-step: 75% [53-89]"]


def realised(rec: Record, distance: int) -> Record:
    rec["params"]["realised_lookback"] = distance
    return rec


def test_each_look_back_group_carries_the_farthest_and_mean_realised_distance() -> None:
    recs = [realised(record(lookback=1), 1), realised(record(lookback=1), 1)]
    recs += [realised(record(lookback=3), d) for d in (2, 3, 3)]
    a = aggregate(recs).agents["model:a"]
    assert (a.by_lookback[1].realised_max, a.by_lookback[1].realised_mean) == (1, 1.0)
    assert a.by_lookback[3].realised_lookbacks == {2: 1, 3: 2}
    data = report_json(aggregate(recs))["agents"]["model:a"]
    assert [r["realised"] for r in data["by_lookback"]] == [
        {"max": 1, "mean": 1.0},
        {"max": 3, "mean": 2.6667},
    ]
    assert [r["realised"]["max"] for r in data["by_cell"]] == [1, 3]
    assert "realised" not in data["overall"] and "realised" not in data["by_length"][0]


def test_a_look_back_table_shows_the_realised_distance_beside_l() -> None:
    recs = [realised(record(lookback=1), 1), realised(record(steps=9, lookback=3), 2)]
    recs.append(realised(record(agent="model:b", lookback=3), 3))
    text = render(aggregate(recs), width=160)  # both agents side by side in one table
    table = text[text.index("by look-back") :].split("└")[0]
    header = [line for line in table.splitlines() if "┃" in line][-1]
    assert [c.strip() for c in header.split("┃")[1:3]] == ["L", "dist"]
    rows = [line.split("│")[1:3] for line in table.splitlines() if line.startswith("│")]
    # the row's farthest over every agent in the table
    assert [(lb.strip(), d.strip()) for lb, d in rows if lb.strip()] == [
        ("1", "1"),
        ("3", "3"),
        ("all", "3"),
    ]
    assert "dist: the realised look-back" in text
    length = text[text.index("by length") :].split("└")[0]
    assert "dist" not in length  # only where results are broken down by look-back


def test_records_without_the_realised_distance_show_a_dash_not_a_failure() -> None:
    recs = [record(lookback=1), record(lookback=3)]  # written before it was recorded
    text = render(aggregate(recs))
    table = text[text.index("by look-back") :].split("└")[0]
    rows = [line.split("│")[1:3] for line in table.splitlines() if line.startswith("│")]
    assert [(lb.strip(), d.strip()) for lb, d in rows if lb.strip()] == [
        ("1", "-"),
        ("3", "-"),
        ("all", "-"),
    ]
    data = report_json(aggregate(recs))["agents"]["model:a"]
    assert [r["realised"] for r in (*data["by_lookback"], *data["by_cell"])] == [None] * 4


def test_sweep_rows_carry_the_realised_distance() -> None:
    recs = [realised(r, r["params"]["lookback"]) for r in sweep_records()]
    data = report_json(aggregate(recs))["agents"]["model:a"]["by_sweep"]["lookback"]
    assert [(r["lookback"], r["realised"]["max"]) for r in data] == [
        (1, 1),
        (3, 3),
        (7, 7),
        (1, 1),
        (7, 7),
    ]
    text = render(aggregate(recs), width=160)
    sweep = text[text.index("sweep lookback") :].split("└")[0]
    rows = [line.split("│")[1:4] for line in sweep.splitlines() if line.startswith("│")]
    assert [(lb.strip(), d.strip()) for _, lb, d in rows if lb.strip()][:3] == [
        ("1", "1"),
        ("3", "3"),
        ("7", "7"),
    ]


# -- the procedure horizon -----------------------------------------------------------


def horizon_records(p: float, lookback: int = 3) -> list[Record]:
    """Scenarios of 5 to 80 steps, faithful with (1 - p) ** steps (an exact share of 20)."""
    out = []
    for steps in (5, 10, 20, 40, 80):
        ok = round(20 * (1 - p) ** steps)
        for i in range(20):
            rec = record(steps=steps, lookback=lookback, verdict="faithful" if i < ok else "wrong")
            rec["scenario_id"] = f"n{steps}-L{lookback}-{i}"
            out.append(rec)
    return out


def test_the_report_gives_the_horizon_of_each_measure_and_per_lookback() -> None:
    report = aggregate(horizon_records(0.02, 1) + horizon_records(0.05, 3))
    a = report.agents["model:a"]
    assert a.horizon is not None and set(a.horizon_by_lookback) == {1, 3}
    one, three = (a.horizon_by_lookback[lb].of["faithful"][0] for lb in (1, 3))
    assert one.steps == pytest.approx(34.3, rel=0.15)  # log 0.5 / log 0.98
    assert three.steps == pytest.approx(13.5, rel=0.15)  # log 0.5 / log 0.95
    data = report_json(report)["agents"]["model:a"]["horizon"]
    assert set(data) == {"faithful", "first_answer", "by_lookback"}
    assert data["faithful"]["50"]["text"] == a.horizon.of["faithful"][0].text()
    assert [g["lookback"] for g in data["by_lookback"]] == [1, 3]
    text = render(report)
    assert "  faithful horizon: 50%: " in text and "; 80%: " in text
    assert "  faithful 50% horizon by look-back: 1: " in text


def test_after_a_pre_fill_the_horizon_is_over_the_steps_the_agent_ran_itself() -> None:
    plain = aggregate(horizon_records(0.02)).agents["model:a"].horizon
    records = horizon_records(0.02)
    for rec in records:  # the same outcomes, each procedure 10 steps longer, pre-filled
        rec["params"]["steps"] += 10
        rec["metrics"]["given_steps"] = 10
    given = aggregate(records).agents["model:a"].horizon
    assert plain is not None and given is not None
    assert given.of["faithful"][0].steps == pytest.approx(plain.of["faithful"][0].steps)


def test_a_run_of_one_length_has_no_horizon_and_its_report_is_unchanged() -> None:
    records = [rec for rec in horizon_records(0.02) if rec["params"]["steps"] == 20]
    report = aggregate(records)
    assert report.agents["model:a"].horizon is None
    assert "horizon" not in render(report)
    assert "horizon" not in report_json(report)["agents"]["model:a"]


def test_a_horizon_out_of_the_tested_lengths_is_never_a_figure() -> None:
    # faithful on every procedure up to 80 steps: beyond the longest, no number
    records = horizon_records(0.0)
    h = aggregate(records).agents["model:a"].horizon
    assert h is not None
    fifty = h.of["faithful"][0]
    assert (fifty.steps, fifty.beyond) == (None, True)
    assert fifty.text().startswith("beyond 80 (the longest tested)")
