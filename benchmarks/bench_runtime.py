"""The engines of the embedded model compared on the same episodes, run on demand:
``python benchmarks/bench_runtime.py [--episodes 4] [--steps 3] [--threads 2]``.

Each episode runs once per engine (``xllamacpp``, ``llama-cpp``), each time in a
fresh process, the engines taking turns episode by episode so that both see the
same load on a shared machine; greedy decoding. Printed:

- whether the two give the same calls, episode by episode, and for an episode
  where they do not, the first model turn that differs with both replies;
- median import and load time, prompt and decode tokens/s (summed over every
  model turn: tokens evaluated / time the engine spent on them), the median time
  of an episode, resident memory after loading and at peak (the largest of the
  processes), and the ratios;
- the load average before and after, since the machine may be shared.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

ENGINES = ("xllamacpp", "llama-cpp")


def _rss_mb(field: str) -> float:
    """``VmRSS`` (now) or ``VmHWM`` (peak) of this process, in MiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def child(engine_name: str, first: int, episodes: int, steps: int, threads: int) -> dict[str, Any]:
    """Run the episodes with one engine in this process; the figures as a dict."""
    from agentproc import Cell, generate_procedure, scenario_of
    from agentproc.agents.harness import arun_model_episode
    from agentproc.agents.local import LocalChatModel, model_path
    from agentproc.agents.runtimes import engine

    base_rss = _rss_mb("VmRSS")
    start = time.perf_counter()
    module = engine(engine_name)
    __import__("xllamacpp" if engine_name == "xllamacpp" else "llama_cpp")
    imported = time.perf_counter()
    module.load(model_path(), 8192, threads or None)
    loaded = time.perf_counter()
    load_rss = _rss_mb("VmRSS") - base_rss

    turns: list[dict[str, Any]] = []
    complete = module.complete

    def recording(rt: Any, messages: Any, schema: str, sampling: Any) -> Any:
        c = complete(rt, messages, schema, sampling)
        turns.append(
            {
                "text": c.text,
                "evaluated": c.prompt_tokens - c.cached_tokens,
                "generated": c.completion_tokens,
                "prompt_ms": c.prompt_ms,
                "decode_ms": c.decode_ms,
            }
        )
        return c

    module.complete = recording
    model = LocalChatModel(runtime=engine_name, n_threads=threads or None)
    out = []
    for i in range(first, first + episodes):
        scenario = scenario_of(generate_procedure(Cell(steps=steps, lookback=2), 0, i))
        first = len(turns)
        t = time.perf_counter()
        ep = asyncio.run(arun_model_episode(scenario, model, "local"))
        out.append(
            {
                "scenario": scenario.id,
                "seconds": time.perf_counter() - t,
                "calls": [[c.name, c.arguments] for c in ep.calls],
                "stop_reason": ep.stop_reason,
                "turns": turns[first:],
            }
        )
    return {
        "engine": engine_name,
        "import_s": [imported - start],
        "load_s": [loaded - imported],
        "load_rss_mb": load_rss,
        "peak_rss_mb": _rss_mb("VmHWM"),
        "episodes": out,
    }


def _figures(r: dict[str, Any]) -> dict[str, float]:
    turns = [t for ep in r["episodes"] for t in ep["turns"]]
    prompt_ms = sum(t["prompt_ms"] for t in turns)
    decode_ms = sum(t["decode_ms"] for t in turns)
    return {
        "import s": statistics.median(r["import_s"]),
        "load s": statistics.median(r["load_s"]),
        "prompt tok/s": sum(t["evaluated"] for t in turns) / (prompt_ms / 1e3 or float("nan")),
        "decode tok/s": sum(t["generated"] for t in turns) / (decode_ms / 1e3 or float("nan")),
        "s/episode": statistics.median(ep["seconds"] for ep in r["episodes"]),
        "RSS loaded MiB": r["load_rss_mb"],
        "RSS peak MiB": r["peak_rss_mb"],
    }


def _compare(a: dict[str, Any], b: dict[str, Any]) -> None:
    same = 0
    for ea, eb in zip(a["episodes"], b["episodes"], strict=True):
        if ea["calls"] == eb["calls"]:
            same += 1
            continue
        pairs = zip(ea["turns"], eb["turns"], strict=False)
        k = next(
            (i for i, (x, y) in enumerate(pairs) if x["text"] != y["text"]),
            min(len(ea["turns"]), len(eb["turns"])),
        )
        print(f"  {ea['scenario']}: first different reply at model turn {k}")
        for r, ep in ((a, ea), (b, eb)):
            text = ep["turns"][k]["text"] if k < len(ep["turns"]) else "(no turn)"
            print(f"    {r['engine']:>10}: {text}")
    total = len(a["episodes"])
    turns_a = [t["text"] for ep in a["episodes"] for t in ep["turns"]]
    turns_b = [t["text"] for ep in b["episodes"] for t in ep["turns"]]
    same_turns = sum(x == y for x, y in zip(turns_a, turns_b, strict=False))
    print(
        f"same calls: {same}/{total} episodes; same reply text: {same_turns} of "
        f"{len(turns_a)} / {len(turns_b)} model turns"
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--episodes", type=int, default=4)
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--threads", type=int, default=0, help="0: the engines' default")
    p.add_argument("--engines", default=",".join(ENGINES))
    p.add_argument("--child", help=argparse.SUPPRESS)
    p.add_argument("--first", type=int, default=0, help=argparse.SUPPRESS)
    args = p.parse_args()
    from agentproc.agents.runtimes import default_threads

    if args.child:
        figures = child(args.child, args.first, args.episodes, args.steps, args.threads)
        print(json.dumps(figures))
        return
    print("load average before:", os.getloadavg())
    merged: dict[str, dict[str, Any]] = {}
    for i in range(args.episodes):
        for name in args.engines.split(","):
            cmd = [sys.executable, __file__, "--child", name, "--first", str(i), "--episodes", "1"]
            cmd += ["--steps", str(args.steps), "--threads", str(args.threads)]
            proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
            if proc.returncode != 0:
                print(f"{name}: failed\n{proc.stderr[-2000:]}")
                return
            r = json.loads(proc.stdout.strip().splitlines()[-1])
            m = merged.setdefault(name, {**r, "import_s": [], "load_s": [], "episodes": []})
            m["import_s"] += r["import_s"]
            m["load_s"] += r["load_s"]
            m["episodes"] += r["episodes"]
            m["load_rss_mb"] = max(m["load_rss_mb"], r["load_rss_mb"])
            m["peak_rss_mb"] = max(m["peak_rss_mb"], r["peak_rss_mb"])
    results = list(merged.values())
    print("load average after: ", os.getloadavg())
    print(
        f"\n{args.episodes} episodes of {args.steps} steps (look-back 2), greedy, "
        f"{args.threads or default_threads()} threads, n_ctx 8192"
    )
    figures = {r["engine"]: _figures(r) for r in results}
    names = list(figures)
    print(
        f"{'':16}"
        + "".join(f"{n:>12}" for n in names)
        + ("       ratio" if len(names) == 2 else "")
    )
    for key in next(iter(figures.values()), {}):
        row = [figures[n][key] for n in names]
        ratio = f"{row[0] / row[1]:12.2f}" if len(row) == 2 and row[1] else ""
        print(f"{key:16}" + "".join(f"{v:12.2f}" for v in row) + ratio)
    if len(results) == 2:
        _compare(results[0], results[1])


if __name__ == "__main__":
    main()
