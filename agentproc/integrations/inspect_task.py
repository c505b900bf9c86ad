"""An Inspect AI task over a suite (extra ``[inspect]``): samples are scenarios, tools are
the scenario's step tools (stateful per sample), the scorer is the monitor.

The tools execute on an :class:`~agentproc.runs.EpisodeSession` of their sample, so the
model is told what ``run`` would tell it. Inspect refuses some calls before a tool runs
(a tool it does not offer, arguments that fail the schema or are not JSON), so the scorer
does not read the tools' session: it labels the model's calls as the transcript holds
them, in order, on a fresh session (the calls of one assistant message being one batch),
which is what ``replay`` does with the same calls. The score's value is numeric so that
Inspect's epoch reducers and metrics can read it (see
:mod:`agentproc.integrations.inspect_metrics`); the verdict is its explanation, and its
metadata holds the verdict, the labels and the metrics (``first_divergence`` among them).

``inspect eval agentproc/agentproc_task -T suite=PATH`` finds the task through the
``inspect_ai`` entry point (:mod:`agentproc._inspect_registry`); from Python, import it
from here.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai._util.error import PrerequisiteError
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageUser
from inspect_ai.scorer import Score, Scorer, Target, scorer
from inspect_ai.solver import Generate, Solver, TaskState, generate, solver
from inspect_ai.tool import ToolDef, ToolParams

from agentproc.errors import AgentprocError, one_line, unknown_key
from agentproc.integrations.inspect_metrics import (
    METRICS,
    faithful_rate,
    first_answer_rate,
    score_value,
    unfaithful_correct_rate,
)
from agentproc.labelling.order import ORDER_POLICIES
from agentproc.runs import BUDGET_EXHAUSTED, MODES, BudgetExhausted, EpisodeSession, select
from agentproc.workflow import GUARDS, Scenario, load_scenarios, per_cell
from agentproc.workflow.variant import load_variant

__all__ = [
    "agentproc_task",
    "faithful_rate",
    "first_answer_rate",
    "label_transcript",
    "monitor",
    "unfaithful_correct_rate",
]
"""What a user imports: the task, its scorer and labelling, and the metrics it prints
(defined in :mod:`agentproc.integrations.inspect_metrics`)."""


@task
def agentproc_task(
    suite: str,
    variant: str = "default",
    mode: str = "tools",
    guard: str = "observe",
    order: str = "listed",
    per_cell_k: int | None = None,
    limit: int | None = None,
) -> Task:
    """A suite's scenarios as an Inspect task.

    Args:
        suite: A suite folder, a scenario ``.json`` or a ``.jsonl`` of scenarios.
        variant: A shipped variant or a variant file (tools mode).
        mode: ``tools`` (the compiled workflow) or ``text`` (the procedure in the prompt).
        guard: ``observe``, ``enforce`` or ``feedback``.
        order: ``listed`` or ``dependency``.
        per_cell_k: Only the first K scenarios of each grid cell.
        limit: At most this many scenarios.

    Example: ``inspect eval agentproc/agentproc_task -T suite=suites/quick``.
    """
    try:
        chosen, scenarios = _loaded(suite, variant, mode, guard, order, per_cell_k, limit)
    except AgentprocError as exc:  # a bad option or suite: one line, as Inspect says its own
        raise PrerequisiteError(f"agentproc_task: {one_line(str(exc))}") from None

    def open_session(scenario_id: Any) -> EpisodeSession:
        """A fresh session on the scenario of a sample (by its id)."""
        return EpisodeSession(
            scenarios[str(scenario_id)],
            "inspect",
            guard=guard,  # type: ignore[arg-type]
            variant=chosen,
            mode=mode,  # type: ignore[arg-type]
            order=order,  # type: ignore[arg-type]
        )

    samples = [_sample(s, open_session(s.id)) for s in scenarios.values()]
    return Task(
        dataset=MemoryDataset(samples, name=Path(suite).name),
        solver=[_tools(open_session), generate()] if mode == "tools" else [generate()],
        scorer=monitor(open_session),
    )


def _loaded(
    suite: str,
    variant: str,
    mode: str,
    guard: str,
    order: str,
    per_cell_k: int | None,
    limit: int | None,
) -> tuple[Any, dict[str, Scenario]]:
    """The task's options checked, its variant and its scenarios by id."""
    given = {"mode": (mode, MODES), "order": (order, ORDER_POLICIES), "guard": (guard, GUARDS)}
    for option, (value, allowed) in given.items():
        if value not in allowed:
            raise unknown_key(option, value, allowed)
    chosen = load_variant(variant)
    loaded = select(per_cell(load_scenarios(Path(suite)), per_cell_k), None, limit)
    return chosen, {s.id: s for s in loaded}


def _sample(scenario: Scenario, session: EpisodeSession) -> Sample:
    kinds: dict[str, Any] = {"system": ChatMessageSystem, "user": ChatMessageUser}
    messages = [kinds[m["role"]](content=m["content"]) for m in session.messages]
    return Sample(
        id=scenario.id, input=messages, target=_text(scenario.answer_fields or scenario.answer)
    )


def _text(answer: Any) -> str:
    """An answer as a score's text (a multi-field answer's fields as JSON)."""
    return json.dumps(answer) if isinstance(answer, dict) else str(answer)


@solver
def _tools(open_session: Callable[[Any], EpisodeSession]) -> Solver:
    """Give the sample its scenario's tools, on a session of its own."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        session = open_session(state.sample_id)
        state.tools = [_tool(session, t["function"]) for t in session.tools]
        return state

    return solve


def _tool(session: EpisodeSession, fn: dict[str, Any]) -> ToolDef:
    name = fn["name"]

    async def execute(**arguments: Any) -> str:
        try:
            return session.call(name, arguments).result
        except BudgetExhausted:
            return BUDGET_EXHAUSTED

    return ToolDef(
        execute,
        name=name,
        description=fn.get("description") or name,
        parameters=ToolParams.model_validate(fn["parameters"]),
    )


@scorer(metrics=METRICS)
def monitor(open_session: Callable[[Any], EpisodeSession]) -> Scorer:
    """The monitor's verdict on the model's calls (tools) or reply (text)."""

    async def score(state: TaskState, target: Target) -> Score:
        session = open_session(state.sample_id)
        if session.mode == "text":
            session.read_text(state.output.completion)
        else:
            label_transcript(session, state.messages)
        ep = session.finish(session.stop_reason)
        verdict = ep.metrics["verdict"]
        return Score(
            value=score_value(ep.metrics),
            answer=None
            if ep.metrics["final_answer"] is None
            else _text(ep.metrics["final_answer"]),
            explanation=verdict,
            metadata={
                "verdict": verdict,
                "labels": [lab.to_json() for lab in ep.labels],
                "metrics": ep.metrics,
            },
        )

    return score


def label_transcript(session: EpisodeSession, messages: list[Any]) -> None:
    """Every tool call of the assistant's messages, in order, through ``session`` (one
    message: one batch). A call whose arguments Inspect could not parse is given its parse
    error as arguments: not JSON, so it is labelled ``invalid_arguments``."""
    for msg in messages:
        if not isinstance(msg, ChatMessageAssistant) or not msg.tool_calls:
            continue
        session.message()
        for call in msg.tool_calls:
            if session.exhausted:
                return
            raw = call.arguments if call.parse_error is None else call.parse_error
            session.call(call.function, raw, call.id)
