"""``generate --workflow``: a declared workflow's suite, run, reported, replayed and
relabelled like any suite; a bad workflow file is one line and exit 2."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from agentproc.cli import main
from agentproc.resources import folder

INVOICE = folder("workflows") / "invoice_approval.toml"


def cli(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def suite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    out = tmp_path / "invoices"
    code, text, _ = cli(
        capsys, "generate", "--workflow", INVOICE, "--count", 6, "--seed", 2, "--out", out
    )
    assert code == 0
    assert text.strip() == f"wrote 6 instances of invoice_approval (12 steps, 2 dead) to {out}"
    return out


def test_generate_writes_seeded_instances_the_same_each_time(suite, tmp_path, capsys):
    again = tmp_path / "again"
    cli(capsys, "generate", "--workflow", INVOICE, "--count", 6, "--seed", 2, "--out", again)
    assert (again / "scenarios.jsonl").read_bytes() == (suite / "scenarios.jsonl").read_bytes()
    manifest = json.loads((suite / "suite.json").read_text(encoding="utf-8"))
    assert manifest == {
        "kind": "workflow",
        "workflow": "invoice_approval",
        "count": 6,
        "seed": 2,
        "scenarios": 6,
        "sha256": hashlib.sha256((suite / "scenarios.jsonl").read_bytes()).hexdigest(),
    }


def test_a_workflow_suite_runs_reports_replays_and_relabels_with_sim_agents(
    suite, tmp_path, capsys
):
    oracle, decay = tmp_path / "oracle.jsonl", tmp_path / "decay.jsonl"
    code, out, _ = cli(capsys, "run", suite, "--agent", "sim:oracle", "--out", oracle)
    assert code == 0 and "faithful 6" in out
    code, out, _ = cli(
        capsys,
        "run",
        suite,
        "--agent",
        "sim:wrong_argument",
        "--order",
        "dependency",
        "--out",
        decay,
    )
    assert code == 0
    lines = [json.loads(line) for line in decay.read_text(encoding="utf-8").splitlines()]
    episodes = [r for r in lines if "calls" in r]
    assert len(episodes) == 6
    assert all(e["scenario_ref"]["suite"] == str(suite.resolve()) for e in episodes)
    code, out, _ = cli(capsys, "report", decay)
    assert code == 0 and "wrong_argument" in out
    code, out, _ = cli(capsys, "replay", decay)
    assert code == 0 and "0 differ from the recording" in out
    code, out, _ = cli(capsys, "relabel", decay)
    assert code == 0 and "0 changed" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("--variant", "calculator"), "variant 'calculator' does not apply to a declared workflow"),
        (("--variant", "descriptive-names"), "variant 'descriptive-names' does not apply"),
        (("--mode", "text", "--agent", "local"), "--mode text does not apply to a declared"),
    ],
)
def test_a_variant_that_cannot_apply_is_refused_in_one_line(suite, tmp_path, capsys, argv, message):
    out = tmp_path / "run.jsonl"
    code, _, err = cli(capsys, "run", suite, "--agent", "sim:oracle", *argv, "--out", out)
    assert code == 2
    assert message in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


BAD = [
    ('formula = "a ** 2"', "steps[0] (t).formula: 'a ** 2': the operator '**' is not allowed"),
    ('formula = "a +"', "steps[0] (t).formula: 'a +': does not parse"),
    ('formula = "b * 2"', "steps[0] (t).formula: reads its own output 'b' (a cycle)"),
    ('formula = "c * 2"', "steps[0] (t).formula: unknown variable 'c'"),
    ('formula = "a / (a - a)"', "divides by zero whatever the inputs"),
]


@pytest.mark.parametrize(("line", "message"), BAD)
def test_a_bad_workflow_file_is_one_line_naming_file_step_and_field_and_exit_2(
    tmp_path, capsys, line, message
):
    path = tmp_path / "bad.toml"
    path.write_text(
        'description = "x"\nanswer = "b"\n[inputs.a]\nintegers = [1, 5]\n'
        f'[[steps]]\ntool = "t"\noutput = "b"\n{line}\n',
        encoding="utf-8",
    )
    out = tmp_path / "suite"
    code, _, err = cli(capsys, "generate", "--workflow", path, "--count", 2, "--out", out)
    assert code == 2
    assert err.strip().startswith(f"agentproc: error: {path}: steps[0] (t).formula: ")
    assert message in err and len(err.strip().splitlines()) == 1
    assert "Traceback" not in err
    assert not out.exists()


BAD_FORMULAS = [
    ("a + 1e309", "'a + 1e309': the number 1e309 is too large"),
    ("min(a, 1e999)", "'min(a, 1e999)': the number 1e999 is too large"),
    ("a + 1e-400", "'a + 1e-400': the number 1e-400 is too small: it would read as 0"),
    ("a + a * 2305843009213693951 / 1e30", "equals a in 100 of 100 draws"),
]


def _flow(tmp_path: Path, formula: str) -> Path:
    path = tmp_path / "flow.toml"
    path.write_text(
        'description = "x"\nanswer = "b"\n[inputs.a]\nintegers = [1, 5]\n'
        f'[[steps]]\ntool = "t"\noutput = "b"\nformula = "{formula}"\n',
        encoding="utf-8",
    )
    return path


@pytest.mark.parametrize("command", ["generate", "selfcheck"])
@pytest.mark.parametrize(("formula", "message"), BAD_FORMULAS)
def test_a_bad_formula_is_one_line_exit_2_and_nothing_written_by_generate_or_selfcheck(
    tmp_path, capsys, command, formula, message
):
    path = _flow(tmp_path, formula)
    out = tmp_path / "suite"
    argv = [command, "--workflow", path, "--count", 2]
    code, text, err = cli(capsys, *argv, *(["--out", out] if command == "generate" else []))
    assert (code, text) == (2, "")
    assert err.startswith(f"agentproc: error: {path}: steps[0] (t).formula: '{formula}'")
    assert err.count("\n") == 1 and message in err and "Traceback" not in err
    assert not out.exists()


@pytest.mark.parametrize("command", ["generate", "selfcheck"])
def test_an_overflowing_literal_is_one_line_from_the_command_itself(tmp_path, command):
    path = _flow(tmp_path, "a + 1e309")
    out = tmp_path / "suite"
    extra = ["--out", str(out)] if command == "generate" else []
    done = subprocess.run(
        [sys.executable, "-m", "agentproc", command, "--workflow", str(path), *extra],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"agentproc: error: {path}: steps[0] (t).formula: "
        "'a + 1e309': the number 1e309 is too large (at most about 1.8e308)\n"
    )
    assert not out.exists()


def test_a_tool_name_clashing_with_the_finish_tool_is_refused(tmp_path, capsys):
    path = tmp_path / "clash.toml"
    path.write_text(
        'description = "x"\nanswer = "b"\nfinish_tool = "t"\n[inputs.a]\nintegers = [1, 5]\n'
        '[[steps]]\ntool = "t"\noutput = "b"\nformula = "a * 2"\n',
        encoding="utf-8",
    )
    code, _, err = cli(capsys, "generate", "--workflow", path, "--out", tmp_path / "s")
    assert code == 2
    assert f"{path}: steps[0] (t).tool: tool 't' is the finish tool's name" in err


def test_grid_options_beside_a_workflow_are_refused(tmp_path, capsys):
    code, _, err = cli(
        capsys, "generate", "--workflow", INVOICE, "--steps", "5", "--out", tmp_path / "s"
    )
    assert code == 2 and "takes no --steps" in err


def test_an_existing_suite_is_kept_unless_overwrite(suite, capsys):
    before = (suite / "scenarios.jsonl").read_bytes()
    code, _, err = cli(capsys, "generate", "--workflow", INVOICE, "--count", 3, "--out", suite)
    assert code == 2 and "--overwrite" in err
    assert (suite / "scenarios.jsonl").read_bytes() == before


@pytest.mark.parametrize("command", ["compare", "stress"])
def test_compare_and_stress_refuse_a_named_variant_that_cannot_apply_in_one_line(
    suite, tmp_path, capsys, command
):
    out = tmp_path / "sweep"
    code, _, err = cli(
        capsys,
        command,
        suite,
        "--agent",
        "sim:oracle",
        "--variants",
        "default,prose,calculator",
        "--out",
        out,
    )
    assert code == 2
    assert err.strip() == (
        "agentproc: error: --variants: variant 'calculator' does not apply to a declared "
        "workflow (the calculator offers add, sub, mul and div; a declared step computes a "
        "formula, which no one of them is)"
    )
    assert not out.exists()


def test_compare_runs_variants_on_a_workflow_suite(suite, tmp_path, capsys):
    out = tmp_path / "sweep"
    argv = ("--variants", "default,shuffled,random-names", "--out", out, "--json")
    code, text, _ = cli(capsys, "compare", suite, "--agent", "sim:decay", *argv)
    assert code == 0
    assert sorted(p.name for p in out.iterdir()) == [
        "default.jsonl",
        "random-names.jsonl",
        "shuffled.jsonl",
    ]
    assert json.loads(text)["baseline"] == "default"


def test_stress_leaves_out_the_variants_that_cannot_apply_with_a_note(suite, tmp_path, capsys):
    out = tmp_path / "sweep"
    code, _, err = cli(capsys, "stress", suite, "--agent", "sim:oracle", "--out", out)
    assert code == 0
    notes = [line for line in err.splitlines() if line.startswith("note: left out")]
    assert [n.rsplit(": ", 1)[1] for n in notes] == ["calculator", "descriptive-names"]
    ran = {p.stem for p in out.glob("*.jsonl")}
    assert {"prose", "shuffled", "random-names", "flaky-tools", "feedback"} <= ran
    assert not ran & {"calculator", "descriptive-names"}


def test_a_workflow_suite_changed_after_generation_is_refused_before_the_run(
    suite, tmp_path, capsys
):
    target = suite / "scenarios.jsonl"
    target.write_bytes(target.read_bytes().replace(b'"answer":', b'"answer": ', 1))
    out = tmp_path / "run.jsonl"
    code, _, err = cli(capsys, "run", suite, "--agent", "sim:oracle", "--out", out)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert f"{target}: does not match the digest in suite.json" in err
    assert not out.exists()


def test_a_workflow_suite_runs_over_workers_as_in_one_process(suite, tmp_path, capsys):
    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    code, _, err = cli(capsys, "run", suite, "--agent", "sim:decay", "--out", one)
    assert code == 0, err
    argv = ("run", suite, "--agent", "sim:decay", "--workers", 2, "--out", two)
    code, out, err = cli(capsys, *argv)
    assert code == 0, err
    assert "(2 workers)" in out
    by_id = lambda path: sorted(path.read_text(encoding="utf-8").splitlines())  # noqa: E731
    assert by_id(two) == by_id(one)
