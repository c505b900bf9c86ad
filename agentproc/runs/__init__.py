"""Runs: the episode session, the suite runner, and run files (the saved shape, its
writer and its one reader).

Each name is imported from its module on first use (:data:`_EXPORTS`), so a command that
only reads run files (``relabel``, ``replay``, ``report``) does not load the runner, its
worker pools and the episode session. The ``TYPE_CHECKING`` block shows IDEs and type
checkers the same names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentproc.lazy import lazy_exports

# Bound now, not on first use: importing the module ``agentproc.runs.redact`` sets the
# package's attribute ``redact`` to the module, and the function must stay the name.
from agentproc.runs.redact import redact as redact

if TYPE_CHECKING:  # the same names, for IDEs and type checkers (``X as X`` re-exports)
    from agentproc.runs.episode import ERROR_KINDS as ERROR_KINDS
    from agentproc.runs.episode import MODES as MODES
    from agentproc.runs.episode import Episode as Episode
    from agentproc.runs.episode import EpisodeError as EpisodeError
    from agentproc.runs.episode import ErrorKind as ErrorKind
    from agentproc.runs.episode import Mode as Mode
    from agentproc.runs.episode import StopReason as StopReason
    from agentproc.runs.job import EpisodeFactory as EpisodeFactory
    from agentproc.runs.job import Workers as Workers
    from agentproc.runs.keys import EpisodeKey as EpisodeKey
    from agentproc.runs.keys import episode_key as episode_key
    from agentproc.runs.keys import record_agent as record_agent
    from agentproc.runs.keys import record_mode as record_mode
    from agentproc.runs.keys import record_setup as record_setup
    from agentproc.runs.keys import record_trial as record_trial
    from agentproc.runs.keys import record_variant as record_variant
    from agentproc.runs.parallel import run_suite as run_suite
    from agentproc.runs.records import CallJSON as CallJSON
    from agentproc.runs.records import EpisodeRecord as EpisodeRecord
    from agentproc.runs.records import ErrorRecord as ErrorRecord
    from agentproc.runs.records import LabelRecord as LabelRecord
    from agentproc.runs.records import ModelCallRecord as ModelCallRecord
    from agentproc.runs.records import UsageRecord as UsageRecord
    from agentproc.runs.records import episode_record as episode_record
    from agentproc.runs.records import error_kind_of as error_kind_of
    from agentproc.runs.records import is_error as is_error
    from agentproc.runs.records import run_schema as run_schema
    from agentproc.runs.runfile import Line as Line
    from agentproc.runs.runfile import ReadReport as ReadReport
    from agentproc.runs.runfile import View as View
    from agentproc.runs.runfile import Where as Where
    from agentproc.runs.runfile import completed_ids as completed_ids
    from agentproc.runs.runfile import latest_records as latest_records
    from agentproc.runs.runfile import read_at as read_at
    from agentproc.runs.runfile import read_lines as read_lines
    from agentproc.runs.runfile import read_run as read_run
    from agentproc.runs.runner import EpisodeFn as EpisodeFn
    from agentproc.runs.runner import RunSummary as RunSummary
    from agentproc.runs.runner import arun_suite as arun_suite
    from agentproc.runs.runner import select as select
    from agentproc.runs.session import BUDGET_EXHAUSTED as BUDGET_EXHAUSTED
    from agentproc.runs.session import BudgetExhausted as BudgetExhausted
    from agentproc.runs.session import EpisodeSession as EpisodeSession
    from agentproc.runs.session import call_messages as call_messages
    from agentproc.runs.session import default_budget as default_budget
    from agentproc.runs.session import episode_seed as episode_seed
    from agentproc.runs.session import harness_error as harness_error
    from agentproc.runs.session import retry_seed as retry_seed
    from agentproc.runs.session import text_of as text_of
    from agentproc.runs.session import trial_seed as trial_seed
    from agentproc.runs.split import in_shard as in_shard
    from agentproc.runs.split import parse_shard as parse_shard
    from agentproc.runs.stored import ScenarioStore as ScenarioStore
    from agentproc.runs.stored import scenario_of_record as scenario_of_record
    from agentproc.runs.writer import RunWriter as RunWriter
    from agentproc.runs.writer import drop_torn_tail as drop_torn_tail
    from agentproc.workflow import CallRecord as CallRecord

_EXPORTS: dict[str, str] = {
    "BUDGET_EXHAUSTED": "agentproc.runs.session",
    "BudgetExhausted": "agentproc.runs.session",
    "CallJSON": "agentproc.runs.records",
    "CallRecord": "agentproc.workflow",
    "ERROR_KINDS": "agentproc.runs.episode",
    "Episode": "agentproc.runs.episode",
    "EpisodeError": "agentproc.runs.episode",
    "EpisodeFactory": "agentproc.runs.job",
    "EpisodeFn": "agentproc.runs.runner",
    "EpisodeKey": "agentproc.runs.keys",
    "EpisodeRecord": "agentproc.runs.records",
    "EpisodeSession": "agentproc.runs.session",
    "ErrorKind": "agentproc.runs.episode",
    "ErrorRecord": "agentproc.runs.records",
    "LabelRecord": "agentproc.runs.records",
    "Line": "agentproc.runs.runfile",
    "MODES": "agentproc.runs.episode",
    "Mode": "agentproc.runs.episode",
    "ModelCallRecord": "agentproc.runs.records",
    "ReadReport": "agentproc.runs.runfile",
    "RunSummary": "agentproc.runs.runner",
    "RunWriter": "agentproc.runs.writer",
    "ScenarioStore": "agentproc.runs.stored",
    "StopReason": "agentproc.runs.episode",
    "UsageRecord": "agentproc.runs.records",
    "View": "agentproc.runs.runfile",
    "Where": "agentproc.runs.runfile",
    "Workers": "agentproc.runs.job",
    "arun_suite": "agentproc.runs.runner",
    "call_messages": "agentproc.runs.session",
    "completed_ids": "agentproc.runs.runfile",
    "default_budget": "agentproc.runs.session",
    "drop_torn_tail": "agentproc.runs.writer",
    "episode_key": "agentproc.runs.keys",
    "episode_record": "agentproc.runs.records",
    "episode_seed": "agentproc.runs.session",
    "error_kind_of": "agentproc.runs.records",
    "harness_error": "agentproc.runs.session",
    "in_shard": "agentproc.runs.split",
    "is_error": "agentproc.runs.records",
    "latest_records": "agentproc.runs.runfile",
    "parse_shard": "agentproc.runs.split",
    "read_at": "agentproc.runs.runfile",
    "read_lines": "agentproc.runs.runfile",
    "read_run": "agentproc.runs.runfile",
    "record_agent": "agentproc.runs.keys",
    "record_mode": "agentproc.runs.keys",
    "record_setup": "agentproc.runs.keys",
    "record_trial": "agentproc.runs.keys",
    "record_variant": "agentproc.runs.keys",
    "retry_seed": "agentproc.runs.session",
    "run_schema": "agentproc.runs.records",
    "run_suite": "agentproc.runs.parallel",
    "scenario_of_record": "agentproc.runs.stored",
    "select": "agentproc.runs.runner",
    "text_of": "agentproc.runs.session",
    "trial_seed": "agentproc.runs.session",
}
"""Public name -> the module that defines it."""

__all__ = sorted([*_EXPORTS, "redact"])


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, also=("redact",))
