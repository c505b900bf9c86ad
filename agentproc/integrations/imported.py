"""Episodes from calls an agent made elsewhere (a trace), labelled as ``run`` labels them.

Each trace's calls go, in order, through an :class:`~agentproc.runs.EpisodeSession` on
fresh mock tools, so an imported episode holds what ``run`` would have recorded for the
same calls, and ``replay`` of the run file it is written to agrees with it.
"""

from __future__ import annotations

from collections.abc import Iterable
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


def check_matches(scenario: Scenario, traces: Iterable[Trace], path: Path) -> None:
    """Refuse traces none of whose calls names one of the scenario's tools: the wrong
    scenario (a trace that calls some right and some wrong tools is labelled instead)."""
    offered = {t["function"]["name"] for t in scenario.tools}
    called = sorted({c.name for t in traces for c in t.calls})
    if not offered.intersection(called):
        shown = ", ".join(called[:5]) + (", ..." if len(called) > 5 else "")
        raise InputError(
            path,
            f"the trace calls none of scenario {scenario.id!r}'s tools (it calls {shown}): "
            "is it the scenario the agent ran?",
        )


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
) -> list[Imported]:
    """Label every trace and write each as an episode of ``out`` (a run file)."""
    check_matches(scenario, traces, path)
    done = [label_trace(scenario, t, guard, order) for t in traces]
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
) -> list[Replay]:
    """``replay --otel``: each trace's calls replayed like a message list's, with the tool
    results the trace recorded compared with the mock tools'."""
    check_matches(scenario, traces, path)
    out = []
    for trace in traces:
        calls = [(c.name, c.arguments) for c in trace.calls]
        result = replay_calls(
            scenario, calls, guard, agent=trace.agent, order=order, batches=trace.batches
        )
        result.compared = True
        result.differences = result_differences(result.calls, trace)
        out.append(result)
    return out
