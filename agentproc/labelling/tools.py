"""Tool mode: label each executed call (a :class:`CallRecord`) with the labelling core.

The adapter reads what the mock tools recorded: which tool, the parsed
arguments, whether it was refused and the value it produced. A wrong argument's
cause: ``propagated`` when it equals the agent's own (wrong) latest value of that
variable, else the core's nearest-variable search on the argument's value
(:func:`wrong_argument`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from agentproc.arith import to_units
from agentproc.errors import StoredCallError
from agentproc.labelling.core import OTHER, PROPAGATED, LabelCore, confusion_cause
from agentproc.labelling.labels import Label, LabelKind, Metrics, shown_label
from agentproc.labelling.order import InFlight, OrderPolicy
from agentproc.workflow import CallRecord, Workflow
from agentproc.workflow.calls import UNREAD, read_stored

if TYPE_CHECKING:
    from agentproc.workflow.present import Presented

K = LabelKind
_WRONG_ARGUMENT = K.WRONG_ARGUMENT


class Monitor:
    """Labels calls as they happen; :meth:`finish` adds the episode-level findings.

    >>> # monitor = Monitor(workflow); monitor.observe(record); monitor.finish()
    """

    def __init__(
        self,
        workflow: Workflow,
        names: Mapping[str, str] | None = None,
        order: OrderPolicy = "listed",
    ) -> None:
        self.wf = workflow
        self.core = LabelCore(workflow, order)
        self.names = names if names and any(k != v for k, v in names.items()) else None
        """Canonical variable -> the name the agent was shown (a variant's
        :attr:`~agentproc.workflow.present.Presented.names`); ``None`` when every name is
        its own. Labels name variables as shown (:func:`shown_label`)."""
        self._half_unit = workflow.scale > 1 and workflow.tolerance == 0.5
        """Whether :meth:`Workflow.close` is equality of the number read in units."""
        self._n_steps = workflow.n_steps

    @property
    def labels(self) -> list[Label]:
        """The per-call labels so far."""
        return self.core.labels

    def message(self) -> None:
        """The calls observed next came in one new message of the agent's."""
        self.core.new_message()

    def observe(self, rec: CallRecord) -> list[Label]:
        """Label one executed call; returns the labels it received."""
        start = len(self.core.labels)
        self.observe_parts(rec.index, *rec.observed)
        return self.core.labels[start:]

    def give(self, rec: CallRecord) -> None:
        """A pre-filled call, not the agent's (:meth:`LabelCore.give`): never labelled."""
        if rec.step is None or rec.value is None:
            raise ValueError(f"pre-filled call {rec.index} executed no step")
        self.core.give(rec.index, rec.step, rec.value)

    def observe_parts(
        self,
        index: int,
        step: int | None,
        finish: bool,
        refused: str | None,
        args: dict[str, Any] | None,
        value: int | None,
        answer: float | int | None,
    ) -> None:
        """:meth:`observe` of a call given as its parts: ``value`` is the step's output in
        units, ``answer`` the submitted answer."""
        core = self.core
        entry = core.begin(index, step, finish)
        if step is not None and refused not in UNREAD:  # a step it ran: the common case
            if not 0 < step <= self._n_steps:
                raise IndexError(f"no step {step}")
            self._arguments(index, args or {}, step, self.wf.param_vars[step - 1])
            if refused == "dependency":
                core.add(Label(K.REORDERED, index, step, breaks_dependency=True, refused=True))
            elif value is not None:  # else refused (division by zero, out of range)
                core.record_step(entry, step, value)
        elif refused == "transient":
            # A tool fault, not the agent's doing: it neither counts nor diverges.
            core.drop(entry)
        elif refused in ("unknown_tool", "distractor"):
            core.add(Label(K.HALLUCINATED_CALL, index))
        elif refused == "invalid_arguments":
            core.add(Label(K.INVALID_ARGUMENTS, index, step))
        elif finish:
            core.record_answer(entry, answer, refused=refused is not None)

    def observe_stored(
        self,
        calls: Sequence[Any],
        presented: Presented | None = None,
        batches: Sequence[int] | None = None,
        given: int = 0,
    ) -> None:
        """:meth:`observe` each call of a stored trace, each read by
        :func:`~agentproc.workflow.calls.read_stored` (under a variant, its arguments keyed
        back to the canonical variables). ``batches``: how many calls each of the agent's
        messages held, in order (``None``: one call per message); ``given``: how many calls
        open the trace pre-filled (:meth:`give` n, in no message). A call that is not one
        raises :class:`~agentproc.errors.StoredCallError` naming its index and field."""
        wf = self.wf
        scale, finish_tool = wf.scale, wf.finish_tool
        # Read to its parts and labelled from them, no record made (a run's every call
        # passes here); a subclass that labels whole records (the calculator's) gets each.
        parts = type(self).observe is Monitor.observe
        typed = wf.types is not None
        starts = message_starts(len(calls) - given, batches)
        for i, c in enumerate(calls):
            if i < given:
                self._give_stored(c, i)
                continue
            if i - given in starts:
                self.core.new_message()
            rec = None if parts else CallRecord.read(c, i, scale, finish_tool, typed)
            step, finish, refused, args, value, answer = (
                read_stored(c, i, scale, finish_tool, typed) if rec is None else rec.observed
            )
            try:
                if presented is not None and step is not None and args is not None:
                    args = presented.canonical_args(wf.steps[step - 1], args)
                if rec is None:
                    self.observe_parts(i, step, finish, refused, args, value, answer)
                else:
                    rec.args = args
                    self.observe(rec)
            except (KeyError, TypeError, AttributeError, IndexError):
                # A step it has not, arguments it lacks, a value that is no number.
                raise StoredCallError(i, None, "not a recorded call") from None

    def _give_stored(self, call: Any, index: int) -> None:
        wf = self.wf
        step, _, refused, _, value, _ = read_stored(
            call, index, wf.scale, wf.finish_tool, wf.types is not None
        )
        if step is None or value is None or refused is not None:
            raise StoredCallError(index, None, "a pre-filled call executes a step")
        self.core.give(index, step, value)

    def _arguments(
        self,
        index: int,
        args: dict[str, Any],
        step: int,
        param_vars: tuple[tuple[str, int], ...],
    ) -> None:
        wf = self.wf
        correct, numbers = wf.correct, wf.numbers
        flight = self.core.in_flight
        for param, var in param_vars:
            try:
                got = args[param]
            except KeyError:  # an optional argument (a branched workflow's) left out
                if wf.branching is None:
                    raise  # every argument of any other workflow is required: not a call
                self._left_out(index, step, param, var)
                continue
            if flight is not None and var in flight.fresh:
                self._unreturned(flight, index, step, param, var, got)
            if got == numbers[var]:  # the correct number as written: the common case
                continue
            read: int | None = None
            if self._half_unit:
                read = wf.units(got)
                if read == correct[var]:
                    continue
                exact: Callable[[int], bool] | None = None  # equality with ``read``
            else:
                exact = wf.matcher(got)
                if exact(correct[var]):
                    continue
            label = wrong_argument(self.core, index, step, param, got, exact, read, var)
            self.core.add(label if self.names is None else shown_label(label, self.names))

    def _left_out(self, index: int, step: int, param: str, var: int) -> None:
        """A branched workflow's optional argument left out although its variable is
        computed on the instance's path: ``propagated`` when the agent never produced it
        (the step that computes it did not run), else ``other``."""
        wf = self.wf
        cause = OTHER if var in self.core.produced else PROPAGATED
        label = Label(K.WRONG_ARGUMENT, index, step, cause, param, wf.expected[var], None)
        self.core.add(label if self.names is None else shown_label(label, self.names))

    def _unreturned(
        self, flight: InFlight, index: int, step: int, param: str, var: int, got: Any
    ) -> None:
        """``unreturned_value`` when ``got`` is a value of ``var`` that only a call of the
        same message produced (under ``dependency``)."""
        wf = self.wf
        matches = wf.units(got).__eq__ if self._half_unit else wf.matcher(got)
        if flight.unreturned(var, matches):
            label = Label(K.UNRETURNED_VALUE, index, step, argument=param, got=got)
            self.core.add(label if self.names is None else shown_label(label, self.names))

    def finish(self) -> tuple[list[Label], Metrics]:
        """All labels, sorted by call, and the episode's metrics."""
        return self.core.finish()


