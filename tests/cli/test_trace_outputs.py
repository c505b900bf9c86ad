"""``export --otel`` and ``import-traces`` follow the one output rule: the file is written
beside its place and renamed into it once whole, so a write that fails part-way (a
file-size limit stands in for a full disk: writes past it fail with EFBIG) leaves an
earlier output byte-identical and no partial file behind; a missing folder is created."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import cli


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One scenario run 12 times by two agents, exported as traces, and a scenario file."""
    root = tmp_path_factory.mktemp("made")
    from agentproc.cli import main

    suite = str(root / "suite")
    assert main(["generate", "--steps", "5", "--count", "1", "--out", suite]) == 0
    for agent, name in (("sim:oracle", "old"), ("sim:skipped_step", "new")):
        out = str(root / f"{name}.jsonl")
        assert main(["run", suite, "--agent", agent, "--trials", "12", "--out", out]) == 0
        assert main(["export", out, "--otel", str(root / f"{name}.json")]) == 0
    (root / "scenario.json").write_text(
        subprocess.run(
            [sys.executable, "-m", "agentproc", "scenario", suite],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    return root


def limited(limit: int, *argv: object) -> subprocess.CompletedProcess[str]:
    """``agentproc ARGV`` in a process that cannot write a file past ``limit`` bytes."""
    code = (
        "import resource, sys\n"
        f"resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit}))\n"
        "from agentproc.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code, *map(str, argv)], capture_output=True, text=True
    )


def assert_failed_cleanly(done: subprocess.CompletedProcess[str], target: Path, old: bytes):
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert str(target) in done.stderr and "cannot write" in done.stderr, done.stderr
    assert target.read_bytes() == old  # the earlier output, byte for byte
    assert sorted(p.name for p in target.parent.iterdir()) == [target.name]  # no temp file


def test_export_otel_that_fails_part_way_leaves_the_old_file_as_it_was(made: Path, tmp_path: Path):
    target = tmp_path / "out" / "traces.json"
    target.parent.mkdir()
    old = (made / "old.json").read_bytes()
    target.write_bytes(old)
    size = (made / "new.json").stat().st_size
    argv = ["export", made / "new.jsonl", "--otel", target, "--overwrite"]
    assert_failed_cleanly(limited(size // 2, *argv), target, old)
    assert limited(size * 2, *argv).returncode == 0  # with room, replaced whole
    assert target.read_bytes() == (made / "new.json").read_bytes()


def test_export_otel_into_a_missing_folder_creates_it(capsys, made: Path, tmp_path: Path):
    target = tmp_path / "a" / "b" / "traces.json"
    code, out, err = cli(capsys, "export", made / "new.jsonl", "--otel", target)
    assert code == 0, err
    assert f"wrote 12 episodes as traces to {target}" in out
    assert target.read_bytes() == (made / "new.json").read_bytes()


def test_import_traces_that_fails_part_way_leaves_the_old_run_file_as_it_was(
    capsys, made: Path, tmp_path: Path
):
    target = tmp_path / "out" / "imported.jsonl"
    code, _, err = cli(
        capsys, "import-traces", made / "old.json", "--scenario", made / "scenario.json",
        "--out", target,
    )  # fmt: skip
    assert code == 0, err
    old = target.read_bytes()
    size = (made / "new.jsonl").stat().st_size
    argv = ["import-traces", made / "new.json", "--scenario", made / "scenario.json",
            "--out", target, "--overwrite"]  # fmt: skip
    assert_failed_cleanly(limited(size // 2, *argv), target, old)
    assert limited(size * 4, *argv).returncode == 0  # with room, replaced whole
    verdicts = [json.loads(line)["verdict"] for line in target.read_text().splitlines()]
    assert len(verdicts) == 12 and "unfaithful_correct" in verdicts
    assert [p.name for p in target.parent.iterdir()] == [target.name]
