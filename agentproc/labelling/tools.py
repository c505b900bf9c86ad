"""Tool mode: label each executed call (a :class:`CallRecord`) with the labelling core.

The adapter reads what the mock tools recorded: which tool, the parsed
arguments, whether it was refused and the value it produced. A wrong argument's
cause: ``propagated`` when it equals the agent's own (wrong) latest value of that
variable, else the core's nearest-variable search on the argument's value
(:func:`wrong_argument`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from decimal import Decimal
from typing import Any

from agentproc.arith import to_units
from agentproc.jsonio import plain_object
from agentproc.labelling.core import OTHER, PROPAGATED, LabelCore, confusion_cause
from agentproc.labelling.labels import Label, LabelKind, Metrics
from agentproc.workflow import CallRecord, ScenarioStep, Workflow
from agentproc.workflow.calls import UNREAD, stored_arguments

K = LabelKind
_WRONG_ARGUMENT = K.WRONG_ARGUMENT
_UNSET = (None,) * (len(Label._fields) - 7)
_new_label = tuple.__new__


class Monitor:
    """Labels calls as they happen; :meth:`finish` adds the episode-level findings.

    >>> # monitor = Monitor(workflow); monitor.observe(record); monitor.finish()
    """

    def __init__(self, workflow: Workflow) -> None:
        self.wf = workflow
        self.core = LabelCore(workflow)
        self._half_unit = workflow.scale > 1 and workflow.tolerance == 0.5
        """Whether :meth:`Workflow.close` is equality of the number read in units."""

    @property
    def labels(self) -> list[Label]:
        """The per-call labels so far."""
        return self.core.labels

    def observe(self, rec: CallRecord) -> list[Label]:
        """Label one executed call; returns the labels it received."""
        start = len(self.core.labels)
        self.observe_parts(
            rec.index, rec.step, rec.finish, rec.refused, rec.args, rec.value, rec.answer
        )
        return self.core.labels[start:]

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
        """:meth:`observe` of a call given as its parts (a stored call, no record built):
        ``value`` is the step's output in units, ``answer`` the submitted answer."""
        core = self.core
        entry = core.begin(index, step, finish)
        if step is not None and refused not in UNREAD:  # a step it ran: the common case
            if not 0 < step <= self.wf.n_steps:
                raise IndexError(f"no step {step}")
            spec = self.wf.steps[step - 1]
            self._arguments(index, args or {}, spec, self.wf.param_vars[step - 1])
            if refused == "dependency":
                core.add(Label(K.REORDERED, index, step, breaks_dependency=True, refused=True))
            elif value is not None:  # else refused (division by zero, out of range)
                core.record_step(entry, spec, value)
        elif refused == "transient":
            # A tool fault, not the agent's doing: it neither counts nor diverges.
            core.drop(entry)
        elif refused in ("unknown_tool", "distractor"):
            core.add(Label(K.HALLUCINATED_CALL, index))
        elif refused == "invalid_arguments":
            core.add(Label(K.INVALID_ARGUMENTS, index, step))
        elif finish:
            core.record_answer(entry, answer, refused=refused is not None)

    def observe_stored(self, calls: Sequence[Any], known: bool = True) -> None:
        """:meth:`observe` each call of a stored trace straight from its compact parts
        ``[name, arguments, step, refused, value]``, as :meth:`CallRecord.stored` reads
        them, without building records (relabelling a run does this for every call).

        With ``known``, a step's first run whose text is the step's
        :attr:`~agentproc.workflow.Workflow.right_arguments` (every argument right, as a
        call records an object) is not parsed at all (making those texts costs about what
        they save in one episode: a caller that labels a workflow's episodes one by one
        passes ``known`` from its second on). Any other call that ran has its arguments
        parsed by :func:`~agentproc.jsonio.plain_object` (a flat object: the commonest),
        the rest by :func:`~agentproc.workflow.calls.stored_arguments`. Parsing a text
        again costs less than looking it up among those seen (a relabelled run repeats
        about half of them): nothing is kept between calls. A call that is not one raises
        :class:`StoredCallError`.
        """
        wf, core = self.wf, self.core
        scale, finish, n_steps = wf.scale, wf.finish_tool, wf.n_steps
        steps, param_vars, targets = wf.steps, wf.param_vars, wf.targets
        numbers, correct, half_unit = wf.numbers, wf.correct, self._half_unit
        expected = wf.expected
        right_arguments = wf.right_arguments if known else (None,) * n_steps
        ran, produced, trace, labels = core.last_value, core.produced, core.trace, core.labels
        run_at, counted = core.run_at, core.calls
        observe, check = self.observe_parts, self._arguments
        i = 0
        try:
            for i, c in enumerate(calls):
                if type(c) is not list or len(c) != 5:
                    raise TypeError("a compact call is [name, arguments, step, refused, value]")
                name, text, step, refused, value = c
                if type(name) is not str:
                    raise TypeError("name must be a string")
                if (
                    refused is None
                    and value is not None
                    and type(step) is int
                    and 0 < step <= n_steps
                    and step not in ran
                    and name != finish
                ):
                    # A step's first run that produced a value, the commonest call:
                    # what observe_parts, begin and record_step do for it, inline. Its
                    # text when every argument is right needs no parsing.
                    if text != right_arguments[step - 1]:
                        args = _stored_arguments(text, refused)
                        assert args is not None  # read: it was not refused
                        spec_vars = param_vars[step - 1]
                        for param, var in spec_vars:
                            got = args[param]
                            if got == numbers[var]:  # the right number as written
                                continue
                            if half_unit:
                                # to_units(got, scale), its common case inline
                                u = got * scale
                                if not (-1e15 < u < 1e15 and (read := round(u)) / scale == got):
                                    read = to_units(got, scale)
                                if read == correct[var]:
                                    continue
                                if read == produced.get(var):
                                    # Its own wrong value carried forward, the commonest
                                    # wrong argument: wrong_argument's first finding, as
                                    # _propagated makes it.
                                    x = expected[var]
                                    found = (_WRONG_ARGUMENT, i, step, PROPAGATED, param, x, got)
                                    labels.append(_new_label(Label, found + _UNSET))
                                    continue
                            # Any other: this argument and the rest, searched in full.
                            rest = spec_vars[spec_vars.index((param, var)) :]
                            check(i, args, steps[step - 1], rest)
                            break
                    units = round(value * scale)
                    trace.append((i, step))  # an Entry(i, step, executed=True), as a pair
                    run_at[step] = i
                    ran[step] = produced[targets[step - 1]] = core.last_executed = units
                elif name == finish:
                    observe(i, step, True, refused, _stored_arguments(text, refused), None, value)
                else:
                    units = None if value is None else round(value * scale)
                    args = _stored_arguments(text, refused)
                    observe(i, step, False, refused, args, units, None)
            core.calls = counted + len(calls)  # each call counts once, labelled here or not
        except ValueError as exc:
            raise StoredCallError(i, "arguments", str(exc)) from None
        except (KeyError, TypeError, AttributeError, IndexError):
            raise StoredCallError(i, None, "not a recorded call") from None

    def _arguments(
        self,
        index: int,
        args: dict[str, Any],
        spec: ScenarioStep,
        param_vars: tuple[tuple[str, int], ...],
    ) -> None:
        wf = self.wf
        correct, numbers = wf.correct, wf.numbers
        for param, var in param_vars:
            got = args[param]
            if got == numbers[var]:  # the correct number as written: the common case
                continue
            read: int | None = None
            if self._half_unit:
                read = to_units(got, wf.scale)
                if read == correct[var]:
                    continue
                exact: Callable[[int], bool] | None = None  # equality with ``read``
            else:
                exact = wf.matcher(got)
                if exact(correct[var]):
                    continue
            self.core.labels.append(
                wrong_argument(self.core, index, spec, param, got, exact, read, var)
            )

    def finish(self) -> tuple[list[Label], Metrics]:
        """All labels, sorted by call, and the episode's metrics."""
        return self.core.finish()


