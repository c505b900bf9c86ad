"""Text mode through a real OpenAI-compatible loopback server, then replay and report."""

from __future__ import annotations

import json
from pathlib import Path

from agentproc import Cell, generate_procedure, scenario_of
from agentproc.cli import main
from tests.fakes.openai_server import ScriptedServer


def work(scenario, skip: int | None = None, answer=None) -> str:
    lines = [f"{s.output} = {s.value}" for s in scenario.steps if s.step != skip]
    return (
        "Here is my work:\n"
        + "\n".join(lines)
        + f"\nAnswer: {scenario.answer if answer is None else answer}"
    )


def test_text_mode_run_labels_the_reply_and_replay_agrees(tmp_path: Path, capsys):
    s = scenario_of(generate_procedure(Cell(steps=6, lookback=3), 0, 0))
    (tmp_path / "s.jsonl").write_text(json.dumps(s.model_dump(mode="json")) + "\n")
    with ScriptedServer([{"content": work(s, skip=3)}]) as srv:
        code = main(
            [
                "run",
                str(tmp_path / "s.jsonl"),
                "--agent",
                "openai:fake",
                "--base-url",
                srv.base_url,
                "--mode",
                "text",
                "--out",
                str(tmp_path / "run.jsonl"),
            ]
        )
        request = srv.completions[0].body
    assert code == 0 and "tools" not in request
    assert "Answer:" in request["messages"][-1]["content"]
    rec = json.loads((tmp_path / "run.jsonl").read_text())
    assert rec["mode"] == "text" and rec["output"].startswith("Here is my work")
    assert rec["calls"] == [] and rec["verdict"] == "unfaithful_correct"
    assert [lab["kind"] for lab in rec["labels"]] == ["skipped_step"] and rec["labels"][0][
        "step"
    ] == 3
    capsys.readouterr()
    assert main(["replay", str(tmp_path / "run.jsonl"), "--episode", s.id, "--json"]) == 0
    replay = json.loads(capsys.readouterr().out)
    assert replay["differences"] == [] and replay["mode"] == "text" and len(replay["entries"]) == 6
    assert main(["report", str(tmp_path / "run.jsonl"), "--json"]) == 0


def test_text_mode_premature_answer_and_revision(tmp_path: Path, capsys):
    s = scenario_of(generate_procedure(Cell(steps=4, lookback=2), 0, 1))
    text = f"{s.steps[0].output} = {s.steps[0].value}\nAnswer: {s.steps[0].value}\n" + work(s)
    (tmp_path / "s.json").write_text(json.dumps(s.model_dump(mode="json")))
    with ScriptedServer([{"content": text}]) as srv:
        main(
            [
                "run",
                str(tmp_path / "s.json"),
                "--agent",
                "openai:fake",
                "--base-url",
                srv.base_url,
                "--mode",
                "text",
                "--out",
                str(tmp_path / "run.jsonl"),
            ]
        )
    kinds = [lab["kind"] for lab in json.loads((tmp_path / "run.jsonl").read_text())["labels"]]
    assert "premature_finish" in kinds and "answer_revised" in kinds and "repeated_step" in kinds


def test_report_keeps_text_mode_apart_from_tool_mode_for_the_same_agent(tmp_path: Path, capsys):
    s = scenario_of(generate_procedure(Cell(steps=3, lookback=2), 0, 0))
    (tmp_path / "s.json").write_text(json.dumps(s.model_dump(mode="json")))
    with ScriptedServer([{"content": work(s)}]) as srv:
        main(["run", str(tmp_path / "s.json"), "--agent", "openai:fake", "--base-url", srv.base_url,
              "--mode", "text", "--out", str(tmp_path / "text.jsonl")])  # fmt: skip
    with ScriptedServer() as srv:
        main(["run", str(tmp_path / "s.json"), "--agent", "openai:fake", "--base-url", srv.base_url,
              "--out", str(tmp_path / "tools.jsonl")])  # fmt: skip
    capsys.readouterr()
    assert (
        main(["report", str(tmp_path / "text.jsonl"), str(tmp_path / "tools.jsonl"), "--json"]) == 0
    )
    agents = json.loads(capsys.readouterr().out)["agents"]
    # two servers, so each name also carries its --base-url; the mode keeps them apart too
    text = [a for a in agents if a.endswith(" [text]")]
    assert len(agents) == 2 and len(text) == 1 and all(a.startswith("openai:fake") for a in agents)
