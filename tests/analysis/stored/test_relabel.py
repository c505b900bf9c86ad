"""Relabelling a stored run: the current monitor's labels, no tool or model run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentproc.agents.sim import run_sim_episode
from agentproc.analysis import relabel_run
from agentproc.cli import main
from agentproc.errors import RunFileError
from agentproc.procedures import Cell, generate_procedure
from agentproc.runs import RunWriter, episode_record, read_run
from agentproc.workflow import Toolkit, scenario_of


def write_run(path: Path, agents=("sim:wrong_argument", "sim:reordered", "sim:oracle")) -> None:
    with RunWriter(path) as w:
        for i, agent in enumerate(agents):
            s = scenario_of(generate_procedure(Cell(steps=6, lookback=3), 0, i))
            w.write(episode_record(run_sim_episode(s, agent)))


def test_a_run_labelled_by_the_current_monitor_is_unchanged(tmp_path: Path):
    write_run(tmp_path / "r.jsonl")
    result = relabel_run(tmp_path / "r.jsonl")
    assert (result.episodes, result.changed_episodes, result.added, result.removed) == (3, 0, 0, 0)


def test_tampered_labels_are_restored_and_counted(tmp_path: Path):
    write_run(tmp_path / "r.jsonl")
    lines = (tmp_path / "r.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    original = first["labels"]
    first["labels"] = original[1:]  # a label the old monitor missed
    lines[0] = json.dumps(first)
    (tmp_path / "old.jsonl").write_text("\n".join(lines) + "\n")
    result = relabel_run(tmp_path / "old.jsonl", tmp_path / "new.jsonl")
    assert (result.changed_episodes, result.added) == (1, 1)
    records = [rec for _, rec in read_run(tmp_path / "new.jsonl")]
    assert records[0]["labels"] == original
    assert [r["calls"] for r in records] == [r["calls"] for _, r in read_run(tmp_path / "r.jsonl")]


def test_relabelling_executes_no_tool(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    write_run(tmp_path / "r.jsonl")

    def refuse(*a: object, **k: object) -> None:
        raise AssertionError("a tool was executed")

    monkeypatch.setattr(Toolkit, "call", refuse)
    assert relabel_run(tmp_path / "r.jsonl").episodes == 3


def test_the_command_says_how_many_labels_changed(tmp_path: Path, capsys):
    write_run(tmp_path / "r.jsonl")
    assert main(["relabel", str(tmp_path / "r.jsonl")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("relabelled 3 episodes: 0 changed") and "0 verdicts changed" in out


def test_the_command_never_overwrites_without_being_told(tmp_path: Path, capsys):
    write_run(tmp_path / "r.jsonl")
    (tmp_path / "new.jsonl").write_text("keep\n")
    run = str(tmp_path / "r.jsonl")
    assert main(["relabel", run, "--out", str(tmp_path / "new.jsonl")]) == 2
    assert (tmp_path / "new.jsonl").read_text() == "keep\n"
    assert main(["relabel", run, "--out", run]) == 2
    assert "must be a new file" in capsys.readouterr().err
    assert main(["relabel", run, "--out", str(tmp_path / "new.jsonl"), "--overwrite"]) == 0


@pytest.mark.parametrize("enabled", [True, False])
def test_the_garbage_collector_is_paused_while_relabelling_and_restored_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, enabled: bool
):
    import gc

    import agentproc.analysis.stored.relabel as relabel
    from agentproc.runs import collector

    write_run(tmp_path / "r.jsonl")
    seen: list[bool] = []
    collected: list[int] = []
    label = relabel._Labeller.label
    monkeypatch.setattr(
        relabel._Labeller,
        "label",
        lambda self, n, rec: seen.append(gc.isenabled()) or label(self, n, rec),
    )
    monkeypatch.setattr(collector, "COLLECT_EVERY", 2)
    collect = gc.collect
    monkeypatch.setattr(collector.gc, "collect", lambda *a: collected.append(1) or collect(*a))
    (gc.enable if enabled else gc.disable)()
    try:
        relabel_run(tmp_path / "r.jsonl", tmp_path / "new.jsonl")
        assert seen == [False, False, False]  # paused for every episode
        assert collected  # the few cycles are still collected on the way
        assert gc.isenabled() is enabled
        (tmp_path / "bad.jsonl").write_text("not json\n")
        with pytest.raises(RunFileError):
            relabel_run(tmp_path / "bad.jsonl")
        assert gc.isenabled() is enabled  # restored after a failure too
    finally:
        gc.enable()


def test_what_relabelling_kept_is_freed_before_the_collector_runs_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    # Else the first collection after the pause scans every scenario and workflow kept.
    import gc
    import weakref

    import agentproc.analysis.stored.relabel as relabel

    write_run(tmp_path / "r.jsonl")
    stores: list[weakref.ref[Any]] = []

    class Store(relabel.ScenarioStore):
        def __init__(self, *a: Any) -> None:
            super().__init__(*a)
            stores.append(weakref.ref(self))

    alive_at_enable: list[bool] = []
    enable = gc.enable

    def enabled() -> None:
        alive_at_enable.append(any(ref() is not None for ref in stores))
        enable()

    monkeypatch.setattr(relabel, "ScenarioStore", Store)
    monkeypatch.setattr(gc, "enable", enabled)
    relabel_run(tmp_path / "r.jsonl")
    relabel_run(tmp_path / "r.jsonl", tmp_path / "new.jsonl")
    assert len(stores) == 2 and alive_at_enable == [False, False]


def test_trials_repeating_argument_texts_label_as_the_live_monitor_did(tmp_path: Path):
    # Trials of one scenario repeat argument texts; each call's are read again, and every
    # trial gets the labels the live monitor gave it.
    scenarios = [scenario_of(generate_procedure(Cell(steps=8, lookback=3), 0, i)) for i in range(2)]
    with RunWriter(tmp_path / "r.jsonl") as w:
        for trial in range(4):
            for s in scenarios:
                for agent in ("sim:decay", "sim:wrong_argument", "sim:oracle"):
                    ep = run_sim_episode(s, agent, seed=trial)
                    ep.trial = trial
                    w.write(episode_record(ep))
    result = relabel_run(tmp_path / "r.jsonl")
    assert result.episodes == 24 and result.labels_before > 0
    assert (result.changed_episodes, result.added, result.removed) == (0, 0, 0)


def _with_labels(line: str, labels_text: str) -> str:
    """A compact line with its labels array's text replaced, everything else as written."""
    start = line.index(',"labels":[') + len(',"labels":')
    end = line.index('],"', start) + 1
    return line[:start] + labels_text + line[end:]


