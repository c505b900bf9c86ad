"""The pytest plugin, in pytest sessions of its own (pytester): fixtures, messages, the
golden run, and a session that does not use it loading nothing of agentproc."""

from __future__ import annotations

import importlib.metadata
import os
import sys
import tomllib
from pathlib import Path

import pytest

from agentproc.agents.demo import demo_server
from tests.fakes.openai_server import ScriptedServer

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[1]
INSTALLED = any(
    e.value == "agentproc.pytest_plugin" for e in importlib.metadata.entry_points(group="pytest11")
)
"""Whether the installed package registers the plugin (else the sessions load it by name)."""
PLUGIN = [*(() if INSTALLED else ("-p", "agentproc.pytest_plugin")), "-p", "no:cacheprovider"]

FACTORY = '''
from langchain_core.runnables import RunnableLambda


def good(tools):
    """Calls every step tool in order with the values it knows, then the finish tool."""
    from langchain_core.utils.function_calling import convert_to_openai_tool
    from tests.fakes.openai_server import oracle_reply

    specs = [convert_to_openai_tool(t) for t in tools]
    by_name = {t.name: t for t in tools}

    async def run(state):
        roles = {"system": "system", "human": "user"}  # LangChain message objects
        messages = [{"role": roles[m.type], "content": m.content} for m in state["messages"]]
        for i in range(100):
            call = oracle_reply({"tools": specs, "messages": messages}).get("tool_call")
            if call is None:
                return {}
            result = await by_name[call["name"]].ainvoke(call["arguments"])
            fn = {"name": call["name"], "arguments": "{}"}
            messages.append({"role": "assistant", "tool_calls": [{"id": str(i), "function": fn}]})
            messages.append({"role": "tool", "tool_call_id": str(i), "content": result})
        return {}

    return RunnableLambda(run)


def bad(tools):
    """Submits an answer at once."""
    finish = tools[-1]

    async def run(state):
        await finish.ainvoke({next(iter(finish.args)): 0})
        return {}

    return RunnableLambda(run)
'''


