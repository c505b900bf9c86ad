"""An episode an error ended is never a silent "unpaired": compare says how many pairs were
lost to errors and exits 3, whether it ran the arms (``--variants``) or reads their files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import cli

from agentproc.cli import main

FLAKY = """\
SEEN = []


class Agent:
    def __init__(self, tools):
        self.tools = {t.name: t for t in tools}

    async def ainvoke(self, inputs, config=None):
        SEEN.append(1)
        if len(SEEN) in (6, 8):  # the second arm's second and fourth episodes
            raise KeyError("S7")
        await self.tools["submit_answer"].ainvoke({"answer": 0})
        return {}


def make_agent(tools):
    return Agent(tools)
"""


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    out = tmp_path / "suite"
    assert main(["generate", "--steps", "2,3", "--count", "2", "--out", str(out)]) == 0
    return out


@pytest.fixture
def agent(tmp_path: Path) -> str:
    path = tmp_path / "flaky_agent.py"
    path.write_text(FLAKY)
    return f"{path}:make_agent"


def compared(capsys, suite: Path, agent: str, out: Path, *extra: str) -> tuple[int, str, str]:
    capsys.readouterr()
    return cli(
        capsys, "compare", suite, "--agent", agent, "--variants", "default,terse",
        "--concurrency", "1", "--out", out, *extra,
    )  # fmt: skip


def test_pairs_lost_to_harness_errors_are_said_and_exit_3(capsys, suite, agent, tmp_path):
    code, out, err = compared(capsys, suite, agent, tmp_path / "cmp")
    assert code == 3
    assert "terse vs default: 2 of 4 pairs lost to errors" in err
    assert "(2 lost to errors)" in out
    assert "unpaired" not in out


def test_the_json_counts_lost_pairs_apart_from_unpaired_ones(capsys, suite, agent, tmp_path):
    code, out, _ = compared(capsys, suite, agent, tmp_path / "cmp", "--json")
    assert code == 3
    (comparison,) = json.loads(out)["comparisons"]
    assert (comparison["pairs"], comparison["lost_to_errors"], comparison["unpaired"]) == (2, 2, 0)


def test_compare_of_the_arm_files_says_the_same_and_exits_3(capsys, suite, agent, tmp_path):
    compared(capsys, suite, agent, tmp_path / "cmp")
    arms = [tmp_path / "cmp" / f"{v}.jsonl" for v in ("default", "terse")]
    code, out, err = cli(capsys, "compare", *arms)
    assert code == 3
    assert "2 of 4 pairs lost to errors" in err
    assert "unpaired" not in out


def test_an_arm_run_on_fewer_scenarios_is_unpaired_not_lost(capsys, suite, agent, tmp_path):
    for variant, limit in (("default", "4"), ("terse", "2")):
        code, _, err = cli(
            capsys, "run", suite, "--agent", "sim:oracle", "--variant", variant,
            "--limit", limit, "--out", tmp_path / f"{variant}.jsonl",
        )  # fmt: skip
        assert code == 0, err
    code, out, err = cli(capsys, "compare", tmp_path / "default.jsonl", tmp_path / "terse.jsonl")
    assert code == 0, err
    assert "(2 unpaired left out)" in out
    assert "lost to errors" not in out + err
