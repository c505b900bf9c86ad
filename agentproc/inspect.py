"""The Inspect AI task (extra ``[inspect]``): ``inspect eval agentproc/agentproc_task -T
suite=PATH`` (see :mod:`agentproc.integrations.inspect_task`), and the metrics it prints (see
:mod:`agentproc.integrations.inspect_metrics`)."""

from agentproc.integrations.inspect_metrics import (
    faithful_rate,
    first_answer_rate,
    unfaithful_correct_rate,
)
from agentproc.integrations.inspect_task import agentproc_task, label_transcript, monitor

__all__ = [
    "agentproc_task",
    "faithful_rate",
    "first_answer_rate",
    "label_transcript",
    "monitor",
    "unfaithful_correct_rate",
]
