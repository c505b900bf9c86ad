"""Analysis of stored runs: reports, replays and timelines. Never calls a model."""

from agentproc.analysis.export import report_json, stats_json
from agentproc.analysis.relabel import Relabelled, relabel_run
from agentproc.analysis.replay import (
    Replay,
    label_record,
    replay_calls,
    replay_messages,
    replay_record,
)
from agentproc.analysis.report import (
    AgentReport,
    CellStats,
    Report,
    aggregate,
    wilson,
)

__all__ = [
    "AgentReport",
    "CellStats",
    "Relabelled",
    "Replay",
    "Report",
    "aggregate",
    "label_record",
    "relabel_run",
    "replay_calls",
    "replay_messages",
    "replay_record",
    "report_json",
    "stats_json",
    "wilson",
]
