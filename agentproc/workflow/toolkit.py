"""Stateful mock tools: the only place calls are executed and recorded.

Every call, however wrong, becomes a :class:`~agentproc.types.CallRecord` and an
answer the agent can read. An unknown tool, arguments that are not JSON or fail
the schema, and (in ``enforce`` mode) a call that breaks a dependency execute
nothing and are answered with ``Error: ...``.

Guard modes:

- ``observe`` (default): execute and record everything that can be executed.
- ``enforce``: also refuse a step whose inputs have not been produced yet, and an
  answer submitted before the last step has run, as a workflow engine would.
- ``feedback``: refuse the same, and name the step expected next in the refusal.

Under a variant (a :class:`~agentproc.workflow.present.Presented`), tools and
arguments are called by the names the agent is shown and translated back;
calculator tools compute any ``a op b``; distractor tools answer and execute
nothing; a step tool may fail transiently (seeded per call) or answer slowly.

Arithmetic: supplied numbers are rounded to whole units (3 decimals in decimal
mode), then the step's operation is applied and the result rounded the same way.
"""

from __future__ import annotations

import hashlib
import math
import random
import time
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal

from agentproc.arith import BOUND, SYMBOL, Op, apply_units, is_symbol, render, to_units
from agentproc.errors import unknown_key
from agentproc.workflow.answer_fields import fields_problem, recorded, submitted
from agentproc.workflow.calls import CallRecord, parse_arguments
from agentproc.workflow.compile import complete
from agentproc.workflow.declared_loops import item_step
from agentproc.workflow.declared_records import no_record
from agentproc.workflow.declared_view import step_text
from agentproc.workflow.runtime import Workflow
from agentproc.workflow.scenario import ScenarioStep
from agentproc.workflow.typed_args import ToolKinds, fits, is_number, tool_kinds

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator

    from agentproc.workflow.present import Presented

Guard = Literal["observe", "enforce", "feedback"]
GUARDS: tuple[Guard, ...] = ("observe", "enforce", "feedback")
_MASK = (1 << 64) - 1
RESULT_LIMIT = BOUND
"""A step whose result would exceed this magnitude is refused: only wrong inputs get
there, and beyond it a decimal value no longer survives a round trip through a float."""


