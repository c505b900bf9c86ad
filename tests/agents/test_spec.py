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