class StoredCallError(ValueError):
    """A stored call that is not one: which call, which of its fields, and why."""

    def __init__(self, index: int, field: str | None, reason: str) -> None:
        super().__init__(reason)
        self.index, self.field, self.reason = index, field, reason


def wrong_argument(
    core: LabelCore,
    index: int,
    spec: ScenarioStep,
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
    ``-4.002``), labelled with ``truncated: true``. A shortened copy of the right
    value itself is an ``other`` slip, not a carried-forward mistake. ``exact`` is
    ``core.wf.matcher(got)``, when the caller has it; ``read`` is ``got`` in units when
    that matcher is equality with it (then ``exact`` need not be given, and the exact
    search is a look-up); ``var`` is ``param``'s variable index.
    """
    wf = core.wf
    if var is None:
        var = int(param[1:])
    right = wf.correct[var]
    own = core.produced.get(var)
    if exact is None and read is None:
        exact = wf.matcher(got)
    if (
        own is not None
        and own != right
        and (own == read if exact is None else exact(own))  # the common case, first
    ):
        return _propagated(wf, index, spec.step, param, var, got)
    expected = wf.expected[var]
    if exact is None:
        exact = read.__eq__
    base: dict[str, Any] = {"argument": param, "expected": expected, "got": got}
    cuts = _shortener(got, wf.scale)
    shorten = cuts[0] if cuts is not None else None
    for match, cut in ((exact, None), (shorten, True)):
        if match is None:
            continue
        if cut and own is not None and own != right and match(own):
            return Label(
                K.WRONG_ARGUMENT, index, spec.step, cause=PROPAGATED, truncated=cut, **base
            )
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
                spec.step,
                cause=confusion_cause(best, wf.targets[spec.step - 1]),
                confused_with=f"S{best}",
                truncated=cut,
                **base,
            )
    cut = True if shorten is not None and shorten(right) else None
    return Label(K.WRONG_ARGUMENT, index, spec.step, cause=OTHER, truncated=cut, **base)


def _stored_arguments(text: Any, refused: str | None) -> dict[str, Any] | None:
    """A stored call's parsed arguments: :func:`~agentproc.jsonio.plain_object` for a
    call that ran (a flat object, the commonest), else
    :func:`~agentproc.workflow.calls.stored_arguments`."""
    args = plain_object(text) if refused is None and type(text) is str and text else None
    return stored_arguments(text, refused) if args is None else args


def _propagated(wf: Workflow, index: int, step: int, param: str, var: int, got: Any) -> Label:
    """The ``wrong_argument`` label of the agent's own wrong value carried forward."""
    # The tuple itself (kind, call_index, step, cause, argument, expected, got, and no
    # other attribute): less than half the cost of calling Label.
    head = (_WRONG_ARGUMENT, index, step, PROPAGATED, param, wf.expected[var], got)
    return _new_label(Label, head + _UNSET)


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


def label_calls(workflow: Workflow, calls: list[CallRecord]) -> tuple[list[Label], Metrics]:
    """Label a whole recorded trace at once."""
    monitor = Monitor(workflow)
    for rec in calls:
        monitor.observe(rec)
    return monitor.finish()
