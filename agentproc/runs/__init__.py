"""Runs: the episode session, the suite runner, and run files (the saved shape and its I/O)."""

from agentproc.runs.episode import MODES, Episode, Mode, StopReason
from agentproc.runs.records import (
    CallJSON,
    EpisodeRecord,
    LabelRecord,
    ModelCallRecord,
    UsageRecord,
    episode_record,
    record_mode,
    run_schema,
)
from agentproc.runs.redact import redact
from agentproc.runs.runfile import (
    ReadReport,
    RunWriter,
    completed_ids,
    drop_torn_tail,
    read_run,
    scenario_of_record,
)
from agentproc.runs.runner import (
    EpisodeFn,
    RunSummary,
    arun_suite,
    in_shard,
    parse_shard,
    run_suite,
    select,
)
from agentproc.runs.session import (
    BUDGET_EXHAUSTED,
    BudgetExhausted,
    EpisodeSession,
    call_messages,
    default_budget,
    episode_seed,
    retry_seed,
    text_of,
)
from agentproc.workflow import CallRecord

__all__ = [
    "BUDGET_EXHAUSTED",
    "MODES",
    "BudgetExhausted",
    "CallJSON",
    "CallRecord",
    "Episode",
    "EpisodeFn",
    "EpisodeRecord",
    "EpisodeSession",
    "LabelRecord",
    "Mode",
    "ModelCallRecord",
    "ReadReport",
    "RunSummary",
    "RunWriter",
    "StopReason",
    "UsageRecord",
    "arun_suite",
    "call_messages",
    "completed_ids",
    "default_budget",
    "drop_torn_tail",
    "episode_record",
    "episode_seed",
    "in_shard",
    "parse_shard",
    "read_run",
    "record_mode",
    "redact",
    "retry_seed",
    "run_schema",
    "run_suite",
    "scenario_of_record",
    "select",
    "text_of",
]
