"""Everything is checked before anything is written, for every backend: agents, factories,
guards, variants, keys, scenario consistency and option combinations that would do
nothing; and a run's resources are bounded (workers, a Ray address, failing agents)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from helpers import cli, records, tiny_scenario

from agentproc.cli import main

SIM = ["--agent", "sim:oracle"]


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("validation")
    assert main(["generate", "--steps", "5", "--count", "6", "--out", str(root / "S")]) == 0
    return root / "S"


def scenario_file(tmp_path: Path, change) -> Path:
    data = tiny_scenario().model_dump(mode="json")
    change(data)
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(data))
    return path


def left(tmp_path: Path) -> list[str]:
    return sorted(p.name for p in tmp_path.iterdir())


# --- scenario consistency -------------------------------------------------------------


@pytest.mark.parametrize("tool", ["step_2", "add", "div"])
def test_a_finish_tool_named_like_a_step_or_calculator_tool_is_refused_at_load(
    capsys, tmp_path, tool
):
    path = scenario_file(tmp_path, lambda d: d["finish"].update(tool=tool))
    code, _, err = cli(capsys, "run", path, *SIM, "--out", tmp_path / "r.jsonl")
    assert code == 2 and str(path) in err and "finish.tool" in err and repr(tool) in err
    assert left(tmp_path) == ["scenario.json"]


@pytest.mark.parametrize(
    ("depends_on", "says"),
    [([9], "9 is not a step before step 2"), ([2], "2 is not a step before step 2"),
     ([3], "3 is not a step before step 2"), ([0], "0 is not a step before step 2")],
)  # fmt: skip
def test_depends_on_naming_a_missing_later_or_own_step_is_refused_at_load(
    capsys, tmp_path, depends_on, says
):
    path = scenario_file(tmp_path, lambda d: d["steps"][1].update(depends_on=depends_on))
    code, _, err = cli(
        capsys, "run", path, *SIM, "--variant", "shuffled", "--out", tmp_path / "r.jsonl"
    )
    assert code == 2 and str(path) in err and "steps[1].depends_on[0]" in err and says in err
    assert left(tmp_path) == ["scenario.json"]


# --- agents, factories, guards, variants, keys: checked in this process ------------------


BAD_FACTORIES = {
    "import_error": "import no_such_module_anywhere\n",
    "exits": "import sys\nsys.exit(0)\n",
}


@pytest.mark.parametrize(
    ("argv", "env", "says"),
    [
        (["--agent", "nosuch.mod:build"], {}, "cannot import nosuch"),
        (["--agent", "sim:nosuch"], {}, "sim:nosuch"),
        (["--agent", "sim:oracle", "--guard", "bogus"], {}, "unknown guard 'bogus'"),
        (["--agent", "sim:oracle", "--variant", "nosuch"], {}, "nosuch"),
        (["--agent", "openai:m"], {"OPENAI_API_KEY": "a\nb"}, "the API key holds a line break"),
        (["--agent", "{dir}/nowhere.py:build"], {}, "no such file"),
        (["--agent", "{dir}/import_error.py:build"], {}, "ModuleNotFoundError"),
        (["--agent", "{dir}/exits.py:build"], {}, "sys.exit(0) at import"),
    ],
)
@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_bad_agent_guard_variant_key_or_factory_writes_nothing_on_any_backend(
    capsys, monkeypatch, suite, tmp_path, argv, env, says, workers
):
    agents = tmp_path / "agents"
    agents.mkdir()
    for name, source in BAD_FACTORIES.items():
        (agents / f"{name}.py").write_text(source)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    argv = [a.replace("{dir}", str(agents)) for a in argv]
    code, _, err = cli(
        capsys, "run", suite, *argv, "--workers", workers, "--out", tmp_path / "r.jsonl"
    )
    assert code == 2 and says in err and "Traceback" not in err
    assert left(tmp_path) == ["agents"]  # no run file, no shard folder


# --- option combinations that do nothing -------------------------------------------------


def test_mode_text_with_a_factory_agent_is_refused_naming_both(capsys, suite, tmp_path):
    (tmp_path / "mine.py").write_text("def build(tools):\n    raise ValueError('x')\n")
    code, _, err = cli(
        capsys, "run", suite, "--agent", f"{tmp_path / 'mine.py'}:build", "--mode", "text",
        "--out", tmp_path / "r.jsonl",
    )  # fmt: skip
    assert code == 2 and "--mode text" in err and "--agent" in err
    assert left(tmp_path) == ["mine.py"]


@pytest.mark.parametrize("command", ["run", "stress"])
def test_an_address_without_the_ray_backend_is_refused_naming_both(
    capsys, suite, tmp_path, command
):
    out = tmp_path / ("r.jsonl" if command == "run" else "D")
    code, _, err = cli(capsys, command, suite, *SIM, "--address", "127.0.0.1:6379", "--out", out)
    assert code == 2 and "--address and --backend processes" in err
    assert left(tmp_path) == []


def test_stress_with_an_empty_variant_list_is_refused(capsys, suite, tmp_path):
    code, _, err = cli(capsys, "stress", suite, *SIM, "--variants", "", "--out", tmp_path / "D")
    assert code == 2 and "--variants names no variant" in err
    assert left(tmp_path) == []


def test_stress_grid_over_variants_of_one_axis_is_refused_naming_both(capsys, suite, tmp_path):
    code, _, err = cli(
        capsys, "stress", suite, *SIM, "--grid", "--variants", "prose", "--out", tmp_path / "D"
    )
    assert code == 2 and "--grid and --variants prose" in err
    assert left(tmp_path) == []


def test_stress_grid_over_variants_of_two_axes_is_accepted(capsys, suite, tmp_path):
    code, _, _ = cli(
        capsys, "stress", suite, *SIM, "--grid", "--variants", "prose,calculator", "--limit", "1",
        "--out", tmp_path / "D",
    )  # fmt: skip
    assert code == 0 and len(list((tmp_path / "D").glob("*.jsonl"))) == 4


# --- bounded resources -------------------------------------------------------------------


def test_workers_are_capped_at_the_cpus_and_it_is_said(capsys, suite, tmp_path):
    cpus = os.cpu_count() or 1
    code, out, err = cli(
        capsys, "run", suite, *SIM, "--workers", "1000", "--out", tmp_path / "r.jsonl"
    )
    assert code == 0 and f"--workers 1000 capped at {min(cpus, 6)}" in err
    assert f"({min(cpus, 6)} workers)" in out
    assert len(records(tmp_path / "r.jsonl")) == 6


def test_workers_are_capped_at_the_scenarios_of_the_suite(capsys, tmp_path):
    path = scenario_file(tmp_path, lambda d: None)
    code, _, err = cli(capsys, "run", path, *SIM, "--workers", "3", "--out", tmp_path / "r")
    assert code == 0 and "--workers 3 capped at 1 (the scenarios of the suite)" in err
    assert len(records(tmp_path / "r")) == 1


def test_a_ray_address_that_does_not_answer_fails_within_the_timeout(capsys, suite, tmp_path):
    pytest.importorskip("ray")
    start = time.monotonic()
    code, _, err = cli(
        capsys, "run", suite, *SIM, "--backend", "ray", "--address", "127.0.0.1:1",
        "--timeout", "2", "--out", tmp_path / "r.jsonl",
    )  # fmt: skip
    assert code == 2 and "--address 127.0.0.1:1: no Ray cluster answers there" in err
    assert time.monotonic() - start < 30
    assert left(tmp_path) == []


RAISES = "def build(tools):\n    raise ValueError('no agent today')\n"


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_factory_that_raises_on_every_episode_stops_after_three(capsys, suite, tmp_path, workers):
    (tmp_path / "mine.py").write_text(RAISES)
    run = tmp_path / "r.jsonl"
    code, _, err = cli(
        capsys, "run", suite, "--agent", f"{tmp_path / 'mine.py'}:build", "--workers", workers,
        "--out", run,
    )  # fmt: skip
    assert code == 3
    assert "the harness failed on each of the first 3 episodes, so the run stopped" in err
    assert "no agent today" in err
    if workers == "1":
        assert len(records(run)) == 3


BREAKS = """N = [0]


