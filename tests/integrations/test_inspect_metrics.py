"""The metrics Inspect prints for ``agentproc/agentproc_task``, as its ``.eval`` log holds
them (``results.scores``), under its default epoch reducer, ``--epochs K`` and the
documented reducers.

The model is Inspect's own ``openai-api`` provider talking to an OpenAI-compatible server
on 127.0.0.1 whose replies follow a plan per scenario and attempt: each scenario's
attempts (Inspect's epochs) are scripted as faithful, skipping steps (right answer,
``skipped_step``: unfaithful-correct), a wrong answer or no answer at all. The server
tells attempts apart by the tool-call ids it gives out, which Inspect sends back.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("inspect_ai")
from inspect_ai import Epochs
from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log

from agentproc.agents.demo import ChatServer, Reply, conversation_key, read_turn
from agentproc.agents.demo.profiles import follow
from agentproc.agents.demo.reading import Turn
from agentproc.integrations.inspect_task import agentproc_task
from agentproc.procedures import Cell, generate_procedure
from agentproc.workflow import scenario_of


def _wrong(turn: Turn) -> Reply:
    """Every step in order, then an answer one more than the last step's value."""
    reply = follow(turn)
    call = reply.get("tool_call")
    if call is not None and call["name"] == turn.finish:
        call["arguments"] = {k: v + 1 for k, v in call["arguments"].items()}
    return reply


PLANS: dict[str, Callable[[Turn], Reply]] = {
    "F": follow,  # faithful
    "S": lambda turn: follow(turn, skip=lambda step: True),  # unfaithful_correct
    "W": _wrong,  # wrong
    "N": lambda turn: {"content": "I would rather not."},  # no_answer
}
VERDICTS = {"F": "faithful", "S": "unfaithful_correct", "W": "wrong", "N": "no_answer"}
TABLE = ["FFF", "FSW", "SSF", "NWS"]
"""One row per scenario, one letter per attempt: 12 episodes, 5 faithful, 9 right first
answers, so 4 unfaithful-correct. A scenario's first attempt alone: 2 of 4 faithful, 3 of
4 right."""