@pytest.fixture
def env(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    monkeypatch.setenv("OPENAI_API_KEY", "unused")
    pytester.makepyfile(agent=FACTORY)
    return pytester


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess(*PLUGIN, "-q", *args, timeout=300)


def test_the_entry_point_names_the_plugin_module():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert meta["project"]["entry-points"]["pytest11"] == {"agentproc": "agentproc.pytest_plugin"}


def test_a_session_without_the_fixtures_imports_nothing_of_agentproc(env):
    env.makepyfile(
        test_plain="""
        import sys

        def test_plain():
            assert "agentproc.pytest_plugin" in sys.modules
            loaded = sorted(m for m in sys.modules if m.startswith("agentproc."))
            assert loaded == ["agentproc.pytest_plugin"]
            assert not {"langgraph", "langchain_core", "agentproc.runs"} & set(sys.modules)
        """
    )
    run(env).assert_outcomes(passed=1)


def test_a_factory_agent_that_follows_the_procedure_passes(env):
    env.makepyfile(
        test_good=f"""
        from agentproc.pytest_plugin import assert_follows_procedure

        def test_good(agentproc_suite, agentproc_run):
            suite = agentproc_suite(steps=(3,), count=2)
            result = agentproc_run("{env.path / "agent.py"}:good", suite, trials=2)
            assert result.faithful_accuracy == 1.0 and result.labels == {{}}
            assert len(result.episodes) == 4
            assert_follows_procedure(result, min_faithful=1.0)
        """
    )
    run(env).assert_outcomes(passed=1)


def test_a_factory_agent_that_does_not_fails_with_the_worst_episodes_timelines(env):
    env.makepyfile(
        test_bad=f"""
        from agentproc.testing import assert_follows_procedure

        def test_bad(agentproc_suite, agentproc_run):
            result = agentproc_run("{env.path / "agent.py"}:bad", agentproc_suite(steps=(3,)))
            assert_follows_procedure(result, min_faithful=0.9)
        """
    )
    result = run(env)
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "agentproc: the agent does not follow the procedure:" in out
    assert "faithful accuracy 0.0% of 2 episodes is below min_faithful 90.0%" in out
    assert "worst episodes:" in out
    assert "first divergence: premature_finish at step 1 (call 0)" in out
    assert "▶   0  submit_answer(" in out


def test_an_openai_agent_passes_and_one_that_invents_a_tool_fails_naming_it(env):
    with (
        ScriptedServer() as good,
        ScriptedServer(
            [{"tool_call": {"name": "make_coffee", "arguments": {}}}, {"content": "Done."}],
            per_conversation=True,
        ) as bad,
    ):
        env.makepyfile(
            test_openai=f"""
            from agentproc.pytest_plugin import assert_follows_procedure

            def test_good(agentproc_suite, agentproc_run):
                result = agentproc_run("openai:fake", agentproc_suite(), base_url="{good.base_url}")
                assert_follows_procedure(result, forbid=("hallucinated_call",))

            def test_bad(agentproc_suite, agentproc_run):
                result = agentproc_run("openai:fake", agentproc_suite(), base_url="{bad.base_url}")
                assert result.labels["hallucinated_call"] == 2
                assert_follows_procedure(result, min_faithful=0.0, forbid=("hallucinated_call",))
            """
        )
        result = run(env)
    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    assert "hallucinated_call (forbidden) in 2 episodes: " in out
    assert "▶   0  make_coffee({}) -> " in out and "[hallucinated_call]" in out


def test_a_golden_run_is_recorded_on_request_then_compared_scenario_by_scenario(env):
    agent = env.path / "agent.py"
    env.makepyfile(
        test_golden=f"""
        import os

        def test_golden(agentproc_suite, agentproc_run, agentproc_golden):
            which = os.environ.get("AGENT", "good")
            result = agentproc_run(f"{agent}:{{which}}", agentproc_suite(steps=(3,)))
            agentproc_golden(result, "golden/agent.jsonl")
        """
    )
    missing = run(env)
    missing.assert_outcomes(failed=1)
    assert "no golden run at" in missing.stdout.str()
    assert "record one with --agentproc-update-golden" in missing.stdout.str()
    run(env, "--agentproc-update-golden").assert_outcomes(passed=1)
    assert (env.path / "golden" / "agent.jsonl").exists()
    run(env).assert_outcomes(passed=1)
    os.environ["AGENT"] = "bad"
    try:
        changed = run(env)
    finally:
        del os.environ["AGENT"]
    changed.assert_outcomes(failed=1)
    out = changed.stdout.str()
    assert "agentproc: 2 episodes differ from the golden run" in out
    assert "(trial 0): verdict faithful -> wrong; first divergence no divergence -> " in out


def test_the_plugin_module_is_cheap_to_import():
    code = (
        "import sys, agentproc.pytest_plugin as p; "
        "print(sorted(m for m in sys.modules if m.startswith('agentproc')))"
    )
    import subprocess

    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "['agentproc', 'agentproc.pytest_plugin']"


def test_the_demo_endpoint_passes_when_faithful_and_fails_naming_the_skips_when_skipping(env):
    with demo_server("faithful") as good, demo_server("skipper") as bad:
        env.makepyfile(
            test_demo=f"""
            from agentproc.pytest_plugin import assert_follows_procedure

            def test_faithful(agentproc_suite, agentproc_run):
                suite = agentproc_suite(steps=(9,), count=6)
                result = agentproc_run("openai:demo", suite, base_url="{good.base_url}")
                assert_follows_procedure(result, min_faithful=1.0)

            def test_skipper(agentproc_suite, agentproc_run):
                suite = agentproc_suite(steps=(9,), count=6)
                result = agentproc_run("openai:demo", suite, base_url="{bad.base_url}")
                assert_follows_procedure(result, min_faithful=0.9, forbid=("skipped_step",))
            """
        )
        result = run(env)
    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    assert "agentproc: the agent does not follow the procedure:" in out
    assert "skipped_step (forbidden) in " in out
    assert "first divergence: skipped_step at step " in out


def test_a_declared_workflow_suite_from_the_fixture_runs_like_any_suite(env):
    invoice = ROOT / "scenarios" / "workflows" / "invoice_approval.toml"
    env.makepyfile(
        test_workflow=f"""
        def test_workflow(agentproc_suite, agentproc_run):
            suite = agentproc_suite(workflow="{invoice}", count=3)
            assert (suite / "scenarios.jsonl").exists()
            assert agentproc_suite(workflow="{invoice}", count=3) == suite
            result = agentproc_run("sim:oracle", suite)
            assert result.faithful_accuracy == 1.0 and len(result.episodes) == 3
            assert agentproc_suite(suite) == suite
        """
    )
    run(env).assert_outcomes(passed=1)
