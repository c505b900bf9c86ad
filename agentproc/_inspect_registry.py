"""Inspect AI's entry point (``inspect_ai`` group): importing it registers the task
``agentproc/agentproc_task``."""

from agentproc.integrations.inspect_task import agentproc_task

__all__ = ["agentproc_task"]
