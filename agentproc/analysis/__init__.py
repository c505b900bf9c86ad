"""Analysis of stored runs: reports, replays and timelines. Never calls a model.

Each name is imported from its module on first use (:data:`_EXPORTS`), so importing one
module of the package (``agentproc.analysis.stats.paired``, say) does not load the comparison,
the report, relabelling, replay and export with it. The ``TYPE_CHECKING`` block shows IDEs
and type checkers the same names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentproc.lazy import lazy_exports

if TYPE_CHECKING:  # the same names, for IDEs and type checkers (``X as X`` re-exports)
    from agentproc.analysis.compare.arms import compare_files as compare_files
    from agentproc.analysis.compare.arms import compare_records as compare_records
    from agentproc.analysis.compare.result import CompareResult as CompareResult
    from agentproc.analysis.measures.cells import CellStats as CellStats
    from agentproc.analysis.measures.report import AgentReport as AgentReport
    from agentproc.analysis.measures.report import Report as Report
    from agentproc.analysis.measures.report import aggregate as aggregate
    from agentproc.analysis.render.report_json import report_json as report_json
    from agentproc.analysis.render.report_json import stats_json as stats_json
    from agentproc.analysis.stats.binomial import wilson as wilson
    from agentproc.analysis.stats.exact import mcnemar as mcnemar
    from agentproc.analysis.stats.exact import pass_hat_k as pass_hat_k
    from agentproc.analysis.stats.multiplicity import holm as holm
    from agentproc.analysis.stored.relabel import Relabelled as Relabelled
    from agentproc.analysis.stored.relabel import label_record as label_record
    from agentproc.analysis.stored.relabel import relabel_run as relabel_run
    from agentproc.analysis.stored.replay import Replay as Replay
    from agentproc.analysis.stored.replay import replay_calls as replay_calls
    from agentproc.analysis.stored.replay import replay_messages as replay_messages
    from agentproc.analysis.stored.replay import replay_record as replay_record

_EXPORTS: dict[str, str] = {
    "AgentReport": "agentproc.analysis.measures.report",
    "CellStats": "agentproc.analysis.measures.cells",
    "CompareResult": "agentproc.analysis.compare.result",
    "Relabelled": "agentproc.analysis.stored.relabel",
    "Replay": "agentproc.analysis.stored.replay",
    "Report": "agentproc.analysis.measures.report",
    "aggregate": "agentproc.analysis.measures.report",
    "compare_files": "agentproc.analysis.compare.arms",
    "compare_records": "agentproc.analysis.compare.arms",
    "holm": "agentproc.analysis.stats.multiplicity",
    "label_record": "agentproc.analysis.stored.relabel",
    "mcnemar": "agentproc.analysis.stats.exact",
    "pass_hat_k": "agentproc.analysis.stats.exact",
    "relabel_run": "agentproc.analysis.stored.relabel",
    "replay_calls": "agentproc.analysis.stored.replay",
    "replay_messages": "agentproc.analysis.stored.replay",
    "replay_record": "agentproc.analysis.stored.replay",
    "report_json": "agentproc.analysis.render.report_json",
    "stats_json": "agentproc.analysis.render.report_json",
    "wilson": "agentproc.analysis.stats.binomial",
}
"""Public name -> the module that defines it."""

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
