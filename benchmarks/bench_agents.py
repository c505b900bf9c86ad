"""Agent benchmark, run on demand: ``python benchmarks/bench_agents.py``.

Prints, with the targets they answer to:
- harness overhead per model turn with a zero-latency scripted model
  (target: a 95-step episode under 1 s in total);
- with a loopback server that adds 100 ms per completion, the speed-up of
  ``--concurrency 32`` and 64 over 1 on 64 ten-step episodes (targets: at least 30x
  and 50x), the client's CPU per model turn (target: at most 1.0 ms) and where it goes;
- for the embedded local model: decode tokens/s and the share of episode time
  spent outside the model (target: under 5%).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any, ClassVar

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from langchain_core.language_models.chat_models import BaseChatModel  # noqa: E402
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel  # noqa: E402
from langchain_core.messages import AIMessage, convert_to_openai_messages  # noqa: E402
from langchain_core.outputs import ChatGeneration, ChatResult  # noqa: E402
from pydantic import Field  # noqa: E402

from agentproc import Cell, generate_procedure, scenario_of  # noqa: E402
from agentproc.agents.harness import arun_model_episode  # noqa: E402
from agentproc.agents.providers import make_chat_model  # noqa: E402
from agentproc.agents.suite import ModelRunOptions, model_episodes  # noqa: E402
from agentproc.runs import arun_suite  # noqa: E402
from tests.fakes.openai_server import oracle_reply  # noqa: E402


class _Replayer(GenericFakeChatModel):
    def bind_tools(self, tools: Any, **kw: Any) -> _Replayer:
        return self


def _script(scenario: Any) -> list[AIMessage]:
    calls = [(s.expected_call.name, s.expected_call.arguments) for s in scenario.steps]
    calls.append(("submit_answer", {"answer": scenario.answer}))
    return [
        AIMessage(content="", tool_calls=[{"name": n, "args": a, "id": f"c{i}"}])
        for i, (n, a) in enumerate(calls)
    ]


def bench_overhead(repeats: int = 5) -> None:
    scenario = scenario_of(generate_procedure(Cell(steps=95, lookback=7), 0, 0))
    times = []
    for _ in range(repeats):
        model = _Replayer(messages=iter(_script(scenario)))
        start = time.perf_counter()
        ep = asyncio.run(arun_model_episode(scenario, model, "replayer"))
        times.append(time.perf_counter() - start)
        assert ep.metrics["verdict"] == "faithful"
    best = statistics.median(times)
    print(
        f"harness: 95-step episode (96 model turns) in {best:.3f} s median of {repeats}, "
        f"{best / 96 * 1e3:.2f} ms per turn [target: episode < 1 s]"
    )


class _OracleSleeper(BaseChatModel):
    """A perfect agent taking 100 ms and almost no CPU per reply: it measures the runner alone."""

    tools: list[dict[str, Any]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "oracle-sleeper"

    def bind_tools(self, tools: Any, **kw: Any) -> _OracleSleeper:
        return self.model_copy(update={"tools": list(tools)})

    def _generate(
        self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        reply = oracle_reply(
            {"messages": convert_to_openai_messages(messages), "tools": self.tools}
        )
        if "tool_call" in reply:
            call = reply["tool_call"]
            args = (
                call["arguments"]
                if isinstance(call["arguments"], dict)
                else json.loads(call["arguments"])
            )
            msg = AIMessage(
                content="",
                tool_calls=[{"name": call["name"], "args": args, "id": f"c{len(messages)}"}],
            )
        else:
            msg = AIMessage(content=reply.get("content", ""))
        return ChatResult(generations=[ChatGeneration(message=msg)])

    async def _agenerate(
        self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        await asyncio.sleep(0.1)
        return self._generate(messages)


def bench_concurrency_runner(episodes: int = 64) -> None:
    scenarios = [
        scenario_of(generate_procedure(Cell(steps=10, lookback=3), 0, i)) for i in range(episodes)
    ]

    async def both(d: Path) -> tuple[float, float]:
        model = _OracleSleeper()
        return (
            await _suite(model, 1, scenarios, d / "c1.jsonl"),
            await _suite(model, 32, scenarios, d / "c32.jsonl"),
        )

    with tempfile.TemporaryDirectory() as d:
        one, many = asyncio.run(both(Path(d)))
    print(
        "concurrency, runner alone (in-process model, 100 ms and no CPU per reply): "
        f"{one:.1f} s at 1, "
        f"{many:.1f} s at 32: speed-up {one / many:.1f}x [target >= 20x]"
    )


async def _suite(model: Any, concurrency: int, scenarios: list[Any], out: Path) -> float:
    start = time.perf_counter()
    episodes = model_episodes(model, "openai:fake", ModelRunOptions(concurrency=concurrency))
    summary = await arun_suite(scenarios, "openai:fake", episodes, out, concurrency=concurrency)
    took = time.perf_counter() - start
    if summary.verdicts != {"faithful": len(scenarios)}:
        print(f"  (concurrency {concurrency}: verdicts {summary.verdicts}; see {out})")
        import shutil

        shutil.copy(out, f"/tmp/agentproc-bench-c{concurrency}.jsonl")
    return took


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class _Sampler:
    """Where the client's CPU goes, by sampling: every millisecond of the process's
    CPU time (``ITIMER_PROF``, so waiting costs no samples) the stack being run is filed
    under the part of its innermost frame that it recognises (the model call, the tools
    and monitor, the run file, the harness's turn node and retries, LangGraph and
    LangChain, the runner); a stack with none of them is the event loop itself
    (sockets, timers, task switching). Each part gets its share of the samples."""

    PARTS: ClassVar[tuple[tuple[str, tuple[str, ...]], ...]] = (
        (
            "model call (request body, HTTP, reply)",
            ("agentproc/agents/completions", "agentproc/agents/transport", "aiohttp", "yarl"),
        ),
        ("tools and monitor", ("agentproc/runs/session", "agentproc/workflow", "labelling")),
        ("run file", ("agentproc/runs/runfile", "agentproc/runs/redact", "runs/layout")),
        ("turn node and retries", ("agentproc/agents/harness", "agentproc/agents/retry")),
        ("LangGraph and LangChain", ("langgraph", "langchain_core")),
        ("runner", ("agentproc/runs/runner", "agentproc/agents/suite")),
    )
    LOOP = "event loop (sockets, timers, task switching)"

    def __init__(self, interval: float = 0.001) -> None:
        self.interval = interval
        self.counts: dict[str, int] = dict.fromkeys([p for p, _ in self.PARTS] + [self.LOOP], 0)

    def __enter__(self) -> _Sampler:
        self._previous = signal.signal(signal.SIGPROF, self._sample)
        signal.setitimer(signal.ITIMER_PROF, self.interval, self.interval)
        return self

    def __exit__(self, *exc: object) -> None:
        signal.setitimer(signal.ITIMER_PROF, 0, 0)
        signal.signal(signal.SIGPROF, self._previous)

    def _sample(self, signum: int, frame: Any) -> None:
        self.counts[self._part(frame)] += 1

    def _part(self, frame: Any) -> str:
        while frame is not None:
            path = frame.f_code.co_filename
            for part, marks in self.PARTS:
                if any(m in path for m in marks):
                    return part
            frame = frame.f_back
        return self.LOOP

    def per_turn(self, total_cpu: float, turns: int) -> str:
        busy = sum(self.counts.values()) or 1
        return ", ".join(
            f"{part} {total_cpu * n / busy / turns * 1e3:.2f} ms"
            for part, n in sorted(self.counts.items(), key=lambda kv: -kv[1])
        )


async def _timed(
    model: Any, concurrency: int, scenarios: list[Any], out: Path
) -> tuple[float, float]:
    """Wall seconds and client CPU seconds of one run."""
    cpu = time.process_time()
    took = await _suite(model, concurrency, scenarios, out)
    return took, time.process_time() - cpu


def bench_concurrency(episodes: int = 64, rounds: int = 3) -> None:
    scenarios = [
        scenario_of(generate_procedure(Cell(steps=10, lookback=3), 0, i)) for i in range(episodes)
    ]
    turns = episodes * 11
    port = _free_port()
    # The server runs in its own process, so that it does not share this one's GIL.
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.fakes.openai_server",
            "--port",
            str(port),
            "--latency",
            "0.1",
            "--mode",
            "oracle",
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/v1"
    results: dict[int, list[tuple[float, float]]] = {32: [], 64: []}

    async def runs(d: Path) -> tuple[float, _Sampler, float]:
        model = make_chat_model("openai:fake", base_url=url)
        await _suite(model, 4, scenarios[:4], d / "warm.jsonl")  # imports, first connections
        one = await _timed(model, 1, scenarios, d / "c1.jsonl")
        for r in range(rounds):  # interleaved rounds: a noisy moment hits both
            for c in (32, 64):
                results[c].append(await _timed(model, c, scenarios, d / f"c{c}-{r}.jsonl"))
        with _Sampler() as split:  # runs of their own: sampling costs a little
            cpu = 0.0
            for r in range(rounds):
                cpu += (await _timed(model, 64, scenarios, d / f"split-{r}.jsonl"))[1]
        return one[0], split, cpu / rounds

    try:
        _wait(url)
        with tempfile.TemporaryDirectory() as d:
            one, split, split_cpu = asyncio.run(runs(Path(d)))
    finally:
        server.terminate()
        server.wait(10)
    floor = 2 * 11 * 0.1  # two waves of 32 episodes, 11 turns each, 100 ms a turn
    print(
        f"concurrency, through HTTP (loopback server, 100 ms per completion): {episodes} "
        f"ten-step episodes ({turns} model turns), {one:.1f} s at 1; medians of {rounds} rounds"
    )
    for c, target in ((32, 30), (64, 50)):
        wall = statistics.median(w for w, _ in results[c])
        cpu = statistics.median(c for _, c in results[c])
        walls = ", ".join(f"{w:.2f}" for w, _ in results[c])
        print(
            f"  at {c}: {wall:.2f} s ({walls}), speed-up {one / wall:.1f}x [target >= {target}x], "
            f"client CPU {cpu / turns * 1e3:.2f} ms per turn [target <= 1.0 ms]"
        )
    print(
        f"  (the 100 ms waits alone take {floor:.1f} s at 32, two waves of 11 turns, and "
        f"{floor / 2:.1f} s at 64: ceilings of {one / floor:.1f}x and {2 * one / floor:.1f}x)"
    )
    print(f"  client CPU per turn at 64, by part: {split.per_turn(split_cpu, turns)}")


def _wait(url: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(url + "/models", timeout=1).read()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"server at {url} did not start")


def bench_local(episodes: int = 3, steps: int = 5) -> None:
    model = make_chat_model("local")
    scenarios = [
        scenario_of(generate_procedure(Cell(steps=steps, lookback=3), 0, i))
        for i in range(episodes)
    ]
    asyncio.run(arun_model_episode(scenarios[0], model, "local"))  # load the model once
    tokens = model_s = wall = 0.0
    for s in scenarios:
        start = time.perf_counter()
        ep = asyncio.run(arun_model_episode(s, model, "local"))
        wall += time.perf_counter() - start
        tokens += (ep.usage or {})["output_tokens"]
        model_s += (ep.usage or {})["model_seconds"]
    print(
        f"local model: {tokens / model_s:.0f} output tokens/s (prompt reading included), "
        f"{(wall - model_s) / wall * 100:.1f}% of episode time outside the model "
        f"over {episodes} {steps}-step episodes [target < 5%]"
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", choices=["overhead", "runner", "concurrency", "local"])
    args = p.parse_args()
    steps = {
        "overhead": bench_overhead,
        "runner": bench_concurrency_runner,
        "concurrency": bench_concurrency,
        "local": bench_local,
    }
    for name, fn in steps.items():
        if args.only in (None, name):
            fn()


if __name__ == "__main__":
    main()
