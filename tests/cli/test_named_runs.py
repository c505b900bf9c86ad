"""``run --name``, ``compare`` of two runs of one agent, and tokens in ``report``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import records

from agentproc.cli import main

ROOT = Path(__file__).resolve().parents[2]
RECORDED = ROOT / "scenarios" / "recorded" / "local-smollm2.jsonl"


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("named") / "s"
    assert main(["generate", "--steps", "3,5", "--count", "4", "--out", str(out)]) == 0
    return out


def cli(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def run(capsys, suite: Path, out: Path, *extra: object, agent: str = "sim:decay") -> None:
    code, _, err = cli(capsys, "run", suite, "--agent", agent, "--out", out, *extra)
    assert code == 0, err


def test_the_name_is_stored_after_the_agent_in_every_record(capsys, suite, tmp_path):
    run(capsys, suite, tmp_path / "a.jsonl", "--name", "model v1")
    recs = records(tmp_path / "a.jsonl")
    assert {r["name"] for r in recs} == {"model v1"} and {r["agent"] for r in recs} == {"sim:decay"}
    line = (tmp_path / "a.jsonl").read_text().splitlines()[0]
    assert line.index('"agent":') < line.index('"name":') < line.index('"mode":')


def test_a_named_run_over_workers_names_every_record(capsys, suite, tmp_path):
    run(capsys, suite, tmp_path / "a.jsonl", "--name", "v1", "--workers", "2")
    recs = records(tmp_path / "a.jsonl")
    assert len(recs) == 8 and {r["name"] for r in recs} == {"v1"}


def test_a_run_without_a_name_stores_none(capsys, suite, tmp_path):
    run(capsys, suite, tmp_path / "a.jsonl")
    assert all("name" not in r for r in records(tmp_path / "a.jsonl"))


def test_a_named_run_resumes_its_own_episodes(capsys, suite, tmp_path):
    run(capsys, suite, tmp_path / "a.jsonl", "--name", "v1", "--limit", "3")
    code, out, _ = cli(
        capsys,
        "run",
        suite,
        "--agent",
        "sim:decay",
        "--out",
        tmp_path / "a.jsonl",
        "--name",
        "v1",
        "--resume",
    )
    assert code == 0 and "(3 already done)" in out
    assert len(records(tmp_path / "a.jsonl")) == 8


def test_report_shows_a_named_run_under_its_name(capsys, suite, tmp_path):
    run(capsys, suite, tmp_path / "a.jsonl", "--name", "v1")
    run(capsys, suite, tmp_path / "b.jsonl", "--name", "v2", "--seed", "5")
    code, out, _ = cli(capsys, "report", tmp_path / "a.jsonl", tmp_path / "b.jsonl", "--json")
    assert code == 0
    data = json.loads(out)
    assert list(data["agents"]) == ["v1", "v2"] and data["episodes"] == 16
    code, out, _ = cli(capsys, "report", tmp_path / "a.jsonl")
    assert out.startswith("v1: n=8,")


def test_compare_takes_named_runs_of_one_agent_as_arms(capsys, suite, tmp_path):
    run(capsys, suite, tmp_path / "a.jsonl", "--name", "v1")
    run(capsys, suite, tmp_path / "b.jsonl", "--name", "v2", "--seed", "5")
    code, out, err = cli(capsys, "compare", tmp_path / "a.jsonl", tmp_path / "b.jsonl", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert [a["name"] for a in data["arms"]] == ["v1", "v2"]
    assert data["comparisons"][0]["pairs"] == 8
    assert "compared file by file" not in err


def test_compare_pairs_two_unnamed_runs_of_one_agent_file_by_file(capsys, suite, tmp_path):
    run(capsys, suite, tmp_path / "model-v1.jsonl")
    run(capsys, suite, tmp_path / "model-v2.jsonl", "--seed", "5")
    argv = ["compare", tmp_path / "model-v1.jsonl", tmp_path / "model-v2.jsonl", "--json"]
    code, out, err = cli(capsys, *argv)
    assert code == 0, err
    data = json.loads(out)
    assert [a["name"] for a in data["arms"]] == ["model-v1", "model-v2"]
    assert data["comparisons"][0]["pairs"] == 8 and data["baseline"] == "model-v1"
    (note,) = err.strip().splitlines()
    assert note == (
        "every file holds episodes of one agent and variant (sim:decay, default): compared "
        "file by file, as arms model-v1, model-v2"
    )


def test_files_of_one_name_in_two_folders_are_named_by_path(capsys, suite, tmp_path):
    (tmp_path / "x").mkdir()
    (tmp_path / "y").mkdir()
    run(capsys, suite, tmp_path / "x" / "r.jsonl")
    run(capsys, suite, tmp_path / "y" / "r.jsonl", "--seed", "5")
    code, out, _ = cli(capsys, "compare", tmp_path / "x/r.jsonl", tmp_path / "y/r.jsonl", "--json")
    assert code == 0
    names = [a["name"] for a in json.loads(out)["arms"]]
    assert names == [str(tmp_path / "x/r.jsonl"), str(tmp_path / "y/r.jsonl")]


def test_compare_of_different_agents_pools_the_files_as_before(capsys, suite, tmp_path):
    run(capsys, suite, tmp_path / "a.jsonl")
    run(capsys, suite, tmp_path / "b.jsonl", agent="sim:oracle")
    code, out, err = cli(capsys, "compare", tmp_path / "a.jsonl", tmp_path / "b.jsonl", "--json")
    assert code == 0 and err == ""
    assert [a["name"] for a in json.loads(out)["arms"]] == ["sim:decay", "sim:oracle"]


def test_one_file_given_twice_is_still_one_arm(capsys, suite, tmp_path):
    run(capsys, suite, tmp_path / "a.jsonl")
    code, _, err = cli(capsys, "compare", tmp_path / "a.jsonl", tmp_path / "a.jsonl")
    assert code == 2 and "compare needs episodes of at least two" in err


def test_report_gives_each_agent_s_tokens_and_their_cost(capsys, tmp_path, suite):
    run(capsys, suite, tmp_path / "a.jsonl")
    code, out, _ = cli(capsys, "report", RECORDED, tmp_path / "a.jsonl", "--price", "3,15")
    assert code == 0
    lines = out.splitlines()

    def token_line(agent: str) -> str:  # the headline may wrap: the first line after it
        start = next(i for i, x in enumerate(lines) if x.startswith(f"{agent}:"))
        return next(x for x in lines[start + 1 :] if x.startswith(("  tokens:", "  no token")))

    assert token_line("local") == (
        "  tokens: 61,708 in, 1,681 out over 4 episodes; cost $0.2103 at $3/$15 per million in/out"
    )
    sim = token_line("sim:decay")
    assert sim == "  no token counts"
    code, out, _ = cli(
        capsys, "report", RECORDED, tmp_path / "a.jsonl", "--json", "--price", "3,15"
    )
    agents = json.loads(out)["agents"]
    assert agents["local"]["tokens"] == {
        "input": 61708,
        "output": 1681,
        "episodes": 4,
        "cost_usd": 0.210339,
        "price_per_million": {"input": 3.0, "output": 15.0},
    }
    assert agents["sim:decay"]["tokens"] is None


def test_report_without_a_price_gives_tokens_and_no_cost(capsys):
    code, out, _ = cli(capsys, "report", RECORDED)
    assert code == 0 and "  tokens: 61,708 in, 1,681 out over 4 episodes\n" in out
    assert "cost" not in out


def test_the_html_report_shows_names_tokens_and_cost(capsys, suite, tmp_path):
    run(capsys, suite, tmp_path / "a.jsonl", "--name", "v1")
    html = tmp_path / "r.html"
    argv = ["report", RECORDED, tmp_path / "a.jsonl", "--html", html, "--price", "3,15"]
    code, _, err = cli(capsys, *argv)
    assert code == 0, err
    text = html.read_text()
    assert "<p class='tokens'>tokens: 61,708 in, 1,681 out over 4 episodes; cost $0.2103" in text
    assert "<p class='tokens'>no token counts</p>" in text
    assert "aria-label='v1'" in text


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["report", str(RECORDED), "--price", "3"], "--price: expected IN,OUT"),
        (["report", str(RECORDED), "--price", "3,-1"], "--price: expected IN,OUT"),
        (["report", str(RECORDED), "--price", "a,b"], "--price: expected IN,OUT"),
        (["report", str(RECORDED), "--price", "nan,1"], "--price: expected IN,OUT"),
        (["run", "s", "--out", "r.jsonl", "--name", ""], "--name: expected a name"),
        (["run", "s", "--out", "r.jsonl", "--name", "a\nb"], "--name: expected a name"),
        (["run", "s", "--out", "r.jsonl", "--name", "x" * 65], "--name: expected a name"),
    ],
)
def test_a_bad_price_or_name_is_one_error(capsys, argv, message):
    with pytest.raises(SystemExit) as caught:
        main(argv)
    assert caught.value.code == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert message in line
