"""``agentproc.integrations.inspect_task``: an Inspect AI task whose samples are scenarios,
whose tools are the step tools and whose scorer is the monitor; run with Inspect's
``mockllm/model``."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import ORACLE, step, submit, tiny_scenario

from agentproc.analysis import replay_calls

pytest.importorskip("inspect_ai")
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ModelOutput, ModelUsage, get_model

from agentproc.integrations.inspect_task import agentproc_task

ROOT = Path(__file__).resolve().parents[2]
MOCK = "mockllm/model"
MISTAKES = [step(1), step(3, S4=15), ("step_4", {"S4": "fifteen", "S3": 5}), submit(4)]
"""Step 2 skipped, step 4 with an argument that fails the schema, a wrong answer."""


@pytest.fixture
def scenario_file(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(tiny_scenario().model_dump(mode="json")), encoding="utf-8")
    return path


def counted(output: ModelOutput) -> ModelOutput:
    """An output with its token usage given: mockllm would otherwise count the tokens with
    tiktoken, whose encoding it downloads."""
    output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    return output


def scripted(calls: list[tuple[str, dict[str, Any]]], last: str = "Done.") -> Any:
    outputs = [ModelOutput.for_tool_call(MOCK, name, args) for name, args in calls]
    outputs.append(ModelOutput.from_content(MOCK, last))
    return get_model(MOCK, custom_outputs=[counted(o) for o in outputs])


def score_of(task: Any, model: Any, tmp_path: Path) -> Any:
    logs = inspect_eval(task, model=model, log_dir=str(tmp_path / "logs"), display="none")
    assert logs[0].status == "success", logs[0].error
    samples = logs[0].samples or []
    assert len(samples) == 1
    return samples[0].scores["monitor"]  # type: ignore[index]


def replayed(calls: list[tuple[str, Any]]) -> Any:
    return replay_calls(tiny_scenario(), [(n, json.dumps(a)) for n, a in calls])


@pytest.mark.parametrize(("calls", "verdict"), [(ORACLE, "faithful"), (MISTAKES, None)])
def test_the_score_holds_replays_labels_and_verdict(
    scenario_file: Path, tmp_path: Path, calls: list[Any], verdict: str | None
):
    score = score_of(agentproc_task(str(scenario_file)), scripted(calls), tmp_path)
    expected = replayed(calls)
    assert score.metadata["verdict"] == score.explanation == expected.metrics["verdict"]
    assert score.value == {
        "faithful": int(expected.metrics["faithful"]),
        "first_answer_correct": int(expected.metrics["first_answer_correct"]),
    }
    assert score.metadata["labels"] == [lab.to_json() for lab in expected.labels]
    assert score.metadata["metrics"]["first_divergence"] == expected.metrics["first_divergence"]
    if verdict is not None:
        assert score.metadata["verdict"] == verdict
        assert score.value == {"faithful": 1, "first_answer_correct": 1}
    else:
        kinds = {lab["kind"] for lab in score.metadata["labels"]}
        assert {"skipped_step", "invalid_arguments", "wrong_answer"} <= kinds


def test_the_mock_model_that_only_talks_gets_no_answer(scenario_file: Path, tmp_path: Path):
    model = scripted([], "I cannot help with that.")
    score = score_of(agentproc_task(str(scenario_file)), model, tmp_path)
    assert score.metadata["verdict"] == "no_answer"
    assert score.value == {"faithful": 0, "first_answer_correct": 0}
    assert score.metadata["labels"] == [lab.to_json() for lab in replayed([]).labels]


def test_text_mode_labels_the_reply(scenario_file: Path, tmp_path: Path):
    reply = "S3 = 5\nS4 = 15\nS5 = 12\nS6 = 3\nANSWER: 3"
    model = scripted([], reply)
    score = score_of(agentproc_task(str(scenario_file), mode="text"), model, tmp_path)
    assert score.metadata["verdict"] == "faithful"
    assert score.value == {"faithful": 1, "first_answer_correct": 1}


@pytest.mark.parametrize(
    ("options", "said"),
    [
        ({"mode": "speech"}, r"unknown mode 'speech' \(expected one of: tools, text\)"),
        ({"guard": "strict"}, r"unknown guard 'strict' \(expected one of: observe, enforce,"),
        ({"order": "random"}, r"unknown order 'random' \(expected one of: listed, dependency\)"),
    ],
)
def test_bad_options_are_one_error(scenario_file: Path, options: dict[str, str], said: str):
    from inspect_ai._util.error import PrerequisiteError

    with pytest.raises(PrerequisiteError) as refused:  # said by Inspect without a traceback
        agentproc_task(str(scenario_file), **options)
    assert re.search(said, refused.value.message)


def test_a_workflow_file_given_as_the_suite_is_one_error_saying_how_to_make_one(tmp_path: Path):
    from inspect_ai._util.error import PrerequisiteError

    workflow = tmp_path / "refunds.toml"
    workflow.write_bytes((ROOT / "scenarios/workflows/refund_approval.toml").read_bytes())
    with pytest.raises(PrerequisiteError) as refused:
        agentproc_task(str(workflow))
    assert refused.value.message == (
        f"agentproc_task: {workflow}: is a workflow file, not a suite: make a suite of it with "
        f"'agentproc generate --workflow {workflow} --out DIR', then give DIR"
    )


def test_inspect_eval_of_a_workflow_file_ends_in_one_message_not_a_traceback(tmp_path: Path):
    workflow = tmp_path / "refunds.toml"
    workflow.write_bytes((ROOT / "scenarios/workflows/refund_approval.toml").read_bytes())
    done = subprocess.run(
        [sys.executable, "-m", "inspect_ai", "eval", "agentproc/agentproc_task", "-T",
         f"suite={workflow}", "--model", "mockllm/model", "--log-dir", str(tmp_path / "logs")],
        cwd=tmp_path, env=registered(tmp_path), capture_output=True,
        text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode != 0
    assert "Traceback" not in done.stdout + done.stderr
    assert "is a workflow file, not a suite" in " ".join((done.stdout + done.stderr).split())


SCRIPT = """
import sys
from inspect_ai import eval
from inspect_ai.model import ModelOutput, ModelUsage, get_model
out = ModelOutput.from_content("mockllm/model", "I cannot help with that.")
out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
model = get_model("mockllm/model", custom_outputs=[out])
logs = eval("agentproc/agentproc_task", task_args={"suite": sys.argv[1]}, model=model,
            log_dir=sys.argv[2], display="none")
print(logs[0].status, logs[0].eval.task, logs[0].samples[0].scores["monitor"].explanation)
"""


def registered(tmp_path: Path) -> dict[str, str]:
    """An environment whose Inspect finds this checkout's task by its registered name: the
    package's entry point as an install declares it (the agentproc under test may not be
    the installed one)."""
    dist = tmp_path / "site" / "agentproc_entry-0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: agentproc-entry\nVersion: 0\n")
    (dist / "entry_points.txt").write_text(
        "[inspect_ai]\nagentproc = agentproc._inspect_registry\n"
    )
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(tmp_path / "site")])}


def test_inspect_finds_the_task_by_its_registered_name(scenario_file: Path, tmp_path: Path):
    env = registered(tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(scenario_file), str(tmp_path / "logs")],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["success", "agentproc/agentproc_task", "no_answer"]
