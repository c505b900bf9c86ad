"""Cost parity of a declared workflow's suite with a generated procedure's, run on demand:
``python benchmarks/bench_workflow.py``.

Two suites of the same size: ``--count`` instances of a shipped workflow (12 steps by
default, every instance distinct; a branched one, ``--workflow refund_approval``, draws
its instances over its paths, exits included, and the agent runs each one's path) and
``--count`` generated procedures of as many steps (a branched workflow's: as many as its
paths require on average; one grid cell, every procedure distinct). Each round runs
``agentproc run`` over each (``--agent``, ``sim:oracle`` by default: one call per turn, as
many calls on both) and then ``agentproc relabel`` of each run file, each in a child
process pinned to one core and timed from inside, after its imports (what the command line
does, the command's start-up left out), in CPU seconds (the machine is shared: its other
work slows the wall clock more than the CPU time). Rounds are interleaved, so both suites
see the same machine; the figures are medians over the rounds, the ratios the median of
each round's ratio.

Prints the cost per turn of ``run``, the cost per call of ``relabel`` and the run
file's bytes per call, for each suite, and the workflow's over the procedure's
[target: within about 10% per turn and per call], with the cost per episode of ``run``
and the calls an episode makes (a branched workflow's path may make fewer calls than the
procedures' whole steps: the episode's fixed cost then weighs more on each). Several
workflows (``--workflow refund_approval,order_fulfilment``) are measured in turn, each
against procedures of its own length, and summed up at the end. ``--against DIR`` times
another checkout of agentproc in the same rounds, each tree in turn on the same suites,
and prints its figures as ``before`` and this tree's as ``now``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORKFLOWS = ROOT / "scenarios" / "workflows"

_CHILD = """
import sys, time
from agentproc.cli.main import main
from agentproc.analysis import relabel_run
import agentproc.agents.sim, agentproc.cli.commands, agentproc.runs, agentproc.workflow
what, path, *argv = sys.argv[1:]
t = time.process_time()
if what == "run":
    code = main(argv)
    assert code == 0, code
else:
    relabel_run(__import__("pathlib").Path(path))
print(time.process_time() - t)
"""


def _timed(what: str, path: Path, argv: list[str], tree: Path = ROOT) -> float:
    """CPU seconds ``agentproc run`` (``argv``) or a relabel of ``path`` took in a child
    pinned to one core, after its imports (``tree``: the checkout whose code runs)."""
    out = subprocess.run(
        ["taskset", "-c", "0", sys.executable, "-c", _CHILD, what, str(path), *argv],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(tree)},
        cwd=tree,  # ``-c`` puts the working folder first on the path
    ).stdout
    return float(out.split()[-1])


def _generate(argv: list[str]) -> None:
    subprocess.run(
        [sys.executable, "-m", "agentproc", "generate", *argv], check=True, capture_output=True
    )


def _calls(path: Path) -> tuple[int, int]:
    """Episodes and calls of a run file."""
    episodes = calls = 0
    with open(path, "rb") as fh:
        for line in fh:
            episodes += 1
            calls += len(json.loads(line)["calls"])
    return episodes, calls


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--count", type=int, default=2000, help="instances (and procedures)")
    p.add_argument(
        "--workflow",
        default="invoice_approval",
        help="shipped workflows or .toml files, comma-separated (each measured in turn)",
    )
    p.add_argument("--agent", default="sim:oracle", help="the simulated agent")
    p.add_argument("--repeats", type=int, default=5, help="interleaved rounds")
    p.add_argument("--self-contained", action="store_true", help="run --self-contained")
    p.add_argument(
        "--against",
        type=Path,
        help="another checkout of agentproc, timed in the same rounds, each tree in turn "
        "(its figures printed first, as 'before')",
    )
    args = p.parse_args()
    trees = {"this tree": ROOT} if args.against is None else {"before": args.against, "now": ROOT}
    summary = []
    for name in args.workflow.split(","):
        path = Path(name) if name.endswith(".toml") else WORKFLOWS / f"{name}.toml"
        summary.append((path.stem, _measure(args, path, trees)))
    if len(summary) > 1:
        print("\nworkflow / procedure (medians of the rounds' ratios):")
        for stem, ratios in summary:
            for tree, (turn, call, episode) in ratios.items():
                print(
                    f"  {stem:22} {tree:9} run per turn {turn:.2f}x, relabel per call "
                    f"{call:.2f}x, run per episode {episode:.2f}x"
                )


def _measure(
    args: argparse.Namespace, path: Path, trees: dict[str, Path]
) -> dict[str, tuple[float, float, float]]:
    """One workflow against procedures of as many steps, on each tree: the medians of the
    rounds' ratios, run per turn, relabel per call and run per episode."""
    steps = _steps(path)
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        suites = {"workflow": tmp / "wf", "procedure": tmp / "proc"}
        _generate(
            [
                "--workflow",
                str(path),
                "--count",
                str(args.count),
                "--seed",
                "0",
                "--out",
                str(suites["workflow"]),
            ]
        )
        # A branched workflow's instances run their paths: the procedures get as many
        # steps as a path has on average, so that both make as many calls an episode.
        steps = _path_steps(suites["workflow"]) or steps
        grid = ["--steps", str(steps), "--lookback", "3", "--count", str(args.count)]
        _generate([*grid, "--seed", "0", "--out", str(suites["procedure"])])
        run = {t: {k: [] for k in suites} for t in trees}
        relabel = {t: {k: [] for k in suites} for t in trees}
        size: dict[str, dict[str, tuple[int, int, int]]] = {t: {} for t in trees}
        extra = ["--self-contained"] if args.self_contained else []
        for _ in range(args.repeats):
            for n, (tree, code) in enumerate(trees.items()):
                for kind, suite in suites.items():
                    out = tmp / f"{n}-{kind}.jsonl"
                    argv = ["run", str(suite), "--agent", args.agent, "--out", str(out)]
                    run[tree][kind].append(_timed("run", out, [*argv, "--overwrite", *extra], code))
                    relabel[tree][kind].append(_timed("relabel", out, [], code))
                    size[tree][kind] = (*_calls(out), out.stat().st_size)
        ratios = {}
        for tree in trees:
            print(f"{path.stem}, {tree}:")
            ratios[tree] = _report(args, steps, run[tree], relabel[tree], size[tree])
        return ratios


