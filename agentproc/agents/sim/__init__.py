"""Simulated agents whose faults are known, and the self-check that proves the monitor with them."""

from agentproc.agents.sim.beliefs import Policy
from agentproc.agents.sim.episode import run_sim_episode
from agentproc.agents.sim.faults import INJECTORS, SIM_AGENTS, Factory, sim_agent

__all__ = ["INJECTORS", "SIM_AGENTS", "Factory", "Policy", "run_sim_episode", "sim_agent"]
