"""The demo endpoint's profiles under the variants that change what the agent reads: a
real ``agentproc serve-demo`` on 127.0.0.1, ``agentproc run --agent openai:demo
--variant V`` against it, on an arithmetic suite (the quick preset, one procedure of each
cell: 5, 25 and 95 steps) and on a shipped declared workflow. The faithful profile reads
the request as a model does (the prompt's step list when the tools have no descriptions,
the calculator's tools by their operation, other names, distractor tools no step names, a
call that failed transiently tried again), so every episode is faithful."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import cli, records

from agentproc.resources import folder

ARITHMETIC = ("calculator", "descriptive-names", "distractors", "flaky-tools", "random-names")
ARITHMETIC += ("scrambled-names",)
"""Shipped variants that change what an agent reads of a procedure."""
WORKFLOW = ("distractors", "flaky-tools", "no-descriptions")
"""Shipped variants that change what an agent reads of a declared workflow."""
RENDERINGS = ("numbered", "prose", "pseudocode", "json")
COUNT = 4
"""Instances of the workflow."""


def serve(profile: str) -> tuple[subprocess.Popen[str], str]:
    """``agentproc serve-demo`` on a free port, and its base URL."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentproc", "serve-demo", "--port", "0", "--profile", profile],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    first = proc.stdout.readline()
    return proc, first[first.index("http://") :].split()[0]


def endpoint(profile: str) -> Iterator[str]:
    proc, url = serve(profile)
    try:
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture(scope="module")
def faithful() -> Iterator[str]:
    yield from endpoint("faithful")


@pytest.fixture(scope="module")
def skipper() -> Iterator[str]:
    yield from endpoint("skipper")


@pytest.fixture(scope="module")
def suites(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    from agentproc.cli import main

    root = tmp_path_factory.mktemp("demo-variants")
    assert main(["generate", "--preset", "quick", "--out", str(root / "quick")]) == 0
    payroll = str(folder("workflows") / "payroll.toml")
    argv = ["generate", "--workflow", payroll, "--count", str(COUNT), "--out"]
    assert main([*argv, str(root / "payroll")]) == 0
    return {"arithmetic": root / "quick", "workflow": root / "payroll"}


def run(capsys: Any, suite: Path, url: str, variant: str | Path, out: Path) -> list[dict[str, Any]]:
    code, _, err = cli(
        capsys, "run", suite, "--agent", "openai:demo", "--base-url", url, "--variant", variant,
        "--per-cell", 1, "--concurrency", 4, "--out", out,
    )  # fmt: skip
    assert code == 0, err
    return records(out)


def assert_faithful(episodes: list[dict[str, Any]], transient: bool = False) -> None:
    """Every episode faithful: each step run once (a transient failure tried again), the
    answer right, no label."""
    assert episodes
    assert Counter(e["verdict"] for e in episodes) == Counter(faithful=len(episodes))
    assert [lab for e in episodes for lab in e["labels"]] == []
    for e in episodes:
        refused = Counter(c.get("refused") for c in e["calls"])
        assert set(refused) <= ({None, "transient"} if transient else {None})
        assert refused[None] == e["params"]["steps"] + 1
        assert e["metrics"]["first_answer_correct"]


def variant_file(tmp_path: Path, **knobs: object) -> Path:
    lines = ['description = "a combination"']
    lines += [f"{k} = {v!r}".replace("'", '"').replace("False", "false") for k, v in knobs.items()]
    path = tmp_path / "combined.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("kind", "variant"),
    [("arithmetic", v) for v in ARITHMETIC] + [("workflow", v) for v in WORKFLOW],
)
def test_the_faithful_profile_is_faithful_under_each_variant_that_changes_what_it_reads(
    capsys, faithful, suites, tmp_path, kind, variant
):
    episodes = run(capsys, suites[kind], faithful, variant, tmp_path / "run.jsonl")
    assert_faithful(episodes, transient=variant == "flaky-tools")


def test_under_flaky_tools_the_faithful_profile_tries_a_failed_call_again(
    capsys, faithful, suites, tmp_path
):
    episodes = run(capsys, suites["workflow"], faithful, "flaky-tools", tmp_path / "run.jsonl")
    retried = 0
    for e in episodes:
        for failed, then in zip(e["calls"], e["calls"][1:], strict=False):
            if failed.get("refused") == "transient":
                assert then["name"] == failed["name"]  # the same tool, at once
                assert then["arguments"] == failed["arguments"]
                retried += 1
    assert retried > 0


@pytest.mark.parametrize("rendering", RENDERINGS)
def test_without_descriptions_the_faithful_profile_reads_each_rendering_of_the_step_list(
    capsys, faithful, suites, tmp_path, rendering
):
    """The prompt's step list names each step's tool, in other names and another order,
    beside distractors."""
    knobs = {"descriptions": False, "rendering": rendering, "names": "random"}
    variant = variant_file(tmp_path, **knobs, order="shuffled", distractors=3)
    for kind in ("workflow", "arithmetic"):
        assert_faithful(run(capsys, suites[kind], faithful, variant, tmp_path / f"{kind}.jsonl"))


@pytest.mark.parametrize("rendering", RENDERINGS)
def test_with_the_calculator_the_faithful_profile_reads_each_rendering_of_the_step_list(
    capsys, faithful, suites, tmp_path, rendering
):
    variant = variant_file(tmp_path, tools="calculator", rendering=rendering, names="random")
    assert_faithful(run(capsys, suites["arithmetic"], faithful, variant, tmp_path / "run.jsonl"))


@pytest.mark.parametrize("variant", ["calculator", "no-descriptions-workflow"])
def test_the_skipper_still_skips_steps_and_answers_right(
    capsys, skipper, suites, tmp_path, variant
):
    kind = "workflow" if variant.endswith("workflow") else "arithmetic"
    name = variant.removesuffix("-workflow")
    episodes = run(capsys, suites[kind], skipper, name, tmp_path / "run.jsonl")
    kinds = Counter(lab["kind"] for e in episodes for lab in e["labels"])
    assert set(kinds) == {"skipped_step"}
    assert {e["verdict"] for e in episodes} <= {"faithful", "unfaithful_correct"}
    assert any(e["verdict"] == "unfaithful_correct" for e in episodes)
