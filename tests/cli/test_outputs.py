"""The output rule, command by command: no output over an input (by any name), a special
file, or an existing file without ``--overwrite``; a failure leaves the old output
byte-identical and nothing partial behind."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agentproc.cli import run as run_cli
from tests.helpers import cli

SIM = ["--agent", "sim:oracle"]


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A suite of 12 procedures and a run of it, made once."""
    root = tmp_path_factory.mktemp("made")
    from agentproc.cli import main

    assert main(["generate", "--steps", "3", "--count", "12", "--out", str(root / "suite")]) == 0
    assert main(["run", str(root / "suite"), *SIM, "--out", str(root / "r.jsonl")]) == 0
    return root


@pytest.fixture
def work(made: Path, tmp_path: Path) -> Path:
    shutil.copytree(made / "suite", tmp_path / "suite")
    shutil.copy(made / "r.jsonl", tmp_path / "r.jsonl")
    return tmp_path


def tree(folder: Path) -> dict[str, bytes | str]:
    """Every name under ``folder`` and its bytes (a link: where it points)."""
    return {
        str(p.relative_to(folder)): os.readlink(p) if p.is_symlink() else p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_symlink() or p.is_file()
    }


def refused(capsys, folder: Path, *argv: object, says: tuple[str, ...] = ()) -> str:
    """Run a command that must be refused: exit 2, one line, nothing changed."""
    before = tree(folder)
    code, _, err = cli(capsys, *argv)
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    for part in says:
        assert part in err, err
    assert tree(folder) == before
    return err


# -- report --html


@pytest.mark.parametrize("how", ["itself", "hard link", "symlink", "second input"])
def test_report_html_never_replaces_one_of_its_inputs(capsys, work: Path, how: str):
    run, other = work / "r.jsonl", work / "r2.jsonl"
    shutil.copy(run, other)
    target = {"itself": run, "second input": other}.get(how, work / "alias.jsonl")
    if how == "hard link":
        os.link(run, target)
    elif how == "symlink":
        target.symlink_to(run)
    refused(
        capsys,
        work,
        "report",
        run,
        other,
        "--html",
        target,
        "--overwrite",
        says=("--html", "input"),
    )


def test_report_html_never_replaces_a_suite_s_procedures(capsys, work: Path):
    target = work / "suite" / "procedures.jsonl"
    refused(capsys, work, "report", work / "r.jsonl", "--html", target, "--overwrite")


def test_report_html_keeps_an_existing_file_without_overwrite(capsys, work: Path):
    (work / "old.html").write_text("old")
    refused(
        capsys, work, "report", work / "r.jsonl", "--html", work / "old.html", says=("--overwrite",)
    )
    assert (
        cli(capsys, "report", work / "r.jsonl", "--html", work / "old.html", "--overwrite")[0] == 0
    )
    assert "<html" in (work / "old.html").read_text().lower()


def test_report_html_refuses_a_fifo_without_blocking(capsys, work: Path):
    os.mkfifo(work / "pipe")
    refused(capsys, work, "report", work / "r.jsonl", "--html", work / "pipe", "--overwrite",
            says=("special file",))  # fmt: skip


def test_report_html_refuses_a_device(capsys, work: Path):
    refused(capsys, work, "report", work / "r.jsonl", "--html", "/dev/null", "--overwrite",
            says=("/dev/null", "special file"))  # fmt: skip


# -- report --csv / --parquet


def test_report_csv_keeps_the_old_tables_when_a_later_input_is_bad(capsys, work: Path):
    assert cli(capsys, "report", work / "r.jsonl", "--csv", work / "t")[0] == 0
    (work / "bad.jsonl").write_text("{not json\n")
    refused(capsys, work, "report", work / "r.jsonl", work / "bad.jsonl", "--csv", work / "t",
            "--overwrite", says=("bad.jsonl",))  # fmt: skip
    assert not [p for p in (work / "t").iterdir() if p.name.startswith(".")]


def test_report_csv_refuses_existing_tables_without_overwrite(capsys, work: Path):
    assert cli(capsys, "report", work / "r.jsonl", "--csv", work / "t")[0] == 0
    refused(capsys, work, "report", work / "r.jsonl", "--csv", work / "t", says=("episodes.csv",))


def test_report_csv_never_writes_over_a_run_file_named_like_a_table(capsys, work: Path):
    (work / "t").mkdir()
    shutil.copy(work / "r.jsonl", work / "t" / "episodes.csv")
    refused(capsys, work, "report", work / "t" / "episodes.csv", "--csv", work / "t", "--overwrite",
            says=("input",))  # fmt: skip


