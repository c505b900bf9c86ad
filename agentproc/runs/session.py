"""The one way an episode is built: mock tools, the monitor, the messages, the budget.

Simulated agents, the LangGraph harness, custom agents and text mode all drive
an :class:`EpisodeSession`: each call goes through :meth:`EpisodeSession.call`
(executed by the mock tools, labelled as it happens, logged as OpenAI messages),
and :meth:`EpisodeSession.finish` assembles the :class:`Episode`.

>>> from agentproc.procedures import Cell, generate_procedure
>>> from agentproc.workflow import compile_procedure
>>> session = EpisodeSession(compile_procedure(generate_procedure(Cell(steps=1), 0, 0)), "mine")
>>> session.call("step_9", "{}").refused
'unknown_tool'
>>> session.finish("no_tool_call").metrics["verdict"]
'no_answer'
"""

from __future__ import annotations

import hashlib
import random
from typing import Any

from agentproc.labelling import Label, Monitor, run_text_episode
from agentproc.labelling.calculator import monitor_for
from agentproc.labelling.order import OrderPolicy
from agentproc.runs.episode import Episode, EpisodeError, Mode, StopReason
from agentproc.runs.frames import own_frames
from agentproc.runs.redact import current_secrets, redact, redact_arguments, redact_data
from agentproc.workflow import (
    CallRecord,
    Guard,
    Scenario,
    Toolkit,
    Workflow,
    build_workflow,
    complete,
    opening_messages,
    parse_arguments,
    text_messages,
)
from agentproc.workflow.declared.compile import check_applies
from agentproc.workflow.prefill import Plan, conditioned, plan_prefill, prefill_seed
from agentproc.workflow.present import Presented, present
from agentproc.workflow.variant import Variant

BUDGET_EXHAUSTED = "Error: call budget exhausted."
"""What an agent is told for a call past its budget (the call is not executed)."""


def default_budget(workflow: Workflow) -> int:
    """The call budget of an episode: twice what a faithful agent needs, plus five (the
    steps after a pre-fill are what it needs: pre-filled calls are not the agent's)."""
    return 2 * (workflow.n_steps - workflow.given + 1) + 5


def text_of(content: Any) -> str:
    """The text of a chat message's content (a string, or a list of content parts)."""
    if isinstance(content, list):
        return "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
    return "" if content is None else str(content)


def episode_seed(seed: int, scenario_id: str, agent: str, trial: int = 0) -> random.Random:
    """The random source of one episode: fixed by the run seed, scenario, agent and trial.

    Trial 0 draws what a run without trials draws, so earlier runs repeat.
    """
    tail = f":{trial}" if trial else ""
    return random.Random(f"agentproc-episode:{seed}:{scenario_id}:{agent}{tail}")


