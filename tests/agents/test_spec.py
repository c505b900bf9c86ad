import pickle

import pytest

from agentproc.agents.spec import AgentSpec
from agentproc.workflow.variant import load_variant


def test_a_built_agent_reuses_its_model_under_every_variant(monkeypatch):
    built = AgentSpec("openai:m", base_url="http://127.0.0.1:9/v1").built()
    under = built.under(load_variant("prose"))
    assert under.built_model is built.built_model is not None
    assert under.options.variant is not None and under.options.variant.name == "prose"
    monkeypatch.setattr(AgentSpec, "model", lambda self: pytest.fail("the model was built again"))
    assert callable(under.episodes())


def test_a_spec_not_built_builds_its_model_where_its_episodes_run():
    spec = pickle.loads(pickle.dumps(AgentSpec("openai:m", base_url="http://127.0.0.1:9/v1")))
    assert spec.built_model is None
    assert callable(spec.episodes())


def test_a_simulated_agent_runs_one_episode_at_a_time_whatever_the_concurrency():
    from agentproc.agents.suite import ModelRunOptions

    options = ModelRunOptions(concurrency=8)
    assert AgentSpec("sim:decay", options).concurrency() == 1
    assert AgentSpec("openai:m", options).concurrency() == 8


def test_checking_the_local_agent_loads_no_model(monkeypatch):
    from agentproc.agents import local, xllama_runtime

    monkeypatch.setattr(local, "check_installed", lambda runtime="auto": None)
    monkeypatch.setattr(xllama_runtime, "load", lambda *a: pytest.fail("the model was loaded"))
    AgentSpec("local").check()


def test_checking_an_unknown_agent_fails_as_building_it_does():
    from agentproc.errors import ConfigError

    with pytest.raises(ConfigError, match="unknown agent 'sim:nobody'"):
        AgentSpec("sim:nobody").check()


MORE = ("--continue-after-answer", "--seed", "2")


@pytest.mark.parametrize(
    ("argv", "settings"),
    [
        (["--agent", "local", "--tool-choice", "auto"], {"tool_choice": "auto"}),
        (["--agent", "local", "--tool-choice", "any"], {}),  # the default: nothing to tell
        (["--agent", "local", "--mode", "text", "--tool-choice", "auto"], {}),  # no tools
        (
            ["--agent", "openai:m", "--base-url", "http://u:secret@h:8000/v1/?api_key=k"],
            {"endpoint": "http://h:8000/v1"},  # never a credential
        ),
        (
            ["--agent", "openai:m", "--base-url", "http://h/v1", "--max-tokens", "64"],
            {"endpoint": "http://h/v1", "max_tokens": 64},
        ),
        (
            ["--agent", "openai:m", "--base-url", "http://h/v1", "--budget", "9", *MORE],
            {"endpoint": "http://h/v1", "budget": 9, "continue_after_answer": True, "seed": 2},
        ),
        (["--agent", "sim:decay", "--seed", "3", "--budget", "9"], {"seed": 3}),
        (["--agent", "sim:decay"], {}),
        (["--agent", "sim:decay", "--guard", "feedback"], {"guard": "feedback"}),
        (["--agent", "sim:decay", "--variant", "enforce"], {}),  # the variant's own guard
    ],
)
def test_the_settings_a_run_records_are_those_that_change_what_its_agent_does(argv, settings):
    from agentproc.cli.agent_options import agent_spec
    from agentproc.cli.parser import build_parser

    args = build_parser().parse_args(["run", "S", "--out", "r.jsonl", *argv])
    spec, _ = agent_spec(args)
    assert spec.settings() == settings


def test_the_endpoint_of_the_environment_is_recorded_too(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8001/v1/")
    assert AgentSpec("openai:m").settings() == {"endpoint": "http://127.0.0.1:8001/v1"}


@pytest.mark.parametrize(
    ("agent", "recorded"),
    [
        (
            "local:/home/me/models/Qwen2.5-Coder-1.5B-Instruct-Q4_K_M.gguf",
            "local:Qwen2.5-Coder-1.5B-Instruct-Q4_K_M",
        ),
        ("local:models/mine.gguf", "local:mine"),
        ("local", "local"),
        ("local:smollm2", "local:smollm2"),
        ("openai:gpt-4o-mini", "openai:gpt-4o-mini"),
    ],
)
def test_your_own_weights_are_named_by_the_files_stem(agent, recorded):
    assert AgentSpec(agent).recorded() == recorded
