"""Agent benchmark, run on demand: ``python benchmarks/bench_agents.py``.

Prints, with the targets they answer to:
- harness overhead per model turn with a zero-latency scripted model
  (target: a 95-step episode under 1 s in total);
- with a loopback server that adds 100 ms per completion, the speed-up of
  ``--concurrency 32`` and 64 over 1 on 64 ten-step episodes (targets: at least 30x
  and 50x), the client's CPU per model turn (target: at most 1.5 ms) and where it goes;
- for the embedded local model: decode tokens/s and the share of episode time
  spent outside the model (target: under 5%).
"""

from __future__ import annotations

import argparse
import asyncio
import json
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
from agentproc.agents.suite import ModelRunOptions, arun_model_suite  # noqa: E402
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
    summary = await arun_model_suite(
        scenarios, "openai:fake", model, out, ModelRunOptions(concurrency=concurrency)
    )
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


class _Split:
    """Thread CPU time spent in a few parts of the client, measured by wrapping them:
    coroutines are timed step by step (each slice they run between two awaits), so a
    part's figure includes what it calls and excludes the time it waits."""

    PARTS: ClassVar[dict[str, tuple[str, str, str]]] = {
        "graph": ("langgraph.pregel.main", "Pregel", "ainvoke"),
        "model call": ("agentproc.agents.completions", "CompletionsChat", "next_turn"),
        "tools and monitor": ("agentproc.runs.session", "EpisodeSession", "call"),
        "run file": ("agentproc.runs.runfile", "RunWriter", "write"),
    }

    def __init__(self) -> None:
        self.cpu = dict.fromkeys(self.PARTS, 0.0)
        self._saved: list[tuple[Any, str, Any]] = []

    def __enter__(self) -> _Split:
        import importlib
        import inspect

        for part, (module, cls_name, attr) in self.PARTS.items():
            cls = getattr(importlib.import_module(module), cls_name)
            fn = getattr(cls, attr)
            self._saved.append((cls, attr, fn))
            wrap = self._coroutine if inspect.iscoroutinefunction(fn) else self._function
            setattr(cls, attr, wrap(fn, part))
        return self

    def __exit__(self, *exc: object) -> None:
        for cls, attr, fn in self._saved:
            setattr(cls, attr, fn)

    def _function(self, fn: Any, part: str) -> Any:
        def timed(*a: Any, **k: Any) -> Any:
            start = time.thread_time()
            try:
                return fn(*a, **k)
            finally:
                self.cpu[part] += time.thread_time() - start

        return timed

    def _coroutine(self, fn: Any, part: str) -> Any:
        split = self

        class Steps:
            def __init__(self, coro: Any) -> None:
                self.coro = coro

            def __await__(self) -> Any:
                value: Any = None
                error: BaseException | None = None
                while True:
                    start = time.thread_time()
                    try:
                        step = self.coro.throw(error) if error else self.coro.send(value)
                    except StopIteration as stop:
                        return stop.value
                    finally:
                        split.cpu[part] += time.thread_time() - start
                    try:
                        value, error = (yield step), None
                    except BaseException as exc:  # passed on to the coroutine
                        value, error = None, exc

        async def timed(*a: Any, **k: Any) -> Any:
            return await Steps(fn(*a, **k))

        return timed

    def per_turn(self, total_cpu: float, turns: int) -> str:
        c = self.cpu
        parts = {
            "LangGraph (graph steps, harness nodes)": c["graph"]
            - c["model call"]
            - c["tools and monitor"],
            "model call (request body, HTTP, reply)": c["model call"],
            "tools and monitor": c["tools and monitor"],
            "run file": c["run file"],
        }
        parts["the rest (event loop, sockets, runner, episode setup)"] = total_cpu - sum(
            parts.values()
        )
        return ", ".join(f"{k} {v / turns * 1e3:.2f} ms" for k, v in parts.items())


async def _timed(
    model: Any, concurrency: int, scenarios: list[Any], out: Path
) -> tuple[float, float]:
    """Wall seconds and client CPU seconds of one run."""
    cpu = time.process_time()
    took = await _suite(model, concurrency, scenarios, out)
    return took, time.process_time() - cpu


def bench_concurrency(episodes: int = 64) -> None:
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
    results: dict[int, tuple[float, float]] = {}

    async def runs(d: Path) -> tuple[_Split, float]:
        model = make_chat_model("openai:fake", base_url=url)
        await _suite(model, 4, scenarios[:4], d / "warm.jsonl")  # imports, first connections
        for c in (1, 32, 64):
            results[c] = await _timed(model, c, scenarios, d / f"c{c}.jsonl")
        with _Split() as split:  # a run of its own: the wrappers cost a little
            _, cpu = await _timed(model, 64, scenarios, d / "split.jsonl")
        return split, cpu

    try:
        _wait(url)
        with tempfile.TemporaryDirectory() as d:
            split, split_cpu = asyncio.run(runs(Path(d)))
    finally:
        server.terminate()
        server.wait(10)
    one = results[1][0]
    print(
        f"concurrency, through HTTP (loopback server, 100 ms per completion): {episodes} "
        f"ten-step episodes ({turns} model turns), {one:.1f} s at 1"
    )
    for c, target in ((32, 30), (64, 50)):
        wall, cpu = results[c]
        print(
            f"  at {c}: {wall:.2f} s, speed-up {one / wall:.1f}x [target >= {target}x], "
            f"client CPU {cpu / turns * 1e3:.2f} ms per turn [target <= 1.5 ms]"
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
