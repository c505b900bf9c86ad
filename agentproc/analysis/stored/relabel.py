"""Relabel a stored run with the current monitor, without executing any tool or model.

The recorded calls (and, in text mode, the model's reply) are labelled again; each
record keeps everything else and gets the new labels, verdict and metrics. Use it
after a monitor fix.

Each line is read in the labelling view of :mod:`agentproc.runs.runfile` (a version-2
line up to its bulk), its scenario's workflow is indexed once per distinct scenario and
variant (from the procedure itself: no tools, schemas or prompt), and its calls are read
and observed as the live monitor observes them; the relabelled line is the new head followed by
the old line's bytes from its calls on. Version-1 lines are read whole and
written in the version-2 layout.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentproc.errors import RunFileError, StoredCallError
from agentproc.labelling import Label, Metrics
from agentproc.labelling.calculator import monitor_for
from agentproc.labelling.order import OrderPolicy
from agentproc.outputs import replacing
from agentproc.runs import (
    EpisodeRecord,
    ReadReport,
    RunWriter,
    ScenarioStore,
    collector,
    read_lines,
    record_mode,
)
from agentproc.runs.keys import record_order
from agentproc.runs.specs import resolve_spec
from agentproc.workflow import Workflow, build_workflow
from agentproc.workflow.prefill import stored_prefill
from agentproc.workflow.present import Presented, present
from agentproc.workflow.variant import variant_from_json


@dataclass
class Relabelled:
    """What relabelling a run changed."""

    episodes: int = 0
    calls: int = 0
    """Tool calls labelled again."""
    changed_episodes: int = 0
    """Episodes whose labels, verdict or metrics differ from the recorded ones."""
    labels_before: int = 0
    labels_after: int = 0
    added: int = 0
    """Labels found now that were not recorded."""
    removed: int = 0
    """Recorded labels not found now."""
    verdicts_changed: int = 0
    warnings: list[str] = field(default_factory=list)

    def count(self, rec: dict[str, Any], labels: list[dict[str, Any]], metrics: Metrics) -> None:
        """Add one episode: its recorded ``rec`` against its new ``labels`` and ``metrics``."""
        old = rec["labels"]
        self.episodes += 1
        self.calls += len(rec.get("calls") or ())
        self.labels_before += len(old)
        self.labels_after += len(labels)
        verdict_changed = metrics["verdict"] != rec["verdict"]
        self.verdicts_changed += verdict_changed
        same = old == labels
        if not same:
            before, after = {_key(lab) for lab in old}, {_key(lab) for lab in labels}
            self.added += len(after - before)
            self.removed += len(before - after)
        if not same or verdict_changed or metrics != rec["metrics"]:
            self.changed_episodes += 1


def _key(label: object) -> str:
    return json.dumps(label, sort_keys=True)


WORKFLOWS = 256
"""Workflows under a variant kept (one per distinct scenario and variant), least recently
used out; the default variant's are the scenario store's."""


class _Labeller:
    """Labels stored calls; indexes each scenario's workflow once."""

    def __init__(
        self, path: Path | str, store: ScenarioStore, order: OrderPolicy | None = None
    ) -> None:
        self.path = path
        self.store = store
        self.order = order
        """The order policy to label under (``None``: each episode's recorded one)."""
        self._presented: OrderedDict[tuple[int, str], tuple[Workflow, Presented]] = OrderedDict()

    def label(self, lineno: int | None, rec: dict[str, Any]) -> tuple[list[Label], Metrics]:
        where = f"{self.path}: line {lineno}" if lineno else str(self.path)
        wf = self.store.workflow(self.path, lineno, rec)  # type: ignore[arg-type]
        if record_mode(rec) == "text":  # type: ignore[arg-type]
            # Text mode's parser is imported by the runs that hold a text episode only.
            from agentproc.labelling.text import run_text_episode

            output = rec.get("output")
            labels, metrics, _ = run_text_episode(
                wf.scenario, output if isinstance(output, str) else ""
            )
            return labels, metrics
        spec = resolve_spec(self.path, rec)
        presented = None
        if spec is not None:
            wf, presented = self._variant(wf, spec, where)
        policy, batches = record_order(rec, self.order, where)
        try:
            variant = presented.variant if presented is not None else None
            wf, given = stored_prefill(wf, variant, rec["calls"])
            monitor = monitor_for(wf, presented, policy)
            monitor.observe_stored(rec["calls"], presented, batches, given)
        except StoredCallError as exc:
            field = f"calls[{exc.index}]" + (f".{exc.field}" if exc.field else "")
            raise RunFileError(where, exc.reason, field) from None
        return monitor.finish()

    def _variant(self, base: Workflow, spec: Any, where: str) -> tuple[Workflow, Presented]:
        """The workflow of a scenario under a variant, and its presentation."""
        key = (id(base), json.dumps(spec, sort_keys=True))
        built = self._presented.get(key)
        if built is None:
            variant = variant_from_json(spec, f"{where}: variant_spec")
            presented = present(base.scenario, variant)
            built = self._presented[key] = (build_workflow(presented.scenario, variant), presented)
            if len(self._presented) > WORKFLOWS:
                self._presented.popitem(last=False)
        else:
            self._presented.move_to_end(key)
        return built


