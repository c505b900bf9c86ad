"""A bug in your agent is debuggable: the run file keeps the exception's type, message and
the agent's own file and line, the first is said on stderr, and ``--debug`` stops at it with
the whole traceback (``run``, ``compare`` and ``stress``).

The agent is a factory file the test writes: a LangGraph graph whose ``ChatOpenAI`` talks to
the demo endpoint (started here on 127.0.0.1) and whose own code then fails.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import cli, records

from agentproc.agents.demo import ChatServer, demo_server
from agentproc.cli import main

BUGGY = """\
import os
from langchain_openai import ChatOpenAI
from langgraph.graph import START, MessagesState, StateGraph


def make_agent(tools):
    llm = ChatOpenAI(model="demo", base_url=os.environ["DEMO_URL"], api_key="unused")
    llm = llm.bind_tools(tools)

    async def model(state):
        reply = await llm.ainvoke(state["messages"])
        values = {}
        return {"messages": [reply], "value": values["S7"]}

    graph = StateGraph(MessagesState)
    graph.add_node("model", model)
    graph.add_edge(START, "model")
    return graph.compile()
"""
BUG_LINE = 13


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("errors") / "suite"
    assert main(["generate", "--steps", "2,3", "--count", "2", "--out", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def server() -> Iterator[ChatServer]:
    with demo_server("faithful") as srv:
        yield srv


@pytest.fixture
def agent(server: ChatServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("DEMO_URL", server.base_url)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine.py").write_text(BUGGY)
    return "mine.py:make_agent"


def test_the_run_file_names_the_exception_and_the_agents_line(capsys, suite, agent, tmp_path):
    code, _, err = cli(capsys, "run", suite, "--agent", agent, "--out", tmp_path / "r.jsonl")
    assert code == 3, err
    error = records(tmp_path / "r.jsonl")[0]["error"]
    assert (error["kind"], error["type"]) == ("harness", "KeyError")
    assert error["message"] == "KeyError: 'S7'"
    source = 'return {"messages": [reply], "value": values["S7"]}'
    assert error["frames"][-1] == f"mine.py:{BUG_LINE} in model: {source}"


def test_the_first_harness_error_is_said_on_stderr_with_its_line(capsys, suite, agent, tmp_path):
    code, _, err = cli(capsys, "run", suite, "--agent", agent, "--out", tmp_path / "r.jsonl")
    assert code == 3
    said = [line for line in err.splitlines() if line.startswith("agentproc: harness error")]
    assert len(said) == 1
    assert f"KeyError: 'S7' at mine.py:{BUG_LINE} in model" in said[0]
    assert "--debug" in said[0]


def test_debug_stops_run_at_the_first_harness_error_with_the_traceback(
    capsys, suite, agent, tmp_path
):
    code, _, err = cli(
        capsys, "run", suite, "--agent", agent, "--out", tmp_path / "r.jsonl", "--debug"
    )
    assert code == 3
    assert "Traceback (most recent call last)" in err
    assert f'mine.py", line {BUG_LINE}, in model' in err
    assert err.rstrip().splitlines()[-1].startswith("agentproc: error: --debug: the run stopped")
    assert len(records(tmp_path / "r.jsonl")) == 1


@pytest.mark.parametrize("command", ["compare", "stress"])
def test_debug_stops_a_sweep_at_its_first_harness_error(capsys, suite, agent, tmp_path, command):
    code, _, err = cli(
        capsys, command, suite, "--agent", agent, "--variants", "default,terse",
        "--out", tmp_path / "sweep", "--debug",
    )  # fmt: skip
    assert code == 3
    assert f'mine.py", line {BUG_LINE}, in model' in err
    assert not (tmp_path / "sweep" / "terse.jsonl").exists()


def test_debug_over_workers_is_refused_before_the_run(capsys, suite, agent, tmp_path):
    code, _, err = cli(
        capsys, "run", suite, "--agent", agent, "--out", tmp_path / "r.jsonl",
        "--debug", "--workers", "2",
    )  # fmt: skip
    assert code == 2
    assert err.strip() == "agentproc: error: --debug stops a run in this process: drop --workers"
    assert not (tmp_path / "r.jsonl").exists()


def test_a_run_file_of_errors_without_type_or_frames_still_reads(capsys, suite, agent, tmp_path):
    cli(capsys, "run", suite, "--agent", agent, "--out", tmp_path / "r.jsonl")
    old = tmp_path / "old.jsonl"
    lines = []
    for line in (tmp_path / "r.jsonl").read_text().splitlines():
        rec = json.loads(line)
        del rec["error"]["type"], rec["error"]["frames"]
        lines.append(json.dumps(rec))
    old.write_text("\n".join(lines) + "\n")
    assert [r["error"]["message"] for r in records(old)] == ["KeyError: 'S7'"] * 3
    code, _, err = cli(capsys, "report", old)
    assert code == 0, err
    assert "3 episodes errored" in err


SECOND_FAILS = """\
SEEN = []


class Agent:
    def __init__(self, tools):
        self.tools = {t.name: t for t in tools}

    async def ainvoke(self, inputs, config=None):
        SEEN.append(1)
        if len(SEEN) == 2:
            raise KeyError("S7")
        await self.tools["submit_answer"].ainvoke({"answer": 0})
        return {}


def make_agent(tools):
    return Agent(tools)
"""


def test_over_workers_the_first_harness_error_is_said_by_the_parent(capsys, suite, tmp_path):
    (tmp_path / "second.py").write_text(SECOND_FAILS)
    code, _, err = cli(
        capsys, "run", suite, "--agent", f"{tmp_path / 'second.py'}:make_agent",
        "--workers", "2", "--out", tmp_path / "r.jsonl",
    )  # fmt: skip
    assert code == 3, err
    said = [line for line in err.splitlines() if line.startswith("agentproc: harness error")]
    assert len(said) == 1
    assert "KeyError: 'S7' at " in said[0] and "second.py:11 in ainvoke" in said[0]


LEAKY = """\
import os


class Agent:
    async def ainvoke(self, inputs, config=None):
        key = os.environ["OPENAI_API_KEY"]
        raise RuntimeError(f"upstream refused key {key} at http://bob:pa55w0rd@127.0.0.1:9/v1")


def make_agent(tools):
    return Agent()
"""
LEAKED_KEY = "sk-live-Ab3dEf6hIj9kLm2nOp5qRs8tUv1w"


@pytest.mark.parametrize("command", ["run", "compare"])
@pytest.mark.parametrize("debug", [False, True], ids=["plain", "debug"])
def test_an_agents_exception_is_printed_without_its_secrets(
    capsys, suite, tmp_path, monkeypatch, command, debug
):
    monkeypatch.setenv("OPENAI_API_KEY", LEAKED_KEY)
    (tmp_path / "leaky.py").write_text(LEAKY)
    argv = [command, suite, "--agent", f"{tmp_path / 'leaky.py'}:make_agent"]
    argv += ["--variants", "default,terse"] if command == "compare" else []
    argv += ["--out", tmp_path / ("sweep" if command == "compare" else "r.jsonl")]
    code, out, err = cli(capsys, *argv, *(["--debug"] if debug else []))
    assert code == 3
    assert "upstream refused key [REDACTED] at http://[REDACTED]@127.0.0.1:9/v1" in err
    assert ("Traceback (most recent call last)" in err) == debug
    for leaked in (LEAKED_KEY, LEAKED_KEY.removeprefix("sk-live-"), "pa55w0rd"):
        assert leaked not in out + err