def test_labels_of_a_compact_line_are_compared_as_labels_not_as_text(tmp_path: Path):
    write_run(tmp_path / "r.jsonl")
    lines = (tmp_path / "r.jsonl").read_text().splitlines()
    recorded = [json.loads(_labels_text(line)) for line in lines]
    assert recorded[0], "the first agent's episode has labels"
    # Spelled otherwise (spaces, keys in another order), the same labels: nothing changed.
    respelled = json.dumps([dict(reversed(lab.items())) for lab in recorded[0]])
    lines[0] = _with_labels(lines[0], respelled)
    # One label left out, as an older monitor might have: one added.
    lines[1] = _with_labels(lines[1], json.dumps(recorded[1][1:], separators=(",", ":")))
    (tmp_path / "old.jsonl").write_text("\n".join(lines) + "\n")
    result = relabel_run(tmp_path / "old.jsonl", tmp_path / "new.jsonl")
    assert (result.changed_episodes, result.added, result.removed) == (1, 1, 0)
    assert result.labels_before == sum(map(len, recorded)) - 1
    assert [rec["labels"] for _, rec in read_run(tmp_path / "new.jsonl")] == recorded


def _labels_text(line: str) -> str:
    start = line.index(',"labels":[') + len(',"labels":')
    return line[start : line.index('],"', start) + 1]


def test_an_unknown_label_kind_on_a_compact_line_names_the_label(tmp_path: Path):
    write_run(tmp_path / "r.jsonl")
    lines = (tmp_path / "r.jsonl").read_text().splitlines()
    lines[1] = _with_labels(lines[1], '[{"kind":"made_up","call_index":0,"step":1}]')
    (tmp_path / "old.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(RunFileError, match=r"line 2: labels\[0\]\.kind.*made_up|made_up.*line 2"):
        relabel_run(tmp_path / "old.jsonl")


def test_relabelling_loads_neither_the_runner_nor_text_mode():
    # ``agentproc relabel`` pays for what it imports on every start: the suite runner,
    # its worker pools, the episode session and text mode's parser are not its.
    import subprocess
    import sys

    unused = [
        "agentproc.runs.runner",
        "agentproc.runs.session",
        "agentproc.runs.parallel",
        "agentproc.labelling.text",
        "agentproc.labelling.text_parse",
        "asyncio",
        "multiprocessing",
        "rich.progress",
    ]
    code = (
        "import sys, agentproc.analysis.stored.relabel; "
        f"print(' '.join(m for m in {unused!r} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == []


def test_an_unchanged_run_relabelled_to_a_file_is_the_same_bytes(tmp_path: Path):
    write_run(tmp_path / "r.jsonl")
    relabel_run(tmp_path / "r.jsonl", tmp_path / "again.jsonl")
    assert (tmp_path / "again.jsonl").read_bytes() == (tmp_path / "r.jsonl").read_bytes()