def label_record(
    rec: EpisodeRecord,
    where: str = "run file",
    store: ScenarioStore | None = None,
    order: OrderPolicy | None = None,
) -> tuple[list[Label], Metrics]:
    """Label the calls a stored episode recorded (either layout), without executing them.

    This re-scores a stored run with the current monitor (the recorded results
    and values are trusted); :func:`~agentproc.analysis.stored.replay.replay_record`
    re-executes instead.
    """
    labeller = _Labeller(where, store or ScenarioStore(), order)
    return labeller.label(None, rec)  # type: ignore[arg-type]


def relabelled_lines(
    path: Path,
    result: Relabelled,
    store: ScenarioStore | None = None,
    write: bool = True,
    order: OrderPolicy | None = None,
) -> Iterator[str]:
    """The lines of a run file labelled again (version-2 layout), one at a time; counts
    go to ``result``. Without ``write``, nothing is yielded: only counted. ``order``: the
    order policy to label under (``None``: each episode's own), written in the lines."""
    report = ReadReport()
    labeller = _Labeller(Path(path), store or ScenarioStore(), order)
    for line in read_lines(path, report, "labelling"):
        collector.now_and_then(line.where.lineno)
        rec = line.rec
        labels, metrics = labeller.label(line.where.lineno, rec)
        new = [lab.to_json() for lab in labels]
        rec["labels"] = line.recorded_labels(new)
        result.count(rec, new, metrics)
        if write:
            policy = {"order": order} if order is not None else {}
            yield line.relabelled(new, metrics, **policy)


def relabel_run(
    path: Path,
    out: Path | None = None,
    suite: Path | None = None,
    order: OrderPolicy | None = None,
) -> Relabelled:
    """Relabel every episode of ``path``; write the relabelled run to ``out`` if given.

    ``suite`` is where to find the scenarios the run refers to, if not where it says;
    ``order`` the order policy to label under (``None``: each episode's recorded one).
    """
    result = Relabelled()
    with collector.paused():
        # The scenarios and workflows kept while relabelling are freed when this call
        # returns, before the collector runs again: else its first collection would
        # scan them all.
        _relabel(path, out, ScenarioStore(suite), result, order)
    return result


def _relabel(
    path: Path,
    out: Path | None,
    store: ScenarioStore,
    result: Relabelled,
    order: OrderPolicy | None = None,
) -> None:
    if out is None:
        for _ in relabelled_lines(path, result, store, write=False, order=order):
            pass
        return
    lines = relabelled_lines(path, result, store, order=order)
    # Written beside ``out`` and renamed over it once whole: a bad line far in the run
    # leaves an older ``out`` as it was.
    with replacing(out) as tmp, RunWriter(tmp) as writer:
        for line in lines:
            writer.write_raw(line)
        writer.sync()
