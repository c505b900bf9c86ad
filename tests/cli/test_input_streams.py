"""A run file, a scenario file or traces given as a stream (a FIFO, a pipe, process
substitution, ``/dev/stdin``) are read whole, as the same file on disk is: never as empty."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from agentproc.jsonio import seekable
from tests.helpers import cli

ROOT = Path(__file__).resolve().parents[2]
PINNED = ROOT / "scenarios" / "pinned"
RECORDED = ROOT / "scenarios" / "recorded" / "local-smollm2.jsonl"
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}


def agentproc(*argv: object, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    """``agentproc`` in a process of its own, ``stdin`` given through a real pipe."""
    return subprocess.run(
        [sys.executable, "-m", "agentproc", *map(str, argv)],
        input=None if stdin is None else stdin.decode(),
        capture_output=True,
        text=True,
        env=ENV,
        timeout=120,
        check=False,
    )


def fifo_of(tmp_path: Path, data: bytes, name: str = "run") -> Path:
    """A named FIFO that a thread writes ``data`` into once, when a reader opens it."""
    fifo = tmp_path / name
    os.mkfifo(fifo)

    def write() -> None:
        with open(fifo, "wb") as fh:
            fh.write(data)

    threading.Thread(target=write, daemon=True).start()
    return fifo


def test_report_of_a_fifo_counts_the_episodes_of_the_file(tmp_path, capsys):
    code, out, err = cli(capsys, "report", fifo_of(tmp_path, RECORDED.read_bytes()), "--json")
    assert (code, err) == (0, "")
    whole = cli(capsys, "report", RECORDED, "--json")[1]
    assert json.loads(out) == json.loads(whole)


def test_export_of_a_fifo_writes_every_episode(tmp_path, capsys):
    out = tmp_path / "traces.json"
    code, said, err = cli(capsys, "export", fifo_of(tmp_path, RECORDED.read_bytes()), "--otel", out)
    assert code == 0, err
    assert "wrote 4 episodes" in said


def test_report_of_stdin_through_a_pipe_reads_the_run():
    done = agentproc("report", "/dev/stdin", stdin=RECORDED.read_bytes())
    assert done.returncode == 0, done.stderr
    assert "no episodes" not in done.stdout
    assert "local: n=4" in done.stdout


@pytest.mark.skipif(shutil.which("bash") is None, reason="process substitution needs bash")
def test_report_and_export_of_process_substitution_read_the_run(tmp_path):
    env = {**ENV, "RUN": str(RECORDED), "OUT": str(tmp_path / "t.json"), "PY": sys.executable}
    script = '"$PY" -m agentproc report <(cat "$RUN") && '
    script += '"$PY" -m agentproc export --otel "$OUT" <(cat "$RUN")'
    done = subprocess.run(
        ["bash", "-c", script],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "local: n=4" in done.stdout
    assert "wrote 4 episodes" in done.stdout
    assert len(json.loads((tmp_path / "t.json").read_text())["resourceSpans"]) > 0


def test_run_reads_scenario_lines_from_a_pipe(tmp_path):
    one = json.loads((PINNED / "n5-L3-r1_10-mixed-decimal-0000.json").read_text())
    lines = "".join(json.dumps({**one, "id": f"{one['id']}-{i}"}) + "\n" for i in range(2))
    out = tmp_path / "r.jsonl"
    done = agentproc(
        "run", "/dev/stdin", "--agent", "sim:oracle", "--out", out, stdin=lines.encode()
    )
    assert done.returncode == 0, done.stderr
    assert "wrote 2 episodes" in done.stdout
    assert len(out.read_text().splitlines()) == 2


def test_a_stream_is_copied_once_and_read_from_the_copy_since(tmp_path):
    fifo = fifo_of(tmp_path, b"abc\n", "once")
    first = seekable(fifo)
    assert first != fifo and first.read_bytes() == b"abc\n"
    assert seekable(fifo) == first  # a second open of the FIFO would wait for a writer
    plain = tmp_path / "plain.jsonl"
    plain.write_text("x\n")
    assert seekable(plain) == plain
    assert seekable(tmp_path / "missing") == tmp_path / "missing"


def test_check_and_replay_read_fifos_as_the_file(tmp_path, capsys):
    data = RECORDED.read_bytes()
    code, out, err = cli(
        capsys, "check", fifo_of(tmp_path, data, "a"), "--baseline", fifo_of(tmp_path, data, "b")
    )
    assert code == 0, err
    assert "regression" in out and "over 4 scenarios" in out
    code, out, err = cli(capsys, "replay", fifo_of(tmp_path, data, "c"), "--json")
    assert code == 0, err
    assert len(out.strip().splitlines()) == 4


def test_a_named_fifo_given_to_a_later_command_is_read_anew(tmp_path, capsys):
    lines = RECORDED.read_bytes().splitlines(keepends=True)
    fifo = tmp_path / "again"
    os.mkfifo(fifo)
    for count in (4, 2):

        def write(data: bytes = b"".join(lines[:count])) -> None:
            with open(fifo, "wb") as fh:
                fh.write(data)

        threading.Thread(target=write, daemon=True).start()
        code, out, err = cli(capsys, "report", fifo, "--json")
        assert code == 0, err
        assert json.loads(out)["episodes"] == count