def wrong_argument(
    core: LabelCore,
    index: int,
    step: int,
    param: str,
    got: Any,
    exact: Callable[[int], bool] | None = None,
    read: int | None = None,
    var: int | None = None,
) -> Label:
    """The label of an argument whose value is not the correct one, with its cause.

    Exact matches are searched first (``propagated``, then the nearest variable);
    then *shortened* ones: a number written with fewer decimals than the mode's
    that equals a candidate truncated or rounded to those decimals (``-4.0`` for
    ``-4.002``), labelled with ``truncated: true``. ``propagated`` is any value the
    agent produced for the variable (its latest or an earlier one); the candidates of
    the search are every value each other variable has held. A shortened copy of the
    right value itself is an ``other`` slip, never a confusion with a variable that
    holds the same value. ``exact`` is
    ``core.wf.matcher(got)``, when the caller has it; ``read`` is ``got`` in units when
    that matcher is equality with it (then ``exact`` need not be given, and the exact
    search is a look-up); ``var`` is ``param``'s variable index.
    """
    wf = core.wf
    if var is None:
        var = int(param[1:]) if not wf.var_names else wf.var_names.index(param)
    right = wf.correct[var]
    own = core.produced.get(var)
    if exact is None and read is None:
        exact = wf.matcher(got)
    if (
        own is not None
        and own != right
        and (own == read if exact is None else exact(own))  # the common case, first
    ):
        # Written positionally (kind, call_index, step, cause, argument, expected, got):
        # most wrong arguments of a run are propagated ones.
        return Label(_WRONG_ARGUMENT, index, step, PROPAGATED, param, wf.expected[var], got)
    expected = wf.expected[var]
    if exact is None:
        exact = read.__eq__
    base: dict[str, Any] = {"argument": param, "expected": expected, "got": got}
    if wf.types is not None and isinstance(got, bool):
        # Two values only: another variable holding the same one does so by chance.
        cause = PROPAGATED if var in core.held and core.own(var, exact) else OTHER
        return Label(K.WRONG_ARGUMENT, index, step, cause=cause, **base)
    cuts = _shortener(got, wf.scale)
    shorten = cuts[0] if cuts is not None else None
    right_cut = shorten is not None and shorten(right)
    for match, cut in ((exact, None), (shorten, True)):
        if match is None:
            continue
        if cut and right_cut:  # the right value cut: a slip, whoever else holds that value
            break
        if var in core.held and core.own(var, match):  # a value of its own, maybe earlier
            return Label(K.WRONG_ARGUMENT, index, step, cause=PROPAGATED, truncated=cut, **base)
        if cut is None:
            best = (
                core.confusion_of(var, read) if read is not None else core.confusion([(var, match)])
            )
        else:
            assert cuts is not None
            best = core.confusion_in(var, cuts[1], cuts[2], match)
        if best is not None:
            return Label(
                K.WRONG_ARGUMENT,
                index,
                step,
                cause=confusion_cause(best, step + wf.n_inputs),
                confused_with=wf.var_name(best),
                truncated=cut,
                **base,
            )
    return Label(K.WRONG_ARGUMENT, index, step, cause=OTHER, truncated=right_cut or None, **base)