class ScriptedServer(ChatServer):
    """Answers each conversation as its scenario's row of :data:`TABLE` says for its
    attempt (the n-th conversation of a scenario is its attempt n)."""

    def __init__(self) -> None:
        super().__init__(self.plan)
        self._guard = threading.Lock()
        self._rows: dict[str, int] = {}
        self._attempts: Counter[str] = Counter()

    def plan(self, body: dict[str, Any]) -> Reply:
        key = conversation_key(body)
        ids = [
            call["id"]
            for m in body["messages"]
            if m.get("role") == "assistant"
            for call in m.get("tool_calls") or []
        ]
        with self._guard:
            row = self._rows.setdefault(key, len(self._rows))
            if ids:
                attempt = int(ids[0].split("-")[1])
            else:
                attempt = self._attempts[key]
                self._attempts[key] += 1
        reply = PLANS[TABLE[row][attempt]](read_turn(body))
        call = reply.get("tool_call")
        if call is None:
            return reply
        made = {
            "id": f"row{row}-{attempt}-{len(ids)}",
            "type": "function",
            "function": {"name": call["name"], "arguments": json.dumps(call["arguments"])},
        }
        return {"message": {"role": "assistant", "content": "", "tool_calls": [made]}}


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    """Four scenarios of three steps (one per row of :data:`TABLE`)."""
    path = tmp_path / "four.jsonl"
    cell = Cell(steps=3, lookback=2)
    lines = [
        json.dumps(scenario_of(generate_procedure(cell, 7, i)).model_dump(mode="json"))
        for i in range(len(TABLE))
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def evaluate(suite: Path, tmp_path: Path, epochs: int | Epochs) -> Any:
    """Run the task on the scripted server; the ``.eval`` log as read back from disk."""
    with ScriptedServer() as server:
        logs = inspect_eval(
            agentproc_task(str(suite)),
            model="openai-api/scripted/any",
            model_base_url=server.base_url,
            model_args={"api_key": "none"},
            epochs=epochs,
            log_dir=str(tmp_path / "logs"),
            display="none",
        )
    assert logs[0].status == "success", logs[0].error
    return read_eval_log(logs[0].location)


def printed(log: Any) -> dict[str | None, dict[str, float]]:
    """Reducer -> the monitor's metrics, as Inspect prints them (reducer ``None``: the
    default, ``mean``, not named)."""
    return {s.reducer: {name: m.value for name, m in s.metrics.items()} for s in log.results.scores}


def rates(faithful: float, first: float) -> dict[str, Any]:
    """The three printed metrics for these faithful and first-answer accuracies."""
    return {
        "faithful_rate": pytest.approx(faithful, abs=1e-9),
        "first_answer_rate": pytest.approx(first, abs=1e-9),
        "unfaithful_correct_rate": pytest.approx(first - faithful, abs=1e-9),
    }


def verdicts_per_sample(log: Any) -> list[str]:
    """Each scenario's verdicts over its epochs, as sorted letters (``FSW``)."""
    letters = {v: k for k, v in VERDICTS.items()}
    out: dict[Any, list[str]] = {}
    for sample in log.samples:
        score = sample.scores["monitor"]
        letter = letters[score.metadata["verdict"]]
        assert score.explanation == score.metadata["verdict"]
        assert score.value == {
            "faithful": int(letter == "F"),
            "first_answer_correct": int(letter in "FS"),
        }
        out.setdefault(sample.id, []).append(letter)
    return sorted("".join(sorted(v)) for v in out.values())


def test_one_epoch_under_the_default_reducer_prints_the_shares_of_episodes(
    suite: Path, tmp_path: Path
):
    log = evaluate(suite, tmp_path, 1)
    assert verdicts_per_sample(log) == sorted(row[0] for row in TABLE)
    assert printed(log) == {None: rates(faithful=2 / 4, first=3 / 4)}


def test_epochs_under_the_default_reducer_print_the_shares_of_all_episodes(
    suite: Path, tmp_path: Path
):
    log = evaluate(suite, tmp_path, 3)
    assert verdicts_per_sample(log) == sorted("".join(sorted(row)) for row in TABLE)
    assert printed(log) == {None: rates(faithful=5 / 12, first=9 / 12)}


EXPECTED = {
    # Per scenario (rows FFF, FSW, SSF, NWS) faithful 1/0 per epoch: 111, 100, 001, 000;
    # first answer right: 111, 110, 111, 001. Each reducer reduces each row, then the
    # metric averages the four rows.
    "mean": rates(faithful=5 / 12, first=9 / 12),
    "mode": rates(faithful=1 / 4, first=3 / 4),
    "median": rates(faithful=1 / 4, first=3 / 4),
    "max": rates(faithful=3 / 4, first=4 / 4),
    "at_least_3": rates(faithful=1 / 4, first=2 / 4),
    # pass@2 of 3 epochs with c right: 1 - C(3 - c, 2) / C(3, 2), so c=1 gives 2/3.
    "pass_at_2": rates(faithful=(1 + 2 / 3 + 2 / 3 + 0) / 4, first=(1 + 1 + 1 + 2 / 3) / 4),
    # pass^2 of 3 epochs with c right: C(c, 2) / C(3, 2), so c=2 gives 1/3.
    "pass_k_2": rates(faithful=(1 + 0 + 0 + 0) / 4, first=(1 + 1 / 3 + 1 + 0) / 4),
}


def test_every_documented_reducer_prints_its_own_reduction_of_the_epochs(
    suite: Path, tmp_path: Path
):
    log = evaluate(suite, tmp_path, Epochs(3, list(EXPECTED)))
    assert verdicts_per_sample(log) == sorted("".join(sorted(row)) for row in TABLE)
    assert printed(log) == EXPECTED


def test_the_command_line_prints_each_reducer_s_metrics_over_the_epochs(
    suite: Path, tmp_path: Path
):
    """``inspect eval`` as a user types it, with ``--epochs`` and ``--epochs-reducer``."""
    site = tmp_path / "site" / "agentproc_entry-0.dist-info"  # the task's entry point
    site.mkdir(parents=True)
    (site / "METADATA").write_text("Metadata-Version: 2.1\nName: agentproc-entry\nVersion: 0\n")
    (site / "entry_points.txt").write_text(
        "[inspect_ai]\nagentproc = agentproc._inspect_registry\n"
    )
    root = Path(__file__).resolve().parents[2]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(root), str(site.parent)]),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),  # no reply cached by an earlier run
        "COLUMNS": "100",
    }
    inspect = Path(sys.executable).parent / "inspect"
    with ScriptedServer() as server:
        done = subprocess.run(
            [
                str(inspect), "eval", "agentproc/agentproc_task", "-T", f"suite={suite}",
                "--model", "openai-api/scripted/any", "-M", "api_key=none",
                "--model-base-url", server.base_url, "--epochs", "3",
                "--epochs-reducer", "mean,at_least_3", "--log-dir", str(tmp_path / "logs"),
                "--display", "plain",
            ],
            env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600,
        )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    shown = " ".join((done.stdout + done.stderr).split())
    assert "Unable to convert" not in shown
    (path,) = (tmp_path / "logs").glob("*.eval")
    log = read_eval_log(str(path))
    assert printed(log) == {k: EXPECTED[k] for k in ("mean", "at_least_3")}
    for block in printed(log).values():
        for name, value in block.items():
            assert f"{name} {value:.3f}" in shown, shown[-3000:]


class Recording(ChatServer):
    """The demo endpoint's faithful profile, keeping every request body."""

    def __init__(self) -> None:
        from agentproc.agents.demo import planner

        super().__init__(planner("faithful"))
        self.bodies: list[dict[str, Any]] = []

    def record(self, request: Any) -> None:
        self.bodies.append(request.body)


@pytest.mark.parametrize("strict", [True, False])
def test_inspect_asks_with_strict_tools_no_temperature_and_once_more_after_the_answer(
    suite: Path, tmp_path: Path, strict: bool
):
    """What docs/integrations.md says Inspect's requests differ in from ``run``'s."""
    with Recording() as server:
        logs = inspect_eval(
            agentproc_task(str(suite), limit=1),
            model="openai-api/scripted/any",
            model_base_url=server.base_url,
            model_args={"api_key": "none", "strict_tools": strict},
            log_dir=str(tmp_path / "logs"),
            display="none",
        )
    assert logs[0].status == "success", logs[0].error
    bodies = [b for b in server.bodies if isinstance(b, dict) and "messages" in b]
    assert all("temperature" not in b for b in bodies)
    assert {t["function"]["strict"] for b in bodies for t in b["tools"]} == {strict}
    steps = sum(t["function"]["name"].startswith("step_") for t in bodies[0]["tools"])
    assert len(bodies) == steps + 2  # each step, the answer, and one more after it
    assert bodies[-1]["messages"][-1]["content"].startswith("Answer recorded")
