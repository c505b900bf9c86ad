"""The failure taxonomy: label kinds, labels, verdicts and the per-episode metrics.

A :class:`Label` is one finding of the monitor; :class:`Metrics` is what the
labelling core computes for an episode. Both are written to run files as the
JSON forms declared in :mod:`agentproc.runs.records`.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any, Literal, NamedTuple, NotRequired

from pydantic import ConfigDict, with_config
from typing_extensions import TypedDict


class LabelKind(StrEnum):
    """The failure taxonomy: one kind per thing an agent can do wrong."""

    HALLUCINATED_CALL = "hallucinated_call"
    INVALID_ARGUMENTS = "invalid_arguments"
    REPEATED_STEP = "repeated_step"
    REORDERED = "reordered"
    WRONG_ARGUMENT = "wrong_argument"
    SKIPPED_STEP = "skipped_step"
    PREMATURE_FINISH = "premature_finish"
    MISSING_ANSWER = "missing_answer"
    WRONG_ANSWER = "wrong_answer"
    ANSWER_REVISED = "answer_revised"
    UNREADABLE = "unreadable"
    """Text mode: a step or answer line states its value in a form that cannot be read
    exactly (``12,5``, ``4.318 / 1.204``); no number is guessed for it."""
    UNRETURNED_VALUE = "unreturned_value"
    """Under the ``dependency`` order policy: an argument equal to a value that only a
    call in the same message produced (its result not yet returned): the agent worked
    the value out itself."""
    UNNEEDED_STEP = "unneeded_step"
    """A branched workflow: a call of an offered step this instance does not require
    (``reason``: ``condition``, its ``when`` is false; ``after_exit``, it lies past the
    exit that fired)."""


TEXT_ONLY: frozenset[LabelKind] = frozenset({LabelKind.UNREADABLE})
"""Kinds only a text reply can have (tool calls carry their numbers as JSON)."""
BRANCH_ONLY: frozenset[LabelKind] = frozenset({LabelKind.UNNEEDED_STEP})
"""Kinds only a branched workflow gives (every step of any other is required)."""
DEPENDENCY_ONLY: frozenset[LabelKind] = frozenset({LabelKind.UNRETURNED_VALUE})
"""Kinds only the ``dependency`` order policy gives (under ``listed`` the agent's
messages are not judged)."""


Verdict = Literal["faithful", "unfaithful_correct", "wrong", "no_answer"]
VERDICTS: tuple[Verdict, ...] = ("faithful", "unfaithful_correct", "wrong", "no_answer")


class Label(NamedTuple):
    """One finding of the monitor (immutable; a named tuple, so that building one,
    once per finding of every relabelled call, is cheap).

    ``call_index`` and ``step`` are ``None`` for episode-level findings; the
    remaining fields are attributes that only some kinds carry.
    """

    kind: LabelKind
    call_index: int | None = None
    step: int | None = None
    cause: str | None = None
    argument: str | None = None
    expected: float | int | None = None
    got: float | int | None = None
    confused_with: str | None = None
    self_correction: bool | None = None
    breaks_dependency: bool | None = None
    missing_steps: int | None = None
    live: bool | None = None
    refused: bool | None = None
    truncated: bool | None = None
    reason: str | None = None
    field: str | None = None

    def to_json(self) -> dict[str, Any]:
        """``kind``, ``call_index`` and ``step`` always; other attributes when set, in
        :data:`_ATTRS` order (written out, from the tuple unpacked: relabelling a run calls
        it for every label)."""
        (kind, call, step, cause, argument, expected, got, confused_with, self_correction,
         breaks_dependency, missing_steps, live, refused, truncated, reason,
         field) = self  # fmt: skip
        out: dict[str, Any] = {"kind": _KIND_VALUES[kind], "call_index": call, "step": step}
        if cause is not None:
            out["cause"] = cause
        if argument is not None:
            out["argument"] = argument
        if expected is not None:
            out["expected"] = expected
        if got is not None:
            out["got"] = got
        if confused_with is not None:
            out["confused_with"] = confused_with
        if self_correction is not None:
            out["self_correction"] = self_correction
        if breaks_dependency is not None:
            out["breaks_dependency"] = breaks_dependency
        if missing_steps is not None:
            out["missing_steps"] = missing_steps
        if live is not None:
            out["live"] = live
        if refused is not None:
            out["refused"] = refused
        if truncated is not None:
            out["truncated"] = truncated
        if reason is not None:
            out["reason"] = reason
        if field is not None:
            out["field"] = field
        return out

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Label:
        """Inverse of :meth:`to_json`."""
        return cls(**{**d, "kind": LabelKind(d["kind"])})

    def key(self) -> tuple[Any, ...]:
        """What two labels must share to be the same finding (used by selfcheck)."""
        return (
            self.kind.value,
            self.call_index,
            self.step,
            self.cause,
            self.argument,
            self.confused_with,
            self.self_correction,
            self.breaks_dependency,
            self.reason,
            self.field,
        )


def shown_label(label: Label, names: Mapping[str, str]) -> Label:
    """``label`` in the names the agent was shown: its ``argument`` and ``confused_with``
    (canonical variables, ``S5``) looked up in ``names`` (canonical -> shown; a variable
    it lacks keeps its name). Every label a variant's episode gets passes through here,
    so labels, replay and HTML all speak the prompt's names."""
    argument, confused = label.argument, label.confused_with
    if argument is None and confused is None:
        return label
    return label._replace(
        argument=names.get(argument, argument) if argument is not None else None,
        confused_with=names.get(confused, confused) if confused is not None else None,
    )


