"""``run --workers N`` and ``run --backend ray``: one run over several processes,
merged into the same file a single process writes; killed workers lose nothing."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from helpers import cli

from agentproc.cli import main
from agentproc.runs import RunWriter, in_shard, read_run

SIM = ["--agent", "sim:decay"]


def records(path: Path) -> list[dict]:
    return [rec for _, rec in read_run(path)]


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("workers")
    assert main(["generate", "--steps", "5,10", "--count", "15", "--out", str(root / "S")]) == 0
    return root / "S"


@pytest.fixture(scope="module")
def single(suite: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = tmp_path_factory.mktemp("single") / "run.jsonl"
    assert main(["run", str(suite), *SIM, "--out", str(run)]) == 0
    return run


def test_two_workers_write_the_file_one_process_writes(capsys, suite, single, tmp_path):
    run = tmp_path / "run.jsonl"
    code, out, _ = cli(capsys, "run", suite, *SIM, "--workers", "2", "--out", run)
    assert code == 0 and "wrote 30 episodes" in out and "(2 workers)" in out
    assert run.read_bytes() == single.read_bytes()  # same records, same suite order
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.jsonl"]  # shards merged away


def test_resume_of_a_finished_run_runs_nothing_again(capsys, suite, single, tmp_path):
    run = tmp_path / "run.jsonl"
    shutil.copy(single, run)
    code, _, _ = cli(capsys, "run", suite, *SIM, "--workers", "3", "--resume", "--out", run)
    assert code == 0
    assert run.read_bytes() == single.read_bytes()


def test_resume_of_a_single_process_run_over_workers(capsys, suite, single, tmp_path):
    run = tmp_path / "run.jsonl"
    run.write_bytes(b"".join(single.read_bytes().splitlines(keepends=True)[:11]))
    code, _, _ = cli(capsys, "run", suite, *SIM, "--workers", "2", "--resume", "--out", run)
    assert code == 0
    assert run.read_bytes() == single.read_bytes()


def test_the_summary_counts_each_episode_once_as_the_merged_file_reads(
    capsys, suite, single, tmp_path
):
    from agentproc.runs import latest_records

    run = tmp_path / "run.jsonl"
    lines = single.read_bytes().splitlines(keepends=True)
    run.write_bytes(b"".join(lines[:11] + lines[:3]))  # three episodes recorded twice
    code, out, _ = cli(capsys, "run", suite, *SIM, "--workers", "2", "--resume", "--out", run)
    assert code == 0 and "wrote 33 episodes" in out
    verdicts: dict[str, int] = {}
    for _, _, rec in latest_records([run]):
        verdicts[rec["verdict"]] = verdicts.get(rec["verdict"], 0) + 1
    assert sum(verdicts.values()) == 30
    shown = ", ".join(f"{k} {v}" for k, v in sorted(verdicts.items()))
    assert out.strip().endswith(f"(2 workers): {shown}")


def test_progress_counts_the_shard_files_as_they_grow(tmp_path):
    from agentproc.runs.parallel import Done

    a, b = tmp_path / "shard-1-of-2.jsonl", tmp_path / "shard-2-of-2.jsonl"
    done = Done(tmp_path)
    assert done() == 0
    a.write_bytes(b"{}\n{}\n{")  # a line being written does not count yet
    assert done() == 2
    with open(a, "ab") as fh:
        fh.write(b"}\n")
    b.write_bytes(b"{}\n")
    assert done() == 4
    assert done.seen[a] == (a.stat().st_size, 3)  # only what was appended is read again
    a.write_bytes(b"{}\n")  # cut back (a torn tail repaired): counted again from the start
    assert done() == 2


def _job(suite: Path, agent: str = "sim:decay", **options):
    from agentproc.agents.spec import AgentSpec
    from agentproc.runs.job import SuiteJob

    return SuiteJob(suite, agent, AgentSpec(agent), {"trials": 1, **options})


def _tasks(tmp_path: Path, specs: list[str]):
    from agentproc.runs import parse_shard
    from agentproc.runs.span import SpanTask

    return [
        SpanTask(parse_shard(spec), tmp_path / f"{k}.jsonl", tmp_path / f"{k}.log")
        for k, spec in enumerate(specs)
    ]


def test_each_worker_takes_the_next_span_as_it_finishes_one_in_the_same_process(
    suite, single, tmp_path
):
    from agentproc.runs.pool import LocalPool
    from agentproc.runs.span import SpanEnd

    specs = ["1-2/8", "3-4/8", "5/8", "6/8", "7/8", "8/8"]
    ticks: list[int] = []
    with contextlib.closing(LocalPool(_job(suite), 2)) as pool:
        ends = pool(_tasks(tmp_path, specs), lambda: ticks.append(1))
    assert ends == [SpanEnd()] * len(specs)
    pids = {(tmp_path / f"{k}.pid").read_text() for k in range(len(specs))}
    assert len(pids) == 2 and str(os.getpid()) not in pids  # two processes ran the six spans
    assert sum((tmp_path / f"{k}.jsonl").read_bytes().count(b"\n") for k in range(6)) == 30
    assert ticks  # the parent's part (the progress bar) ran while the spans did


def test_closing_the_pool_ends_every_worker_idle_or_busy(long_suite, tmp_path):
    from agentproc.runs.pool import LocalPool

    pool = LocalPool(_job(long_suite[0]), 2)
    procs = [proc for proc, _ in pool.workers]
    assert pool.give(0, _tasks(tmp_path, ["1/1"])[0])  # busy with the whole suite
    _wait_for_lines(tmp_path / "0.jsonl", 1)
    pool.close()
    assert [p.exitcode for p in procs] == [-signal.SIGTERM, 0]


def test_a_worker_whose_agent_cannot_be_built_fails_its_span_and_says_why_in_its_log(
    suite, tmp_path
):
    from agentproc.runs.pool import LocalPool

    with contextlib.closing(LocalPool(_job(suite, agent="sim:nope"), 1)) as pool:
        (end,) = pool(_tasks(tmp_path, ["1/2"]), lambda: None)
    assert end.failure is not None and "sim:nope" in end.failure and end.input_error
    assert "sim:nope" in (tmp_path / "0.log").read_text()
    assert not (tmp_path / "0.jsonl").exists()


def test_local_workers_start_before_the_run_file_is_locked(capsys, suite, monkeypatch, tmp_path):
    # A worker forked while the parent held the lock would hold it too, after the run.
    from agentproc.runs import pool

    run = tmp_path / "run.jsonl"
    free: list[bool] = []

    def started(job, workers):
        try:
            with RunWriter(run, append=True):
                free.append(True)
        except Exception:
            free.append(False)
        return pool.LocalPool(job, workers.count)

    monkeypatch.setitem(pool.BACKENDS, "processes", started)
    code, _, _ = cli(capsys, "run", suite, *SIM, "--workers", "2", "--out", run)
    assert code == 0 and free == [True]


def test_after_a_span_fails_no_other_is_handed_out(tmp_path):
    from agentproc.runs.pool import LocalPool

    with contextlib.closing(LocalPool(_job(tmp_path / "nope"), 1)) as pool:
        ends = pool(_tasks(tmp_path, ["1/4", "2/4", "3/4", "4/4"]), lambda: None)
    assert ends[0] is not None and "nope" in str(ends[0].failure) and ends[1:] == [None] * 3
    assert "nope" in (tmp_path / "0.log").read_text()
    assert not (tmp_path / "1.log").exists()


@pytest.mark.parametrize(
    ("agent", "concurrency", "spans"),
    [("sim:decay", 4, 15), ("openai:m", 1, 15), ("openai:m", 8, 2), ("local", 2, 2)],
)
def test_a_run_is_cut_finely_unless_a_server_sets_its_pace(agent, concurrency, spans):
    from agentproc.agents.spec import AgentSpec
    from agentproc.agents.suite import ModelRunOptions

    spec = AgentSpec(agent, ModelRunOptions(concurrency=concurrency))
    assert len(_job(Path("S"), agent, concurrency=spec.concurrency()).spans(2)) == spans


def test_run_suite_over_workers_writes_the_file_one_process_writes(suite, single, tmp_path):
    from agentproc.agents.suite import sim_episodes
    from agentproc.runs import Workers, run_suite
    from agentproc.workflow import load_scenarios

    # A library caller's scenarios and episode function, as they are: forked workers share them.
    run = tmp_path / "run.jsonl"
    scenarios = list(load_scenarios(suite))
    summary = run_suite(scenarios, "sim:decay", sim_episodes("sim:decay"), run, workers=Workers(2))
    assert run.read_bytes() == single.read_bytes()
    assert summary.written == 30 and sum(summary.verdicts.values()) == 30


def test_compare_and_stress_run_each_variant_over_workers(capsys, suite, tmp_path):
    args = [*SIM, "--variants", "default,prose", "--json"]
    code, one, _ = cli(capsys, "compare", suite, *args, "--out", tmp_path / "one")
    assert code == 0
    code, two, _ = cli(capsys, "compare", suite, *args, "--workers", "2", "--out", tmp_path / "two")
    assert code == 0 and json.loads(two) == json.loads(one)
    for name in ("default", "prose"):
        assert (tmp_path / "two" / f"{name}.jsonl").read_bytes() == (
            tmp_path / "one" / f"{name}.jsonl"
        ).read_bytes()
    assert sorted(p.name for p in (tmp_path / "two").iterdir()) == ["default.jsonl", "prose.jsonl"]
    code, _, _ = cli(
        capsys, "stress", suite, *SIM, "--variants", "prose", "--workers", "2", "--out",
        tmp_path / "two", "--resume",
    )  # fmt: skip
    assert code == 0


def test_resume_takes_up_shard_files_cut_otherwise(capsys, suite, single, tmp_path):

    run = tmp_path / "run.jsonl"
    folder = tmp_path / "run.jsonl.shards-2"
    folder.mkdir()
    lines = single.read_bytes().splitlines(keepends=True)
    for k in (1, 2):  # half-done shards of a run cut in two, as an earlier version did
        mine = [ln for ln in lines if in_shard(json.loads(ln)["scenario_id"], (k, 2))]
        (folder / f"shard-{k}-of-2.jsonl").write_bytes(b"".join(mine[: len(mine) // 2]))
    code, out, _ = cli(capsys, "run", suite, *SIM, "--workers", "2", "--resume", "--out", run)
    assert code == 0 and "wrote 30 episodes" in out
    assert run.read_bytes() == single.read_bytes()  # nothing run twice, nothing lost
    assert not folder.exists()


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (["--shard", "1/2"], "--shard and --workers"),
        (["--limit", "3"], "--limit and --per-cell work on one process"),
        (["--per-cell", "1"], "--limit and --per-cell work on one process"),
    ],
)
def test_options_that_do_not_combine_with_workers(capsys, suite, tmp_path, extra, says):
    code, _, err = cli(
        capsys, "run", suite, *SIM, "--workers", "2", *extra, "--out", tmp_path / "r"
    )
    assert code == 2 and says in err and len(err.strip().splitlines()) == 1
    assert not list(tmp_path.iterdir())


def test_a_run_file_being_written_is_refused(capsys, suite, single, tmp_path):
    run = tmp_path / "run.jsonl"
    shutil.copy(single, run)
    with RunWriter(run, append=True):
        code, _, err = cli(capsys, "run", suite, *SIM, "--workers", "2", "--resume", "--out", run)
    assert code == 2 and "another agentproc process is writing" in err
    assert run.read_bytes() == single.read_bytes()


def test_a_bad_suite_fails_before_any_worker_starts(capsys, tmp_path):
    (tmp_path / "S").mkdir()
    code, _, err = cli(
        capsys, "run", tmp_path / "S", *SIM, "--workers", "2", "--out", tmp_path / "r"
    )
    assert code == 2 and "procedures.jsonl" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["S"]


@pytest.fixture(scope="module")
def long_suite(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A suite long enough to stop a run in its middle (about a second over two workers:
    a stop sent a poll after the first lines must find it still running), and its run by
    one process."""
    root = tmp_path_factory.mktemp("long")
    suite, single = root / "S", root / "single.jsonl"
    assert main(["generate", "--steps", "25", "--count", "400", "--out", str(suite)]) == 0
    assert main(["run", str(suite), *SIM, "--out", str(single)]) == 0
    return suite, single


