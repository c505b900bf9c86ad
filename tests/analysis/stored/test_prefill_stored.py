"""A run under a pre-fill, stored: relabel and replay reproduce it (the pre-filled calls
given, the agent judged against the state they left), and report places the first
divergence in the agent's own part."""

from __future__ import annotations

from helpers import cli, records

from agentproc.analysis.measures.report import aggregate
from agentproc.analysis.stored.relabel import label_record
from agentproc.cli import main


def run(tmp_path, agent: str = "sim:selfcond"):
    suite, out = tmp_path / "s", tmp_path / "run.jsonl"
    assert (
        main(
            ["generate", "--steps", "6,12", "--lookback", "2", "--count", "5", "--out", str(suite)]
        )
        == 0
    )
    argv = ["run", str(suite), "--agent", agent, "--variant", "prefill-wrong-50", "--trials", "2"]
    assert main([*argv, "--out", str(out)]) == 0
    return out


def test_relabel_gives_the_recorded_labels_and_metrics(tmp_path, capsys):
    out = run(tmp_path)
    code, text, _ = cli(capsys, "relabel", out, "--out", tmp_path / "again.jsonl")
    assert code == 0 and "0 changed" in text
    for rec in records(out):
        labels, metrics = label_record(rec)
        assert [lab.to_json() for lab in labels] == rec["labels"] and metrics == rec["metrics"]
        assert metrics["given_steps"] in (3, 6)


def test_relabel_without_the_prefill_would_label_the_given_calls(tmp_path):
    rec = next(r for r in records(run(tmp_path)) if r["labels"])
    bare = {**rec, "variant_spec": {"name": "x"}, "variant": "x"}
    labels, metrics = label_record(bare)
    assert "given_steps" not in metrics and [lab.to_json() for lab in labels] != rec["labels"]


def test_replay_finds_no_difference(tmp_path, capsys):
    out = run(tmp_path)
    code, text, _ = cli(capsys, "replay", out)
    assert code == 0 and "0 differ from the recording" in text


def test_report_places_the_divergence_in_the_agents_own_part(tmp_path):
    recs = records(run(tmp_path))
    where = []
    for r in recs:
        m, div = r["metrics"], r["metrics"]["first_divergence"]
        if div is not None:  # its own step, counted from the first after the pre-fill
            step = div["step"] - m["given_steps"] if div["step"] is not None else None
            own = m["total_steps"]
            where.append(min((own + 1 if step is None else step) - 1, own) / own)
    assert where
    (stats,) = [a.overall for a in aggregate(recs).agents.values()]
    assert stats.divergence_position == sum(where) / len(where)
    assert max(stats.divergence_steps) <= 7  # own steps: at most 6, then the answer


def test_the_whole_view_marks_the_given_calls(tmp_path):
    for rec in records(run(tmp_path, "sim:oracle")):
        k = rec["metrics"]["given_steps"]
        assert [c.get("given", False) for c in rec["calls"]] == [True] * k + [False] * (
            len(rec["calls"]) - k
        )


def test_the_timeline_says_which_calls_were_given_and_the_answer_after_them(tmp_path, capsys):
    out = run(tmp_path, "sim:oracle")
    rec = records(out)[0]
    code, text, _ = cli(capsys, "replay", out, "--episode", rec["scenario_id"])
    assert code == 0
    k = rec["metrics"]["given_steps"]
    assert f"calls 0 to {k - 1}: pre-filled steps 1 to {k}, given" in text
    assert f"expected {rec['metrics']['first_answer']} after the pre-fill" in text
