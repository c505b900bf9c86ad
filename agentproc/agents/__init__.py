"""Agents: simulated agents with known faults (and, lazily, model-backed agents)."""

from agentproc.agents.sim import SIM_AGENTS, Policy, sim_agent

__all__ = ["SIM_AGENTS", "Policy", "sim_agent"]