def trial_seed(seed: int, trial: int) -> int:
    """The run seed of one trial, for agents that take an integer seed (trial 0 keeps it)."""
    if not trial:
        return seed
    digest = hashlib.sha256(f"agentproc-trial:{seed}:{trial}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


def retry_seed(seed: int, scenario_id: str) -> random.Random:
    """The random source of an episode's retry delays."""
    return random.Random(f"agentproc-retry:{seed}:{scenario_id}")


def harness_error(exc: BaseException) -> EpisodeError:
    """The error record of a fault outside any model call (a bug, a crashed agent): its
    type, message and the agent's own frames (:func:`~agentproc.runs.frames.own_frames`)."""
    return EpisodeError(
        "harness",
        redact(f"{type(exc).__name__}: {exc}")[:2000],
        type=type(exc).__name__,
        frames=own_frames(exc),
        cause=exc,
    )


class BudgetExhausted(Exception):
    """Raised by a tool wrapper when an agent calls past its budget (ends the episode)."""


class EpisodeSession:
    """One episode in the making: calls in, a labelled :class:`Episode` out.

    Args:
        scenario: A complete scenario (with its tools and prompt).
        agent: The agent's name, as recorded.
        guard: ``observe`` or ``enforce`` (see :class:`~agentproc.workflow.Toolkit`).
        budget: Tool calls allowed; :func:`default_budget` when ``None``.
        mode: ``tools``, or ``text`` for the study's protocol (see :meth:`read_text`).
        variant: How the workflow is presented (:mod:`agentproc.workflow.variant`);
            ``None`` or a variant that changes nothing: today's workflow. Its guard,
            when set, overrides ``guard``. Its ``[prefill]`` opens the episode with the
            first steps already called (:mod:`agentproc.workflow.prefill`, drawn by the
            variant's seed, the scenario and ``trial``): in the messages, executed by the
            mock tools, given to the monitor; the agent is judged from there on.
        trial: The repetition of the scenario (what a pre-fill is drawn by).
    """

    def __init__(
        self,
        scenario: Scenario,
        agent: str,
        *,
        guard: Guard = "observe",
        budget: int | None = None,
        mode: Mode = "tools",
        variant: Variant | None = None,
        order: OrderPolicy = "listed",
        trial: int = 0,
    ) -> None:
        check_applies(scenario, mode, variant)
        self.scenario = scenario
        self.agent = agent
        self.variant = variant
        if variant is not None:
            guard = variant.check(mode, guard)
        self.guard: Guard = guard
        self.mode: Mode = mode
        self.presented: Presented | None = None
        """The variant's presentation; ``None`` for today's workflow."""
        if variant is not None and not variant.is_default:
            self.presented = present(scenario, variant)
        shown = self.presented.scenario if self.presented is not None else scenario
        self.workflow = build_workflow(shown, variant if self.presented is not None else None)
        plan = None
        if variant is not None and variant.prefill is not None and mode == "tools":
            key = prefill_seed(variant.seed, scenario.id, trial)
            plan = plan_prefill(self.workflow, variant.prefill, key)
            if plan.calls:
                self.workflow = conditioned(self.workflow, plan.values, plan.wrong_steps)
        self.given = 0
        """Pre-filled calls: the first of :attr:`calls`, none of them the agent's."""
        self.toolkit = Toolkit(self.workflow, guard, self.presented)
        self.order: OrderPolicy = order
        self.monitor: Monitor = monitor_for(self.workflow, self.presented, order)
        self.batches: list[int] = []
        """How many calls each of the agent's messages held (:meth:`message`)."""
        self._marked = False
        """Whether the agent's messages are marked (else each call is one message)."""
        self.budget = budget if budget is not None else default_budget(self.workflow)
        self.redacted: list[int] = []
        """The calls whose name or arguments held a credential, cut out before they ran."""
        self.redacted_output = False
        """Text mode: whether the reply held a credential, cut out before it was read."""
        self._secrets = current_secrets()
        self.messages: list[dict[str, Any]]
        if mode == "text":
            self.messages = text_messages(scenario)
        elif self.presented is not None:
            self.messages = opening_messages(shown, self.presented.system)
        else:
            self.messages = opening_messages(scenario)
        if plan is not None:
            self._prefill(plan)
        self.output: str | None = None
        self.error: EpisodeError | None = None
        self.over_budget = False
        """Whether a call was refused because the budget was used up."""
        self._text: tuple[list[Label], Any] | None = None

    def _prefill(self, plan: Plan) -> None:
        """Execute the pre-filled calls as the agent would have made them (in the names it
        is shown), give them to the monitor and log them after the opening messages."""
        for given in plan.calls:
            spec = self.workflow.steps[given.step - 1]
            args = {p: self.workflow.to_number(u) for p, u in given.args.items()}
            spoken = (spec.name, args)
            if self.presented is not None:
                spoken = self.presented.outbound(spec.name, args)
            rec = self.toolkit.call(*spoken, given=True)
            if rec.value != given.value:  # pragma: no cover - the plan computes as the tools do
                raise RuntimeError(f"pre-filled step {given.step} returned {rec.result!r}")
            self.monitor.give(rec)
            self.messages.extend(call_messages(rec))
        self.given = len(plan.calls)

    @property
    def tools(self) -> list[dict[str, Any]]:
        """The offered tools, as the agent is shown them (OpenAI function tools)."""
        shown = self.presented.scenario if self.presented is not None else self.scenario
        return complete(shown).tools

    @property
    def calls(self) -> list[CallRecord]:
        """The calls executed so far."""
        return self.toolkit.calls

    @property
    def exhausted(self) -> bool:
        """Whether the call budget is used up: a further call is not executed."""
        return len(self.toolkit.calls) - self.given >= self.budget

    @property
    def answered(self) -> bool:
        """Whether an answer has been accepted."""
        return bool(self.toolkit.answers)

    @property
    def stop_reason(self) -> StopReason:
        """Why the episode ended, when nothing failed: ``budget`` (a call came past the
        budget), else ``answer`` (an answer was accepted), else ``no_tool_call``."""
        return "budget" if self.over_budget else "answer" if self.answered else "no_tool_call"

    def call(
        self,
        name: str,
        raw_arguments: str | dict[str, Any] | None,
        call_id: str | None = None,
        *,
        redacted: bool = False,
    ) -> CallRecord:
        """Execute one call on the mock tools, label it, and log it as messages.

        A credential in its name or arguments is cut out before it runs
        (:attr:`redacted` lists it); ``redacted``: one was cut out before it came (a
        reply the response cache stored).

        Raises:
            BudgetExhausted: the budget is used up (check :attr:`exhausted` first).
        """
        if self.exhausted:
            self.over_budget = True
            raise BudgetExhausted(f"call budget of {self.budget} exhausted")
        if not self._marked or not self.batches or self.batches[-1] == 0:
            if not self._marked:
                self.batches.append(0)
            self.monitor.message()
        self.batches[-1] += 1
        clean = self._cleaned(name, raw_arguments)
        if clean is not None:  # run as it is stored
            name, raw_arguments = clean
        if clean is not None or redacted:
            self.redacted.append(len(self.toolkit.calls))
        rec = self.toolkit.call(name, raw_arguments)
        self.monitor.observe(rec)
        self.messages.extend(call_messages(rec, call_id))
        return rec

    def _cleaned(self, name: str, arguments: str | dict[str, Any] | None) -> tuple[str, str] | None:
        """The call with the credentials cut out of its name and argument text
        (:func:`~agentproc.runs.redact.redact_arguments`), ``None`` when it holds none. It
        is cut before it runs, so the mock tools, the monitor and the run file see one call
        (replay and relabel find what the run found): an argument that held a credential
        holds ``"[REDACTED]"``, a value of no step."""
        text = arguments if isinstance(arguments, str) else parse_arguments(arguments)[0]
        clean_name = redact_data(name, self._secrets)
        clean = redact_arguments(text, self._secrets)
        if clean_name == name and clean == text:
            return None
        return clean_name, clean

    def message(self) -> None:
        """The calls made next come in one new message of the agent's (several calls in one
        message: a batch, which the ``dependency`` order policy judges). Without it, each
        call is a message of its own."""
        self._marked = True
        if not self.batches or self.batches[-1]:
            self.batches.append(0)

    def say(self, content: Any) -> None:
        """Log an assistant message with text and no tool call."""
        self.messages.append({"role": "assistant", "content": text_of(content)})

    def fail(self, error: EpisodeError) -> None:
        """Record the infrastructure failure that ends the episode (its message redacted)."""
        self.error = error
        self.messages.append({"role": "assistant", "content": None, "error": error.message})

    def read_text(self, output: str, *, redacted: bool = False) -> None:
        """Text mode: the model's whole reply, parsed and labelled, a credential in it cut
        out first (``redacted``: one was cut out before it came, a reply the response
        cache stored)."""
        clean = redact_data(output, self._secrets)  # labelled as it is stored
        self.redacted_output = redacted or clean != output
        self.output = output = clean
        self.messages.append({"role": "assistant", "content": output})
        labels, metrics, _ = run_text_episode(self.scenario, output)
        self._text = (labels, metrics)

    def finish(
        self,
        stop_reason: StopReason,
        *,
        injected: list[Label] | None = None,
        model_calls: list[dict[str, Any]] | None = None,
        usage: dict[str, Any] | None = None,
        errors: list[str] | None = None,
    ) -> Episode:
        """The labelled episode."""
        if self.mode == "text":
            labels, metrics = self._text or run_text_episode(self.scenario, "")[:2]
            if self.output is None:
                self.output = ""
        else:
            labels, metrics = self.monitor.finish()
        return Episode(
            scenario=self.scenario,
            agent=self.agent,
            calls=self.toolkit.calls if self.mode == "tools" else [],
            labels=labels,
            metrics=metrics,
            messages=self.messages,
            stop_reason=stop_reason,
            guard=self.guard,
            mode=self.mode,
            injected=injected,
            output=self.output if self.mode == "text" else None,
            model_calls=model_calls,
            usage=usage,
            errors=errors,
            error=self.error,
            variant=self.variant.name if self.variant is not None else "default",
            variant_spec=self.presented.variant.spec() if self.presented is not None else None,
            order=self.order,
            batches=[b for b in self.batches if b] if self.order == "dependency" else None,
            redacted=self._redacted(),
        )

    def _redacted(self) -> dict[str, Any] | None:
        """What a credential was cut out of before the episode was labelled, if anything."""
        out: dict[str, Any] = {}
        if self.redacted:
            out["calls"] = list(self.redacted)
        if self.redacted_output:
            out["output"] = True
        return out or None


def call_messages(rec: CallRecord, call_id: str | None = None) -> list[dict[str, Any]]:
    """One call as an assistant tool call and its tool result (OpenAI chat format)."""
    call_id = call_id if call_id is not None else f"call_{rec.index}"
    return [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": rec.name, "arguments": rec.arguments},
                }
            ],
        },
        {"role": "tool", "tool_call_id": call_id, "content": rec.result},
    ]