class Quiet:
    async def ainvoke(self, inputs, config=None):
        return {}


def build(tools):
    N[0] += 1
    if N[0] > 1:
        raise ValueError('broken after the first')
    return Quiet()
"""


def test_a_harness_that_fails_three_times_in_a_row_stops_the_run_after_a_scored_episode(
    capsys, suite, tmp_path
):
    (tmp_path / "breaks.py").write_text(BREAKS)
    run = tmp_path / "r.jsonl"
    code, _, err = cli(
        capsys, "run", suite, "--agent", f"{tmp_path / 'breaks.py'}:build", "--out", run
    )
    assert code == 3
    assert "the harness failed on 3 episodes in a row, so the run stopped" in err
    assert "broken after the first" in err
    kinds = [(r.get("error") or {}).get("kind") for r in records(run)]
    assert kinds == [None, "harness", "harness", "harness"]  # one scored, then three failed


def test_a_run_resumed_from_the_shards_of_more_workers_than_cpus_goes_on_from_them(
    capsys, suite, tmp_path
):
    run = tmp_path / "r.jsonl"
    many = (os.cpu_count() or 1) + 1
    (tmp_path / f"r.jsonl.shards-{many}").mkdir()  # cut where there were more CPUs
    code, out, err = cli(capsys, "run", suite, *SIM, "--workers", many, "--resume", "--out", run)
    assert code == 0 and "capped" not in err and f"({many} workers)" in out
    assert len(records(run)) == 6


def test_an_error_naming_the_agent_says_it_as_given(capsys, suite, tmp_path):
    # ":x:" in "--agent nosuch:x: ..." is not turned into an emoji
    code, _, err = cli(capsys, "run", suite, "--agent", "nosuch:x", "--out", tmp_path / "r")
    assert code == 2 and "--agent nosuch:x: cannot import nosuch" in err
