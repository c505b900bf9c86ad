"""Scaling benchmark, run on demand: ``python benchmarks/bench_workers.py``.

Prints, with the targets they answer to:
- a simulated agent over one suite with ``--workers 1`` and ``--workers 2``:
  wall time (median of ``--repeats``) and the speed-up (target: at least 1.8x on
  two cores), beside the same two halves run by hand at once (two independent
  ``run --shard k/2`` processes, no parent, no merge): what two processes get on the
  machine, and what the parent adds;
- the same with ``--backend ray`` against a Ray cluster the benchmark starts on
  127.0.0.1 (head plus one worker node, one CPU each): episodes/s with one and two
  shards, and the overhead per episode against ``--workers`` (``--no-ray`` skips it);
- an ``openai:`` model against the loopback server with 100 ms per completion: episodes/s
  with one and two workers, local and on Ray (``--no-server`` skips it).

Quote the machine's load (``uptime``) with the figures: the machine is shared.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
AGENT = ["--agent", "sim:decay"]


def agentproc(*argv: object, env: dict[str, str] | None = None) -> float:
    """Run one command; its wall time in seconds."""
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "agentproc", *map(str, argv)],
        check=True,
        capture_output=True,
        env=env,
        cwd=ROOT,
    )
    return time.perf_counter() - start


def median_run(
    suite: Path, out: Path, repeats: int, *extra: object, env=None, agent: bool = True
) -> float:
    times = []
    who = AGENT if agent else []
    for _ in range(repeats):
        times.append(agentproc("run", suite, *who, "--overwrite", "--out", out, *extra, env=env))
    return statistics.median(times)


def by_hand(suite: Path, root: Path) -> float:
    """Both halves at once as two independent ``run --shard k/2`` processes (no parent, no
    merge): what any two-process split of the suite gets on this machine; its wall time."""
    start = time.perf_counter()
    argv = [sys.executable, "-m", "agentproc", "run", str(suite), *AGENT, "--overwrite"]
    procs = [
        subprocess.Popen(
            [*argv, "--shard", f"{k}/2", "--out", str(root / f"hand-{k}.jsonl")],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd=ROOT,
        )
        for k in (1, 2)
    ]
    if any(p.wait() for p in procs):
        raise RuntimeError("a shard run by hand failed")
    return time.perf_counter() - start


def start_ray(temp: Path) -> tuple[str, dict[str, str]] | None:
    ray_bin = Path(sys.executable).with_name("ray")
    if not ray_bin.exists():
        print("ray: not installed (pip install 'agentproc[ray]'); skipped")
        return None
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    common = ["--node-ip-address", "127.0.0.1", "--num-cpus", "1"]
    subprocess.run(
        [str(ray_bin), "start", "--head", "--port", "6392", "--include-dashboard", "false",
         "--temp-dir", str(temp), "--disable-usage-stats", *common],
        check=True, capture_output=True, env=env,
    )  # fmt: skip
    subprocess.run(
        [str(ray_bin), "start", "--address", "127.0.0.1:6392", *common],
        check=True, capture_output=True, env=env,
    )  # fmt: skip
    return "127.0.0.1:6392", env


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", default="25,50", help="suite lengths (default 25,50)")
    p.add_argument("--count", type=int, default=1000, help="procedures per cell (default 1000)")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--no-ray", action="store_true")
    p.add_argument("--no-server", action="store_true", help="skip the loopback-server part")
    a = p.parse_args()
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} (1 and 5 min)")
    # Every process here starts from bytecode, as an installed package does (where
    # PYTHONDONTWRITEBYTECODE is set, each would compile the package's source again).
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "agentproc")], check=True)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        suite, out = root / "S", root / "run.jsonl"
        agentproc("generate", "--steps", a.steps, "--count", a.count, "--out", suite)
        episodes = len((suite / "procedures.jsonl").read_bytes().splitlines())
        start = median_run(suite, out, a.repeats, "--limit", "1")
        ones, twos, hands = [], [], []
        for _ in range(a.repeats):  # interleaved: a noisy moment of the host hits all three
            ones.append(median_run(suite, out, 1))
            twos.append(median_run(suite, out, 1, "--workers", "2"))
            hands.append(by_hand(suite, root))
        one, two, hand = statistics.median(ones), statistics.median(twos), statistics.median(hands)
        ratios = [o / t for o, t in zip(ones, twos, strict=True)]
        ceiling = [o / h for o, h in zip(ones, hands, strict=True)]
        print(f"{episodes} episodes, sim:decay, median of {a.repeats}:")
        print(f"  fixed cost of one process (a run of 1 episode): {start:.2f} s")
        print(f"  --workers 1: {one:.2f} s ({episodes / one:.0f} episodes/s)")
        print(f"  --workers 2: {two:.2f} s ({episodes / two:.0f} episodes/s)")
        print(
            f"  speed-up: {statistics.median(ratios):.2f}x, median of the rounds' ratios "
            f"({', '.join(f'{r:.2f}' for r in ratios)}) (target >= 1.8x)"
        )
        print(
            f"  (the two halves run by hand at once, with no parent and no merge: {hand:.2f} s, "
            f"{statistics.median(ceiling):.2f}x ({', '.join(f'{r:.2f}' for r in ceiling)}), what "
            "two independent processes get on this machine; --workers 2 against them: "
            f"{statistics.median(t - h for t, h in zip(twos, hands, strict=True)):+.2f} s, the "
            "parent's start and the merge less what forked workers and shared-out spans save)"
        )
        if a.no_ray:
            return
        cluster = start_ray(root / "ray")
        if cluster is None:
            return
        address, env = cluster
        try:
            r1 = median_run(suite, out, a.repeats, "--backend", "ray", "--workers", "1",
                            "--address", address, env=env)  # fmt: skip
            r2 = median_run(suite, out, a.repeats, "--backend", "ray", "--workers", "2",
                            "--address", address, env=env)  # fmt: skip
            print(f"  ray, 1 shard:  {r1:.2f} s ({episodes / r1:.0f} episodes/s)")
            print(f"  ray, 2 shards: {r2:.2f} s ({episodes / r2:.0f} episodes/s), {r1 / r2:.2f}x")
            print(
                f"  ray overhead per episode vs --workers 2: {(r2 - two) / episodes * 1000:.2f} ms"
            )
            if not a.no_server:
                bench_server(root, a.repeats, address, env)
        finally:
            subprocess.run([shutil.which("ray") or "ray", "stop", "--force"], capture_output=True)


def bench_server(root: Path, repeats: int, address: str, env: dict[str, str]) -> None:
    """An ``openai:`` model against the loopback server with a fixed latency per
    completion: episodes/s with one and two workers, local processes and Ray shards."""
    suite, out = root / "H", root / "http.jsonl"
    agentproc("generate", "--steps", "5", "--count", "96", "--lookback", "2", "--out", suite)
    episodes = len((suite / "procedures.jsonl").read_bytes().splitlines())
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "tests.fakes.openai_server", "--port", str(port),
         "--latency", str(LATENCY), "--mode", "oracle"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    agent = ["--agent", "openai:fake", "--base-url", f"http://127.0.0.1:{port}/v1"]
    run = [*agent, "--concurrency", str(CONCURRENCY)]
    try:
        _wait(port)
        times = {
            label: median_run(suite, out, repeats, *run, *extra, env=env, agent=False)
            for label, extra in (
                ("one episode (the fixed cost of a process)", ["--limit", "1"]),
                ("--workers 1", ["--workers", "1"]),
                ("--workers 2", ["--workers", "2"]),
                ("ray, 1 shard", ["--backend", "ray", "--workers", "1", "--address", address]),
                ("ray, 2 shards", ["--backend", "ray", "--workers", "2", "--address", address]),
            )
        }
    finally:
        server.terminate()
        server.wait(10)
    print(
        f"{episodes} five-step episodes of an openai: model against the loopback server "
        f"({LATENCY * 1000:.0f} ms per completion, --concurrency {CONCURRENCY} per worker), "
        f"median of {repeats}:"
    )
    fixed = times.pop("one episode (the fixed cost of a process)")
    print(f"  one episode (the fixed cost of a process): {fixed:.2f} s")
    for label, took in times.items():
        print(f"  {label}: {took:.2f} s ({episodes / took:.1f} episodes/s)")
    local = times["--workers 1"] / times["--workers 2"]
    ray = times["ray, 1 shard"] / times["ray, 2 shards"]
    extra_ms = (times["ray, 2 shards"] - times["--workers 2"]) / episodes * 1000
    print(
        f"  speed-up from 1 to 2: {local:.2f}x local, {ray:.2f}x ray; "
        f"ray overhead per episode vs --workers 2: {extra_ms:.0f} ms"
    )


LATENCY = 0.1
CONCURRENCY = 8


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait(port: int, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"the loopback server on port {port} did not start")


if __name__ == "__main__":
    main()
