"""Agents: simulated agents with known faults, and model agents in a LangGraph harness.

Model agents load LangChain and their providers only when used.
"""

from agentproc.agents.sim import INJECTORS, SIM_AGENTS, Policy, run_sim_episode, sim_agent

__all__ = ["INJECTORS", "SIM_AGENTS", "Policy", "run_sim_episode", "sim_agent"]
