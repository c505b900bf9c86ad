"""The Inspect AI task (extra ``[inspect]``): ``inspect eval agentproc/agentproc_task -T
suite=PATH`` (see :mod:`agentproc.integrations.inspect_task`)."""

from agentproc.integrations.inspect_task import agentproc_task, label_transcript, monitor

__all__ = ["agentproc_task", "label_transcript", "monitor"]
