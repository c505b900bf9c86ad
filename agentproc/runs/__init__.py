"""Runs: the episode session, the suite runner, and run files (the saved shape and its I/O).

The names below are imported on first use (:mod:`agentproc.lazy`): a merge of shard files
needs only the writer and the layout, not the labelling stack; the ``TYPE_CHECKING``
block shows IDEs and type checkers the same names (a test keeps the two in step).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentproc.lazy import exports
from agentproc.runs.redact import redact  # bound now: a function named like its module

if TYPE_CHECKING:  # the same names, for IDEs and type checkers (``X as X`` re-exports)
    from agentproc.runs.episode import (
        ERROR_KINDS as ERROR_KINDS,
    )
    from agentproc.runs.episode import (
        MODES as MODES,
    )
    from agentproc.runs.episode import (
        Episode as Episode,
    )
    from agentproc.runs.episode import (
        EpisodeError as EpisodeError,
    )
    from agentproc.runs.episode import (
        ErrorKind as ErrorKind,
    )
    from agentproc.runs.episode import (
        Mode as Mode,
    )
    from agentproc.runs.episode import (
        StopReason as StopReason,
    )
    from agentproc.runs.job import (
        EpisodeFactory as EpisodeFactory,
    )
    from agentproc.runs.job import (
        Workers as Workers,
    )
    from agentproc.runs.keys import (
        EpisodeKey as EpisodeKey,
    )
    from agentproc.runs.keys import (
        episode_key as episode_key,
    )
    from agentproc.runs.keys import (
        record_mode as record_mode,
    )
    from agentproc.runs.keys import (
        record_trial as record_trial,
    )
    from agentproc.runs.keys import (
        record_variant as record_variant,
    )
    from agentproc.runs.parallel import (
        run_suite as run_suite,
    )
    from agentproc.runs.records import (
        CallJSON as CallJSON,
    )
    from agentproc.runs.records import (
        EpisodeRecord as EpisodeRecord,
    )
    from agentproc.runs.records import (
        ErrorRecord as ErrorRecord,
    )
    from agentproc.runs.records import (
        LabelRecord as LabelRecord,
    )
    from agentproc.runs.records import (
        ModelCallRecord as ModelCallRecord,
    )
    from agentproc.runs.records import (
        UsageRecord as UsageRecord,
    )
    from agentproc.runs.records import (
        episode_record as episode_record,
    )
    from agentproc.runs.records import (
        error_kind_of as error_kind_of,
    )
    from agentproc.runs.records import (
        is_error as is_error,
    )
    from agentproc.runs.records import (
        run_schema as run_schema,
    )
    from agentproc.runs.redact import (
        redact as redact,
    )
    from agentproc.runs.runfile import (
        ReadReport as ReadReport,
    )
    from agentproc.runs.runfile import (
        completed_ids as completed_ids,
    )
    from agentproc.runs.runfile import (
        latest_records as latest_records,
    )
    from agentproc.runs.runfile import (
        parse_line as parse_line,
    )
    from agentproc.runs.runfile import (
        read_run as read_run,
    )
    from agentproc.runs.runfile import (
        run_lines as run_lines,
    )
    from agentproc.runs.runner import (
        EpisodeFn as EpisodeFn,
    )
    from agentproc.runs.runner import (
        RunSummary as RunSummary,
    )
    from agentproc.runs.runner import (
        arun_suite as arun_suite,
    )
    from agentproc.runs.runner import (
        select as select,
    )
    from agentproc.runs.session import (
        BUDGET_EXHAUSTED as BUDGET_EXHAUSTED,
    )
    from agentproc.runs.session import (
        BudgetExhausted as BudgetExhausted,
    )
    from agentproc.runs.session import (
        EpisodeSession as EpisodeSession,
    )
    from agentproc.runs.session import (
        call_messages as call_messages,
    )
    from agentproc.runs.session import (
        default_budget as default_budget,
    )
    from agentproc.runs.session import (
        episode_seed as episode_seed,
    )
    from agentproc.runs.session import (
        harness_error as harness_error,
    )
    from agentproc.runs.session import (
        retry_seed as retry_seed,
    )
    from agentproc.runs.session import (
        text_of as text_of,
    )
    from agentproc.runs.session import (
        trial_seed as trial_seed,
    )
    from agentproc.runs.split import (
        in_shard as in_shard,
    )
    from agentproc.runs.split import (
        parse_shard as parse_shard,
    )
    from agentproc.runs.stored import (
        ScenarioStore as ScenarioStore,
    )
    from agentproc.runs.stored import (
        scenario_of_record as scenario_of_record,
    )
    from agentproc.runs.writer import (
        RunWriter as RunWriter,
    )
    from agentproc.runs.writer import (
        drop_torn_tail as drop_torn_tail,
    )
    from agentproc.workflow import (
        CallRecord as CallRecord,
    )

_EXPORTS: dict[str, str] = {
    "ERROR_KINDS": "agentproc.runs.episode",
    "MODES": "agentproc.runs.episode",
    "Episode": "agentproc.runs.episode",
    "EpisodeError": "agentproc.runs.episode",
    "ErrorKind": "agentproc.runs.episode",
    "Mode": "agentproc.runs.episode",
    "StopReason": "agentproc.runs.episode",
    "CallJSON": "agentproc.runs.records",
    "EpisodeRecord": "agentproc.runs.records",
    "ErrorRecord": "agentproc.runs.records",
    "LabelRecord": "agentproc.runs.records",
    "ModelCallRecord": "agentproc.runs.records",
    "UsageRecord": "agentproc.runs.records",
    "episode_record": "agentproc.runs.records",
    "error_kind_of": "agentproc.runs.records",
    "is_error": "agentproc.runs.records",
    "run_schema": "agentproc.runs.records",
    "EpisodeKey": "agentproc.runs.keys",
    "episode_key": "agentproc.runs.keys",
    "record_mode": "agentproc.runs.keys",
    "record_trial": "agentproc.runs.keys",
    "record_variant": "agentproc.runs.keys",
    "EpisodeFactory": "agentproc.runs.job",
    "Workers": "agentproc.runs.job",
    "redact": "agentproc.runs.redact",
    "ReadReport": "agentproc.runs.runfile",
    "completed_ids": "agentproc.runs.runfile",
    "latest_records": "agentproc.runs.runfile",
    "parse_line": "agentproc.runs.runfile",
    "read_run": "agentproc.runs.runfile",
    "run_lines": "agentproc.runs.runfile",
    "RunWriter": "agentproc.runs.writer",
    "drop_torn_tail": "agentproc.runs.writer",
    "EpisodeFn": "agentproc.runs.runner",
    "RunSummary": "agentproc.runs.runner",
    "arun_suite": "agentproc.runs.runner",
    "in_shard": "agentproc.runs.split",
    "parse_shard": "agentproc.runs.split",
    "run_suite": "agentproc.runs.parallel",
    "select": "agentproc.runs.runner",
    "BUDGET_EXHAUSTED": "agentproc.runs.session",
    "BudgetExhausted": "agentproc.runs.session",
    "EpisodeSession": "agentproc.runs.session",
    "call_messages": "agentproc.runs.session",
    "default_budget": "agentproc.runs.session",
    "episode_seed": "agentproc.runs.session",
    "harness_error": "agentproc.runs.session",
    "retry_seed": "agentproc.runs.session",
    "text_of": "agentproc.runs.session",
    "trial_seed": "agentproc.runs.session",
    "ScenarioStore": "agentproc.runs.stored",
    "scenario_of_record": "agentproc.runs.stored",
    "CallRecord": "agentproc.workflow",
}
"""Public name -> the module that defines it."""

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = exports(__name__, _EXPORTS, globals())