def test_report_csv_replaces_a_symlink_never_its_target(capsys, work: Path):
    (work / "t").mkdir()
    (work / "precious.txt").write_text("keep")
    (work / "t" / "episodes.csv").symlink_to(work / "precious.txt")
    refused(capsys, work, "report", work / "r.jsonl", "--csv", work / "t")
    assert cli(capsys, "report", work / "r.jsonl", "--csv", work / "t", "--overwrite")[0] == 0
    assert (work / "precious.txt").read_text() == "keep"
    assert not (work / "t" / "episodes.csv").is_symlink()


def test_report_parquet_without_pyarrow_writes_no_csv(capsys, work: Path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow: ImportError
    assert cli(capsys, "report", work / "r.jsonl", "--csv", work / "a")[0] == 0
    refused(capsys, work, "report", work / "r.jsonl", "--csv", work / "a", "--parquet",
            work / "b", "--overwrite", says=("pyarrow",))  # fmt: skip


def test_report_html_with_csv_writes_both(capsys, work: Path):
    code, _, err = cli(capsys, "report", work / "r.jsonl", "--html", work / "r.html",
                       "--csv", work / "t")  # fmt: skip
    assert code == 0, err
    assert (work / "r.html").exists() and (work / "t" / "episodes.csv").exists()


# -- relabel --out


def test_relabel_never_truncates_the_run_through_a_hard_link(capsys, work: Path):
    os.link(work / "r.jsonl", work / "h.jsonl")
    refused(capsys, work, "relabel", work / "r.jsonl", "--out", work / "h.jsonl", "--overwrite",
            says=("input",))  # fmt: skip


def test_relabel_keeps_the_old_output_whole_when_a_line_is_bad(capsys, work: Path):
    (work / "h.jsonl").write_text("old output\n")
    lines = (work / "r.jsonl").read_text().splitlines(keepends=True)
    lines[9] = "{bad\n"
    (work / "r.jsonl").write_text("".join(lines))
    refused(capsys, work, "relabel", work / "r.jsonl", "--out", work / "h.jsonl", "--overwrite",
            says=("line 10",))  # fmt: skip


# -- run --out


def test_run_never_writes_over_its_suite(capsys, work: Path):
    os.link(work / "suite" / "procedures.jsonl", work / "p.jsonl")
    refused(capsys, work, "run", work / "suite", *SIM, "--out", work / "p.jsonl", "--overwrite",
            says=("input",))  # fmt: skip


def test_run_refuses_a_fifo(capsys, work: Path):
    os.mkfifo(work / "pipe")
    refused(capsys, work, "run", work / "suite", *SIM, "--out", work / "pipe", "--overwrite")


def test_run_of_scenarios_with_a_bad_line_far_in_writes_nothing(capsys, work: Path):
    from agentproc.workflow import load_scenarios

    good = [json.dumps(s.model_dump(mode="json")) for s in load_scenarios(work / "suite")]
    (work / "s.jsonl").write_text("\n".join([*good[:5], '{"id": 1}', *good[5:]]) + "\n")
    refused(capsys, work, "run", work / "s.jsonl", *SIM, "--out", work / "out.jsonl",
            says=("s.jsonl", "line 6"))  # fmt: skip


def test_run_of_a_suite_without_a_digest_with_a_bad_line_far_in_writes_nothing(capsys, work: Path):
    manifest = json.loads((work / "suite" / "suite.json").read_text())
    del manifest["sha256"]  # a suite written before manifests carried one
    (work / "suite" / "suite.json").write_text(json.dumps(manifest))
    with open(work / "suite" / "procedures.jsonl", "a") as fh:
        fh.write('{"id": "x"}\n')
    refused(capsys, work, "run", work / "suite", *SIM, "--out", work / "out.jsonl",
            says=("procedures.jsonl", "line 13"))  # fmt: skip


def test_run_resume_of_an_unreadable_run_file_is_bad_input(capsys, work: Path, monkeypatch):
    def unreadable(path, *a, **k):  # as root, permissions cannot make a file unreadable
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(run_cli, "open", unreadable, raising=False)
    refused(capsys, work, "run", work / "suite", *SIM, "--resume", "--out", work / "r.jsonl",
            says=("r.jsonl", "cannot read it to resume", "Permission denied"))  # fmt: skip


def test_a_full_disk_exits_1_and_keeps_what_was_written(work: Path):
    """A file-size limit stands in for a full disk: writes past it fail with EFBIG."""
    limit = (work / "r.jsonl").stat().st_size // 3
    code = (
        "import resource, sys\n"
        f"resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit}))\n"
        "from agentproc.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    argv = [sys.executable, "-c", code, "run", str(work / "suite"), *SIM]
    done = subprocess.run([*argv, "--out", str(work / "o.jsonl")], capture_output=True, text=True)
    assert done.returncode == 1, done.stderr
    assert "o.jsonl" in done.stderr and "Traceback" not in done.stderr
    whole = (work / "o.jsonl").read_text().splitlines(keepends=True)
    whole = [line for line in whole if line.endswith("\n")]  # the last may be torn
    assert whole and all(json.loads(line) for line in whole)  # --resume cuts the torn one


# -- compare / stress --out


def test_compare_out_under_a_file_is_one_line(capsys, work: Path):
    (work / "f").write_text("keep")
    refused(capsys, work, "compare", work / "suite", "--variants", "default,prose", *SIM,
            "--out", work / "f" / "x", says=("f/x", "a part of the path is a file"))  # fmt: skip


def test_stress_never_writes_a_run_file_over_its_suite(capsys, work: Path):
    (work / "o").mkdir()
    os.link(work / "suite" / "procedures.jsonl", work / "o" / "prose.jsonl")
    refused(capsys, work, "stress", work / "suite", "--variants", "prose", *SIM, "--overwrite",
            "--out", work / "o", says=("prose.jsonl", "input"))  # fmt: skip


# -- generate --out


def test_generate_refuses_a_fifo(capsys, work: Path):
    os.mkfifo(work / "pipe")
    refused(capsys, work, "generate", "--steps", "3", "--count", "1", "--overwrite",
            "--out", work / "pipe")  # fmt: skip


def test_report_html_and_csv_in_one_place_are_refused_before_either_is_written(capsys, work: Path):
    refused(capsys, work, "report", work / "r.jsonl", "--html", work / "x", "--csv", work / "x",
            says=("--html", "--csv"))  # fmt: skip


# --- a run over an earlier run file ---------------------------------------------------------


def test_a_run_over_an_earlier_one_that_stops_leaves_it_byte_identical(capsys, work, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key")
    before = tree(work)
    code, _, err = cli(
        capsys, "run", work / "suite", "--agent", "openai:m", "--base-url",
        "http://127.0.0.1:9/v1", "--retries", "0", "--out", work / "r.jsonl", "--overwrite",
    )  # fmt: skip
    assert code == 3 and "the run stopped" in err and "is left as it was" in err, err
    assert tree(work) == before  # the old lines, and nothing beside them


def test_a_run_over_an_earlier_one_replaces_it_once_it_has_gone_its_whole_way(capsys, work):
    old = (work / "r.jsonl").read_bytes()
    code, out, _ = cli(
        capsys, "run", work / "suite", "--agent", "sim:decay", "--out", work / "r.jsonl",
        "--overwrite",
    )  # fmt: skip
    assert code == 0 and "wrote 12 episodes" in out
    assert (work / "r.jsonl").read_bytes() != old
    assert sorted(p.name for p in work.iterdir()) == ["r.jsonl", "suite"]


def test_a_run_over_an_earlier_one_that_is_interrupted_leaves_it_byte_identical(
    capsys, work, monkeypatch
):
    from agentproc.runs import parallel

    async def interrupted(scenarios, agent, episode, out, **options):
        Path(out).write_text("a line of the new run\n")  # written beside the run file
        raise KeyboardInterrupt

    before = tree(work)
    monkeypatch.setattr(parallel, "arun_suite", interrupted)
    code, _, _ = cli(capsys, "run", work / "suite", *SIM, "--out", work / "r.jsonl", "--overwrite")
    assert code == 130
    assert tree(work) == before


def test_run_never_writes_over_a_workflow_suite_s_scenarios(capsys, tmp_path: Path):
    from agentproc.resources import folder

    suite = tmp_path / "invoices"
    invoice = folder("workflows") / "invoice_approval.toml"
    assert cli(capsys, "generate", "--workflow", invoice, "--count", "2", "--out", suite)[0] == 0
    refused(capsys, tmp_path, "run", suite, *SIM, "--out", suite / "scenarios.jsonl",
            "--overwrite", says=("scenarios.jsonl", "input"))  # fmt: skip