def _entry_hash(*parts: object) -> int:
    digest = hashlib.blake2b(repr(parts).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


class Toolkit:
    """The mock tools of one episode, with their state.

    >>> from agentproc.procedures import Cell, generate_procedure
    >>> from agentproc.workflow.compile import compile_procedure
    >>> from agentproc.workflow.runtime import build_workflow
    >>> wf = build_workflow(compile_procedure(generate_procedure(Cell(steps=2), 0, 0)))
    >>> tk = Toolkit(wf)
    >>> tk.call("step_9", "{}").refused
    'unknown_tool'
    """

    def __init__(
        self, workflow: Workflow, guard: Guard = "observe", presented: Presented | None = None
    ) -> None:
        if guard not in GUARDS:
            raise unknown_key("guard mode", guard, GUARDS)
        self.workflow = workflow
        self.guard = guard
        self.presented = presented
        """The variant's presentation (names, tool set, faults); ``None``: the default."""
        self.calls: list[CallRecord] = []
        self.values: dict[int, int] = {}
        """Variable index -> the value the agent's last execution produced."""
        self.runs: dict[int, int] = {}
        """Step number -> how many times it executed."""
        self.answers: list[Any] = []
        self._hash = 0

    @property
    def state_hash(self) -> str:
        """A canonical hash of the state: produced values and answers, not history."""
        return f"{self._hash:016x}"

    def _set(self, var: int, units: int) -> None:
        old = self.values.get(var)
        if old is not None:
            self._hash = (self._hash - _entry_hash("S", var, old)) & _MASK
        self.values[var] = units
        self._hash = (self._hash + _entry_hash("S", var, units)) & _MASK

    @cached_property
    def _validators(self) -> dict[str, Draft202012Validator]:
        # jsonschema is imported here, on the first call that fails the fast check:
        # a run whose calls all pass it never loads it.
        from jsonschema import Draft202012Validator

        return {
            t["function"]["name"]: Draft202012Validator(t["function"]["parameters"])
            # Only a call that fails the fast check gets here, so a scenario read
            # without its tools (from a run file) compiles them only when needed.
            for t in complete(self.workflow.scenario).tools
        }

    def _schema_problem(
        self, name: str, params: tuple[str, ...], args: dict[str, Any]
    ) -> str | None:
        integer = self.workflow.number_type == "integer"
        if self.workflow.types is not None:  # a branched workflow: typed, some optional
            if fits(self._kinds.get(name), args):
                return None
        elif len(args) == len(params) and all(
            p in args and is_number(args[p], integer) for p in params
        ):
            bad = [p for p in params if isinstance(args[p], float) and not math.isfinite(args[p])]
            return f"{bad[0]} is not a finite number" if bad else None
        validator = self._validators.get(name)
        if validator is not None:
            from jsonschema.exceptions import best_match

            error = best_match(validator.iter_errors(args))
            if error is not None:
                where = "/".join(str(p) for p in error.absolute_path)
                return f"{where + ': ' if where else ''}{error.message}"
        number = self.workflow.number_type
        return f"expected exactly the arguments {', '.join(params)}, each a {number}"

    @cached_property
    def _kinds(self) -> ToolKinds:
        """A branched workflow's tools as shown -> each parameter's kind (``typed_args``)."""
        return tool_kinds(self.workflow, self.presented, self._shown)

    def call(
        self, name: str, arguments: str | dict[str, Any] | None, given: bool = False
    ) -> CallRecord:
        """Execute one call and record it. Never raises for an agent mistake. A ``given``
        call (pre-filled, :mod:`agentproc.workflow.prefill`) meets no tool fault."""
        raw, args, problem = parse_arguments(arguments)
        rec = CallRecord(index=len(self.calls), name=name, arguments=raw, result="", given=given)
        wf = self.workflow
        pres = self.presented
        canonical = name if pres is None else pres.inbound.get(name, "")
        spec = wf.by_name.get(canonical)
        if spec is not None and spec.loop is not None:
            got = args.get(self._shown(spec.loop.variable)) if isinstance(args, dict) else None
            spec = item_step(wf.item_steps[canonical], got, self.runs, wf.skip)
        faults = pres is not None and canonical and name != wf.finish_tool and not given
        if faults and self._faulted(rec):
            rec.step = spec.step if spec is not None else None
        elif spec is not None:
            rec.step = spec.step
            self._step(rec, spec, args, problem)
        elif name == wf.finish_tool:
            rec.finish = True
            self._finish(rec, args, problem)
        elif pres is not None and canonical in _OPS:
            self._calculate(rec, _OPS[canonical], args, problem)
        elif pres is not None and name in pres.distractors:
            rec.refused = "distractor"
            rec.result = "OK."
        elif pres is not None:
            rec.refused = "unknown_tool"
            offered = ", ".join(t["function"]["name"] for t in wf.scenario.tools)
            rec.result = f"Error: there is no tool named {name!r}. The tools are {offered}."
        elif wf.var_names:  # a declared workflow: its tools have their own names
            rec.refused = "unknown_tool"
            offered = ", ".join([*wf.by_name, wf.finish_tool])
            rec.result = f"Error: there is no tool named {name!r}. The tools are {offered}."
        else:
            rec.refused = "unknown_tool"
            rec.result = (
                f"Error: there is no tool named {name!r}. The tools are step_1 to "
                f"step_{wf.n_steps} and {wf.finish_tool}."
            )
        rec.state_hash = self.state_hash
        self.calls.append(rec)
        return rec

    def _faulted(self, rec: CallRecord) -> bool:
        """Apply the variant's tool faults: a slow answer, or a transient failure."""
        pres = self.presented
        if pres is None:
            return False
        faults = pres.variant.faults
        if faults.slow_seconds:
            time.sleep(faults.slow_seconds)
        if not faults.transient:
            return False
        draw = random.Random(
            f"agentproc-fault:{pres.variant.seed}:{self.workflow.scenario.id}:{rec.index}"
        )
        if draw.random() >= faults.transient:
            return False
        rec.refused = "transient"
        rec.result = (
            f"Error: {rec.name} is temporarily unavailable (a transient failure). "
            "Nothing was executed; try again."
        )
        return True

    def _shown(self, var: str) -> str:
        return var if self.presented is None else self.presented.shown(var)

    def _next_step(self) -> str:
        """Feedback mode: the step expected next, as the refusal names it."""
        wf = self.workflow
        skip = wf.skip
        nxt = next((s for s in wf.steps if s.step not in self.runs and s.step not in skip), None)
        if nxt is None:
            return f" The workflow expects {wf.finish_tool} next."
        tool = nxt.name if self.presented is None else self.presented.tool_names[nxt.name]
        if nxt.op is None:  # a declared workflow's step: its formula
            return (
                f" The next step is step {nxt.step} ({step_text(nxt, self._shown)}): call {tool}."
            )
        a, b = nxt.terms(self._shown)
        return (
            f" The next step is step {nxt.step} ({self._shown(nxt.output)} = {a} "
            f"{SYMBOL[nxt.op]} {b}): call {tool}."
        )

    def _valid(
        self, rec: CallRecord, params: tuple[str, ...], args: Any, problem: str | None
    ) -> dict[str, Any] | None:
        """``args`` if they fit ``params`` (the names shown); else the call is refused."""
        if args is not None and problem is None:
            problem = self._schema_problem(rec.name, params, args)
        if args is None or problem is not None:
            rec.refused = "invalid_arguments"
            rec.result = f"Error: invalid arguments for {rec.name}: {problem or 'invalid'}. "
            rec.result += "Nothing was executed."
            return None
        return args  # type: ignore[no-any-return]

    def _step(
        self, rec: CallRecord, spec: ScenarioStep, args: dict[str, Any] | None, problem: str | None
    ) -> None:
        wf, pres = self.workflow, self.presented
        args = self._valid(rec, tuple(self._shown(p) for p in spec.params), args, problem)
        if args is None:
            return
        if pres is not None:
            args = pres.canonical_args(spec, args)
        rec.args = args
        if self.guard != "observe":
            skip = wf.skip
            missing = sorted(d for d in spec.reads if d not in self.runs and d not in skip)
            if missing:
                first = missing[0]
                why = f"step {spec.step} reads the output of step {first}, which has not been "
                _refuse(rec, "dependency", why + f"executed yet. Execute step {first} first")
                if self.guard == "feedback":
                    rec.result += self._next_step()
                return
        missing_record = no_record(spec, args)
        if missing_record is not None:  # the agent's key: a wrong argument, not a fault
            return _refuse(rec, "unknown_key", missing_record)
        scale = wf.scale
        supplied = {p: wf.units(args[p]) for p in spec.params if p in args}
        try:
            value = spec.compute(supplied, scale)
        except KeyError as exc:  # an optional argument the values given make it read
            rec.refused = "invalid_arguments"
            rec.result = (
                f"Error: invalid arguments for {rec.name}: {self._shown(exc.args[0])} is "
                "needed with the values given. Nothing was executed."
            )
            return
        if value is None:
            zero = f"step {spec.step} divides by zero"
            if spec.formula is None:
                zero += f" ({spec.terms(self._shown)[1]} = 0)"
            return _refuse(rec, "division_by_zero", zero)
        if abs(value) > RESULT_LIMIT * scale and not is_symbol(value):
            beyond = f"step {spec.step} would produce a value beyond {RESULT_LIMIT:.0e}"
            return _refuse(rec, "out_of_range", beyond)
        before = self.values.get(spec.target)
        self._set(spec.target, value)
        self.runs[spec.step] = self.runs.get(spec.step, 0) + 1
        rec.value = value
        out = self._shown(spec.output)
        rec.result = f"{out} = {render(value, scale)}"
        if before is not None:
            rec.result += (
                f" (note: step {spec.step} had already been executed; "
                f"{out} was {render(before, scale)} and has been replaced)"
            )

    def _calculate(
        self, rec: CallRecord, op: Op, args: dict[str, Any] | None, problem: str | None
    ) -> None:
        """A calculator tool: ``a op b``, for whatever step the agent means."""
        scale = self.workflow.scale
        args = self._valid(rec, ("a", "b"), args, problem)
        if args is None:
            return
        rec.args = args
        value = apply_units(op, to_units(args["a"], scale), to_units(args["b"], scale), scale)
        if value is None:
            return _refuse(rec, "division_by_zero", "division by zero (b = 0)")
        if abs(value) > RESULT_LIMIT * scale:
            return _refuse(rec, "out_of_range", f"the result would be beyond {RESULT_LIMIT:.0e}")
        rec.value = value
        rec.result = f"{render(value, scale)}"

    def _finish(self, rec: CallRecord, args: dict[str, Any] | None, problem: str | None) -> None:
        wf = self.workflow
        if wf.answer_fields and args is not None and problem is None:
            problem = fields_problem(wf, args)  # any field may be left out
        if args is None or problem is not None or not wf.answer_fields:
            args = self._valid(rec, (wf.finish_argument,), args, problem)
            if args is None:
                return
        rec.args = args
        last = wf.last_step
        if self.guard != "observe" and last is not None and last not in self.runs:
            rec.refused = "premature"
            rec.result = (
                f"Error: the workflow is not finished: step {last} has not been executed. "
                "Nothing was submitted."
            )
            if self.guard == "feedback":
                rec.result += self._next_step()
            return
        if wf.answer_fields:
            given = submitted(wf, args)
            self.answers.append(given)
            for f, v in given.items():
                entry = _entry_hash("A", len(self.answers), f, wf.units(v))
                self._hash = (self._hash + entry) & _MASK
            rec.answer, rec.result = given, recorded(given)
            return
        answer = args[wf.finish_argument]
        self.answers.append(answer)
        self._hash = (self._hash + _entry_hash("A", len(self.answers), wf.units(answer))) & _MASK
        rec.answer = answer
        rec.result = f"Answer recorded: {answer}."


def _refuse(rec: CallRecord, refused: str, why: str) -> None:
    """A step or calculator call that executes nothing: ``why`` it is refused."""
    rec.refused = refused
    rec.result = f"Error: {why}. Nothing was executed."


_OPS: dict[str, Op] = {op.value: op for op in Op}
"""Calculator tools by canonical name."""