def _path_steps(suite: Path) -> int | None:
    """The mean number of steps an instance's path requires, rounded (``None``: not a
    branched workflow's suite)."""
    counts = []
    with open(suite / "scenarios.jsonl", "rb") as fh:
        for line in fh:
            steps = json.loads(line)["steps"]
            if "required" not in steps[0]:
                return None
            counts.append(sum(s["required"] for s in steps))
    return max(1, round(statistics.mean(counts)))


def _steps(path: Path) -> int:
    """A workflow's tool steps (a branched one's exits left out)."""
    import tomllib

    listed = tomllib.loads(path.read_text(encoding="utf-8"))["steps"]
    return sum(s.get("kind") != "exit" for s in listed)


def _report(
    args: argparse.Namespace,
    steps: int,
    run: dict[str, list[float]],
    relabel: dict[str, list[float]],
    size: dict[str, tuple[int, int, int]],
) -> tuple[float, float, float]:
    for kind in run:
        episodes, calls, nbytes = size[kind]
        print(
            f"{kind:9}: {episodes} episodes, {calls} calls ({steps} steps, {args.agent}): "
            f"run {statistics.median(run[kind]) / calls * 1e6:.0f} us per turn, relabel "
            f"{statistics.median(relabel[kind]) / calls * 1e6:.1f} us per call, "
            f"{nbytes / calls:.0f} bytes per call ({nbytes / 1e6:.1f} MB); per episode run "
            f"{statistics.median(run[kind]) / episodes * 1e6:.0f} us, relabel "
            f"{statistics.median(relabel[kind]) / episodes * 1e6:.0f} us"
        )
    (we, wc, wb), (pe, pc, pb) = size["workflow"], size["procedure"]
    medians = []
    for name, times, w_n, p_n in (
        ("run per turn", run, wc, pc),
        ("relabel per call", relabel, wc, pc),
        ("run per episode", run, we, pe),
    ):
        pairs = zip(times["workflow"], times["procedure"], strict=True)
        ratios = sorted((w / w_n) / (q / p_n) for w, q in pairs)
        medians.append(statistics.median(ratios))
        target = " [target <= 1.1x]" if name != "run per episode" else ""
        print(
            f"workflow / procedure, {name}: {medians[-1]:.2f}x "
            f"(rounds {', '.join(f'{r:.2f}' for r in ratios)}){target}"
        )
    print(
        f"workflow / procedure, bytes per call: {(wb / wc) / (pb / pc):.2f}x; calls per "
        f"episode {wc / we:.2f} against {pc / pe:.2f}"
    )
    return medians[0], medians[1], medians[2]


if __name__ == "__main__":
    main()
