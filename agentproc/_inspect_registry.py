"""Inspect AI's entry point (``inspect_ai`` group): importing it registers the task
``agentproc/agentproc_task``."""

from agentproc.inspect import agentproc_task

__all__ = ["agentproc_task"]