def _wait_for_lines(path: Path, n: int, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_bytes().count(b"\n") >= n:
            return
        time.sleep(0.05)
    raise AssertionError(f"{path} did not reach {n} lines")


def test_a_killed_worker_loses_nothing_and_resume_finishes_the_run(long_suite, tmp_path):
    suite, single = long_suite
    run = tmp_path / "run.jsonl"
    argv = [sys.executable, "-m", "agentproc", "run", str(suite), *SIM, "--workers", "2",
            "--out", str(run)]  # fmt: skip
    parent = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    shard = tmp_path / "run.jsonl.shards-2" / "shard-1-16-of-64.jsonl"  # the first span
    _wait_for_lines(shard, 3)
    os.kill(int(shard.with_suffix(".pid").read_text()), signal.SIGKILL)  # its worker dies
    _, err = parent.communicate(timeout=120)
    assert parent.returncode != 0 and b"shard 1-16/64 failed (exit -9)" in err
    assert b"Traceback" not in err
    assert run.read_bytes() == b""  # merged only once every shard is done
    done = subprocess.run([*argv, "--resume"], capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert run.read_bytes() == single.read_bytes()  # every episode once, in suite order


def test_ctrl_c_stops_every_worker_and_resume_finishes_the_run(long_suite, tmp_path):
    suite, single = long_suite
    run = tmp_path / "run.jsonl"
    argv = [sys.executable, "-m", "agentproc", "run", str(suite), *SIM, "--workers", "2",
            "--out", str(run)]  # fmt: skip
    parent = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    )
    folder = tmp_path / "run.jsonl.shards-2"
    _wait_for_lines(folder / "shard-1-16-of-64.jsonl", 3)
    os.killpg(parent.pid, signal.SIGINT)  # as Ctrl-C does: the parent and its workers
    _, err = parent.communicate(timeout=120)
    assert parent.returncode == 130 and b"--resume --workers 2 goes on" in err
    assert b"Traceback" not in err and run.read_bytes() == b""
    pids = [int(p.read_text()) for p in folder.glob("*.pid")]
    deadline = time.monotonic() + 10
    while any(Path(f"/proc/{pid}").exists() for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(Path(f"/proc/{pid}").exists() for pid in pids)  # no worker left running
    done = subprocess.run([*argv, "--resume"], capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert run.read_bytes() == single.read_bytes()


# -- Ray ------------------------------------------------------------------------------


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _listening(port: int, timeout: float) -> bool:
    import socket

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
            return True
        time.sleep(0.2)
    return False


@pytest.fixture(scope="module", params=["no token", "token in HOME"])
def ray_cluster(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """A Ray cluster on 127.0.0.1 (a head with two CPUs), started by the test and kept apart
    from the user's Ray: a HOME of its own (with or without ``~/.ray/auth_token``, which
    turns token authentication on), a temp dir of its own, no ``RAY_*`` variable of the
    user's, a free port, stopped through its own process group alone. Yields the address
    and the environment an ``agentproc`` command gets."""
    pytest.importorskip("ray")
    ray_bin = Path(sys.executable).with_name("ray")
    if not ray_bin.exists():
        pytest.skip("the ray command is not installed")
    root = tmp_path_factory.mktemp("ray")
    home = root / "home"
    (home / ".ray").mkdir(parents=True)
    if request.param == "token in HOME":
        (home / ".ray" / "auth_token").write_text(os.urandom(16).hex())
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    env |= {"HOME": str(home), "RAY_USAGE_STATS_ENABLED": "0"}
    port = _free_port()
    # Ray's socket paths must stay under 108 bytes: a worker's pytest folder is too deep
    temp = tempfile.mkdtemp(prefix="ray-")
    head = subprocess.Popen(
        [str(ray_bin), "start", "--head", "--block", "--port", str(port), "--node-ip-address",
         "127.0.0.1", "--num-cpus", "2", "--include-dashboard", "false", "--temp-dir",
         temp, "--disable-usage-stats"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, start_new_session=True,
    )  # fmt: skip
    try:
        if not _listening(port, 120):
            pytest.skip("Ray cannot start here")
        yield f"127.0.0.1:{port}", env
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(head.pid, signal.SIGTERM)
        try:
            head.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(head.pid, signal.SIGKILL)
            head.wait()
        shutil.rmtree(temp, ignore_errors=True)


@pytest.mark.parametrize(
    ("env", "mode"),
    [
        ({}, None),
        ({"RAY_AUTH_TOKEN": "t"}, "token"),
        ({"RAY_AUTH_TOKEN_PATH": "/t"}, "token"),
        ({"RAY_AUTH_MODE": "disabled", "RAY_AUTH_TOKEN": "t"}, "disabled"),
    ],
)
def test_ray_is_joined_with_token_authentication_when_a_token_is_at_hand(env, mode, tmp_path):
    from agentproc.runs.pool import token_mode

    env = {"HOME": str(tmp_path), **env}
    token_mode(env)
    assert env.get("RAY_AUTH_MODE") == mode
    (tmp_path / ".ray").mkdir()
    (tmp_path / ".ray" / "auth_token").write_text("t")  # as ray get-auth-token --generate
    token_mode(env)
    assert env["RAY_AUTH_MODE"] == (mode or "token")


def test_ray_backend_writes_the_file_one_process_writes_even_when_a_worker_dies(
    ray_cluster: tuple[str, dict[str, str]], tmp_path: Path
):
    address, env = ray_cluster
    suite = tmp_path / "S"
    assert main(["generate", "--steps", "25", "--count", "60", "--out", str(suite)]) == 0
    single = tmp_path / "single.jsonl"
    assert main(["run", str(suite), *SIM, "--out", str(single)]) == 0
    run = tmp_path / "run.jsonl"
    argv = [sys.executable, "-m", "agentproc", "run", str(suite), *SIM, "--backend", "ray",
            "--workers", "2", "--address", address, "--out", str(run)]  # fmt: skip
    parent = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    folder = tmp_path / "run.jsonl.shards-2"
    try:
        _wait_for_lines(folder / "shard-1-16-of-64.jsonl", 3, timeout=180)
    except AssertionError:
        parent.kill()
        raise AssertionError(parent.communicate()[1].decode()[-1500:]) from None
    pid = int((folder / "shard-1-16-of-64.pid").read_text())
    os.kill(pid, signal.SIGKILL)  # the worker running shard 1 dies; Ray runs the task again
    out, err = parent.communicate(timeout=300)
    assert parent.returncode == 0, err.decode()[-1000:]
    assert b"wrote 60 episodes" in out
    assert run.read_bytes() == single.read_bytes()
    assert json.loads(run.read_bytes().splitlines()[0])["scenario_id"]