_KIND_VALUES: dict[LabelKind, str] = {k: k.value for k in LabelKind}
"""A kind's text, looked up (``.value`` is a descriptor call)."""
_ATTRS = (
    "cause",
    "argument",
    "expected",
    "got",
    "confused_with",
    "self_correction",
    "breaks_dependency",
    "missing_steps",
    "live",
    "refused",
    "truncated",
    "reason",
    "field",
)


@with_config(ConfigDict(extra="forbid", use_attribute_docstrings=True))
class Divergence(TypedDict):
    """Where an episode first left the procedure."""

    call_index: int
    """The call (or text entry) at which it happened; past the last one when the
    episode ended early."""
    step: int | None
    """The step the procedure expected at that point (``None``: the answer)."""
    label: str
    """The label kind that describes the departure."""


@with_config(ConfigDict(extra="forbid", use_attribute_docstrings=True))
class Metrics(TypedDict):
    """What the labelling core computes for one episode."""

    verdict: Verdict
    faithful: bool
    """A correct first answer and no label at all."""
    first_answer: float | int | bool | str | dict[str, float | int | bool | str] | None
    """The first accepted answer (a multi-field answer's: the fields given)."""
    final_answer: float | int | bool | str | dict[str, float | int | bool | str] | None
    first_answer_correct: bool
    final_answer_correct: bool
    answers: int
    """Accepted answers (text mode: distinct consecutive ones)."""
    calls: int
    """Calls made (text mode: step and answer entries read)."""
    executed_steps: int
    """Distinct steps executed at least once."""
    total_steps: int
    progress_rate: float
    """Steps whose final value is right, over ``total_steps``."""
    longest_correct_prefix: int
    """Reference calls matched in order before the first divergence."""
    first_divergence: Divergence | None
    messages: NotRequired[int]
    """Under the ``dependency`` order policy: the agent's messages that made tool calls."""
    fewest_messages: NotRequired[int]
    """Under ``dependency``: the fewest messages a faithful episode needs (the depth of the
    step graph, plus one for the answer)."""
    given_steps: NotRequired[int]
    """Steps ``1 .. given_steps`` were pre-filled (a variant's ``[prefill]``): not the
    agent's calls; ``calls``, ``executed_steps``, ``total_steps``, ``progress_rate`` and
    ``longest_correct_prefix`` then count the agent's own part."""
    batching_maximal: NotRequired[bool]
    """Under ``dependency``: every message held every step that was ready when it was sent
    (its inputs produced, itself not yet run)."""
    path: NotRequired[str]
    """A branched workflow: the name of the path the instance's correct values take."""
    path_correct: NotRequired[bool]
    """A branched workflow: the steps run are exactly the ones the instance requires."""
    exit_correct: NotRequired[bool]
    """A branched workflow: the first answer came where it should: at the exit that fires
    (its answer, before any step past it ran), or after the last step when none does."""
