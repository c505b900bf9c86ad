"""Runs: the episode session, the suite runner, and run files (the saved shape, its
writer and its one reader)."""

from agentproc.runs.episode import (
    ERROR_KINDS,
    MODES,
    Episode,
    EpisodeError,
    ErrorKind,
    Mode,
    StopReason,
)
from agentproc.runs.job import EpisodeFactory, Workers
from agentproc.runs.keys import (
    EpisodeKey,
    episode_key,
    record_agent,
    record_mode,
    record_trial,
    record_variant,
)
from agentproc.runs.parallel import run_suite
from agentproc.runs.records import (
    CallJSON,
    EpisodeRecord,
    ErrorRecord,
    LabelRecord,
    ModelCallRecord,
    UsageRecord,
    episode_record,
    error_kind_of,
    is_error,
    run_schema,
)
from agentproc.runs.redact import redact
from agentproc.runs.runfile import (
    Line,
    ReadReport,
    View,
    Where,
    completed_ids,
    latest_records,
    read_at,
    read_lines,
    read_run,
)
from agentproc.runs.runner import EpisodeFn, RunSummary, arun_suite, select
from agentproc.runs.session import (
    BUDGET_EXHAUSTED,
    BudgetExhausted,
    EpisodeSession,
    call_messages,
    default_budget,
    episode_seed,
    harness_error,
    retry_seed,
    text_of,
    trial_seed,
)
from agentproc.runs.split import in_shard, parse_shard
from agentproc.runs.stored import ScenarioStore, scenario_of_record
from agentproc.runs.writer import RunWriter, drop_torn_tail
from agentproc.workflow import CallRecord

__all__ = [
    "BUDGET_EXHAUSTED",
    "ERROR_KINDS",
    "MODES",
    "BudgetExhausted",
    "CallJSON",
    "CallRecord",
    "Episode",
    "EpisodeError",
    "EpisodeFactory",
    "EpisodeFn",
    "EpisodeKey",
    "EpisodeRecord",
    "EpisodeSession",
    "ErrorKind",
    "ErrorRecord",
    "LabelRecord",
    "Line",
    "Mode",
    "ModelCallRecord",
    "ReadReport",
    "RunSummary",
    "RunWriter",
    "ScenarioStore",
    "StopReason",
    "UsageRecord",
    "View",
    "Where",
    "Workers",
    "arun_suite",
    "call_messages",
    "completed_ids",
    "default_budget",
    "drop_torn_tail",
    "episode_key",
    "episode_record",
    "episode_seed",
    "error_kind_of",
    "harness_error",
    "in_shard",
    "is_error",
    "latest_records",
    "parse_shard",
    "read_at",
    "read_lines",
    "read_run",
    "record_agent",
    "record_mode",
    "record_trial",
    "record_variant",
    "redact",
    "retry_seed",
    "run_schema",
    "run_suite",
    "scenario_of_record",
    "select",
    "text_of",
    "trial_seed",
]
