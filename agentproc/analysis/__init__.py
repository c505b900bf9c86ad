"""Analysis of stored runs: reports, replays and timelines. Never calls a model."""

from agentproc.analysis.cell_stats import CellStats, wilson
from agentproc.analysis.compare import compare_files, compare_records
from agentproc.analysis.compare_result import CompareResult
from agentproc.analysis.export import report_json, stats_json
from agentproc.analysis.multiplicity import holm
from agentproc.analysis.relabel import Relabelled, label_record, relabel_run
from agentproc.analysis.replay import (
    Replay,
    replay_calls,
    replay_messages,
    replay_record,
)
from agentproc.analysis.report import AgentReport, Report, aggregate
from agentproc.analysis.stats import mcnemar, pass_hat_k

__all__ = [
    "AgentReport",
    "CellStats",
    "CompareResult",
    "Relabelled",
    "Replay",
    "Report",
    "aggregate",
    "compare_files",
    "compare_records",
    "holm",
    "label_record",
    "mcnemar",
    "pass_hat_k",
    "relabel_run",
    "replay_calls",
    "replay_messages",
    "replay_record",
    "report_json",
    "stats_json",
    "wilson",
]
