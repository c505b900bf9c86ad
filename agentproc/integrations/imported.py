"""Episodes from calls an agent made elsewhere (a trace), labelled as ``run`` labels them.

Each trace's calls go, in order, through an :class:`~agentproc.runs.EpisodeSession` on
fresh mock tools, so an imported episode holds what ``run`` would have recorded for the
same calls, and ``replay`` of the run file it is written to agrees with it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from agentproc.analysis import Replay, replay_calls
from agentproc.errors import InputError
from agentproc.integrations.otel_traces import Trace
from agentproc.labelling.order import OrderPolicy
from agentproc.outputs import replacing
from agentproc.runs import Episode, EpisodeSession, RunWriter, episode_record
from agentproc.workflow import CallRecord, Guard, Scenario


@dataclass
class Imported:
    """One trace, labelled."""

    trace: Trace
    episode: Episode
    differences: list[str] = field(default_factory=list)
    """Where the tool results the trace recorded differ from the mock tools'."""


def select_traces(
    scenario: Scenario,
    traces: Iterable[Trace],
    path: Path,
    note: Callable[[str], None] | None = None,
) -> list[Trace]:
    """The traces of ``scenario``; each trace of another is left out with a one-line
    ``note``: one that names another ``agentproc.scenario_id``, whose recorded messages
    do not give the scenario's inputs, or that calls none of the scenario's tools (a trace
    that calls some right and some wrong tools is kept, and labelled).

    Raises:
        InputError: no trace is of the scenario.
    """
    traces = list(traces)
    reasons = [other_scenario(scenario, trace) for trace in traces]
    kept = [trace for trace, reason in zip(traces, reasons, strict=True) if reason is None]
    if not kept:
        first = next((r for r in reasons if r is not None), "it holds no trace")
        raise InputError(path, f"{first}: is it the scenario the agent ran?")
    for trace, reason in zip(traces, reasons, strict=True):
        if reason is not None and note is not None:
            note(f"{path}: trace {trace.trace_id} skipped: {reason}")
    return kept


def other_scenario(scenario: Scenario, trace: Trace) -> str | None:
    """Why ``trace`` is not of ``scenario``, or ``None`` when nothing says so."""
    if trace.scenario_id is not None and trace.scenario_id != scenario.id:
        return f"it is of scenario {trace.scenario_id!r}, not {scenario.id!r}"
    inputs = ", ".join(f"{k} = {v}" for k, v in scenario.inputs.items())
    if trace.told and not any(inputs in text for text in trace.told):
        return f"its messages do not give scenario {scenario.id!r}'s inputs ({inputs})"
    offered = {t["function"]["name"] for t in scenario.tools}
    called = sorted({c.name for c in trace.calls})
    if not offered.intersection(called):
        shown = ", ".join(called[:5]) + (", ..." if len(called) > 5 else "")
        return f"the trace calls none of scenario {scenario.id!r}'s tools (it calls {shown})"
    return None


def label_trace(
    scenario: Scenario, trace: Trace, guard: Guard = "observe", order: OrderPolicy = "listed"
) -> Imported:
    """The episode of one trace's calls on fresh mock tools (under ``order``, the calls of
    one message of the agent's being one batch)."""
    session = EpisodeSession(
        scenario, trace.agent, guard=guard, order=order, budget=len(trace.calls) + 1
    )
    for message in trace.messages():
        session.message()
        for call in message:
            session.call(call.name, call.arguments)
    episode = session.finish(session.stop_reason)
    return Imported(trace, episode, result_differences(session.calls, trace))


def result_differences(calls: list[CallRecord], trace: Trace) -> list[str]:
    """Where the tool results a trace recorded differ from what the mock tools gave."""
    return [
        f"call {rec.index}: tool result was {call.result!r}, replay gives {rec.result!r}"
        for rec, call in zip(calls, trace.calls, strict=True)
        if call.result is not None and call.result != rec.result
    ]


def import_traces(
    scenario: Scenario,
    traces: list[Trace],
    out: Path,
    path: Path,
    guard: Guard = "observe",
    order: OrderPolicy = "listed",
    note: Callable[[str], None] | None = None,
) -> list[Imported]:
    """Label every trace of ``scenario`` and write each as an episode of ``out`` (a run
    file); a trace of another scenario is left out, with a ``note``."""
    kept = select_traces(scenario, traces, path, note)
    done = [label_trace(scenario, t, guard, order) for t in kept]
    seen: dict[str, int] = {}
    for item in done:  # several traces of one agent: its trials of the scenario
        item.episode.trial = seen.get(item.episode.agent, 0)
        seen[item.episode.agent] = item.episode.trial + 1
    # Written beside and renamed into place: a failed write leaves an old file as it was.
    with replacing(out) as tmp, RunWriter(tmp) as writer:
        for item in done:
            writer.write(episode_record(item.episode, self_contained=True))
    return done


def replay_traces(
    scenario: Scenario,
    traces: list[Trace],
    path: Path,
    guard: Guard = "observe",
    order: OrderPolicy = "listed",
    note: Callable[[str], None] | None = None,
) -> list[Replay]:
    """``replay --otel``: each trace's calls replayed like a message list's, with the tool
    results the trace recorded compared with the mock tools'; a trace of another scenario
    is left out, with a ``note``."""
    out = []
    for trace in select_traces(scenario, traces, path, note):
        calls = [(c.name, c.arguments) for c in trace.calls]
        result = replay_calls(
            scenario, calls, guard, agent=trace.agent, order=order, batches=trace.batches
        )
        result.compared = True
        result.differences = result_differences(result.calls, trace)
        out.append(result)
    return out