def _shortener(got: Any, scale: int) -> tuple[Callable[[int], bool], int, int] | None:
    """Whether a unit value, cut to the decimals ``got`` was written with, is ``got``,
    and the window of unit values that can pass (within one cut of ``got``); ``None``
    when ``got`` has every decimal of the mode (nothing was cut)."""
    if scale == 1 or isinstance(got, bool) or not isinstance(got, int | float):
        return None
    if isinstance(got, float) and not math.isfinite(got):
        return None
    text = repr(got)
    dot = text.find(".")
    if "e" in text:  # 1e-05, 1.5e+16: read as a decimal
        exponent = Decimal(text).as_tuple().exponent
        decimals = -exponent if isinstance(exponent, int) and exponent < 0 else 0
    else:  # the digits after the point (none in an integer)
        decimals = len(text) - dot - 1 if dot >= 0 else 0
    full = len(str(scale)) - 1
    if decimals >= full:
        return None
    step = 10 ** (full - decimals)
    units = to_units(got, scale)

    def matches(candidate: int) -> bool:
        if candidate == units:
            return False
        sign = -1 if candidate < 0 else 1
        whole, rest = divmod(abs(candidate), step)
        cut = sign * whole * step
        rounded = sign * (whole + (2 * rest >= step)) * step
        return units in (cut, rounded)

    # Truncated or rounded to ``units``, a value lies less than one ``step`` from it.
    return matches, units - step, units + step


def message_starts(n: int, batches: Sequence[int] | None) -> set[int] | range:
    """The indices of the calls that open a message, of ``n`` calls in messages of
    ``batches`` calls each (``None``: one call per message; calls past them: one each)."""
    if batches is None:
        return range(n)
    starts, at = set(), 0
    for size in batches:
        starts.add(at)
        at += size
    starts.update(range(at, n))
    return starts


def label_calls(
    workflow: Workflow,
    calls: list[CallRecord],
    order: OrderPolicy = "listed",
    batches: Sequence[int] | None = None,
) -> tuple[list[Label], Metrics]:
    """Label a whole recorded trace at once (``batches``: as :meth:`Monitor.observe_stored`)."""
    monitor = Monitor(workflow, order=order)
    starts = message_starts(len(calls), batches)
    for i, rec in enumerate(calls):
        if i in starts:
            monitor.message()
        monitor.observe(rec)
    return monitor.finish()
