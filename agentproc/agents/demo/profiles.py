"""The demo endpoint's scripted agents: one reply policy per profile.

A profile is a function from the request's :class:`~agentproc.agents.demo.turn.Turn`
to the next reply; :func:`make_profile` closes one over a seed. Every choice a profile
makes (skip this step? slip on this argument? stop early?) is a draw keyed by the seed,
the conversation (its first user message) and the step, so a request always gets the same
reply: replies do not depend on the order requests arrive in, and the same seed gives the
same run.

- ``faithful`` calls every step in order with the values the tools returned, then the
  answer tool with the last step's value.
- ``skipper`` leaves out each step but the last with probability 0.25, working its value
  out itself, so its answers stay right while its traces skip steps.
- ``sloppy`` passes a wrong argument with probability 0.15 a step (a neighbouring
  variable's value, or the right one off by one unit) and, in one episode in five, submits
  the latest value half-way through the procedure (on a branched workflow, the latest of
  the answer's type: a number, a category or a boolean).
- ``prompt-sensitive`` is ``faithful`` when its prompt tells it not to skip (``do not
  skip`` or ``step by step`` anywhere in the system or user message, as the shipped
  variants ``one-call-per-step`` and ``step-by-step`` do) and skips each step but the last
  with probability 0.5 otherwise: a prompt effect that ``agentproc compare`` can see.

On a branched workflow every profile reads the conditions and exits as a model does and
follows them on the values it knows: a step whose condition is false is not run (nor
worked out), and where an exit's condition holds the answer tool is called at once with
the exit's answer; an argument whose value it does not have, of a step not run, is left
out where the tool's schema makes it optional. The ``skipper`` leaves out required steps
only. The ``sloppy`` profile also takes the wrong branch now and then (probability 0.15
at each conditional step): it runs a step whose condition is false, or leaves out one
whose condition holds (and, when a later tool says it needs that step's value, goes back
and runs it).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

from agentproc.agents.demo.reading import Reply, literal
from agentproc.agents.demo.turn import Exit, Turn, Value, holds
from agentproc.errors import unknown_key

ProfileName = Literal["faithful", "skipper", "sloppy", "prompt-sensitive"]
PROFILES: tuple[str, ...] = get_args(ProfileName)
"""The profiles ``agentproc serve-demo --profile`` takes."""

Profile = Callable[[Turn, str], Reply]
"""A reply policy: the request's turn and the conversation key -> the next reply."""

SKIP_RATE = 0.25
"""``skipper``: the chance of leaving out each step but the last."""
SLIP_RATE = 0.15
"""``sloppy``: the chance of a wrong argument at each step."""
EARLY_RATE = 0.2
"""``sloppy``: the share of episodes answered half-way through."""
BRANCH_RATE = 0.15
"""``sloppy``: the chance of taking the wrong branch at each conditional step."""
CARELESS_SKIP_RATE = 0.5
"""``prompt-sensitive``: the chance of leaving out a step when not told otherwise."""
CUES = ("do not skip", "step by step")
"""``prompt-sensitive``: wording that makes it follow every step (case-insensitive)."""


def draw(seed: int, *keys: str) -> float:
    """A uniform number in [0, 1) fixed by the seed and the keys."""
    digest = hashlib.sha256("\x1f".join([str(seed), *keys]).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def _call(name: str, arguments: dict[str, Value]) -> Reply:
    return {"tool_call": {"name": name, "arguments": arguments}}


@dataclass(frozen=True)
class Progress:
    """How far an episode is, as the agent reckons it from the conversation."""

    known: dict[str, Value]
    """The values it holds: what the tools gave and what it worked out itself."""
    results: dict[str, Value]
    """The values the tools gave (what a value worked out in its head is worked from)."""
    ran: list[str]
    """The steps whose tools it called, in order."""
    pending: str | None
    """The step to call next (``None``: every step is done or left out)."""
    last_output: Value | None
    """What the last step's tool returned."""
    exit: Exit | None = None
    """A branched workflow: the exit whose condition holds (the answer is its answer)."""


Branch = Callable[[str, bool | None], bool]
"""A conditional step and whether its condition holds on the values known (``None``:
cannot tell) -> whether the agent runs it."""


def as_told(step: str, condition: bool | None) -> bool:
    """Run a conditional step when its condition holds (or cannot be told)."""
    return condition is not False


def walk(
    turn: Turn, skip: Callable[[str], bool] = lambda step: False, branch: Branch = as_told
) -> Progress:
    """The steps in order: those called already, those left out (``skip``: worked out
    without the tool, where it can be), up to the first still to call.

    A calculator's results name no variable: each is the value of the next step the
    agent did not leave out, as it knows which step it called the calculator for.

    A branched workflow's exit listed before a step is checked first: where it holds,
    the walk ends there. A conditional step is run where ``branch`` says (a step it does
    not run is neither called nor worked out), and where a tool said it needs the step's
    value; ``skip`` leaves out only steps that are run.
    """
    known, results = dict(turn.known), dict(turn.known)
    answers = list(turn.answered or ())
    ran: list[str] = []
    last_output = turn.last_output
    for i, step in enumerate(turn.steps):
        final = i == len(turn.steps) - 1
        if turn.exits and (fired := turn.exit_at(i, known)) is not None:
            return Progress(known, results, ran, None, last_output, fired)
        if turn.answered is None and step in turn.done:
            ran.append(step)
            continue
        if not _runs(turn, step, known, branch):
            continue
        if not final and skip(step):
            value = turn.head_value(step, results)
            expression = turn.expressions.get(step)
            if value is not None and expression is not None:
                known[expression.output] = value
                continue
        if answers:  # the calculator's next result: this step's value
            value = answers.pop(0)
            ran.append(step)
            output = turn.calls[step].output
            if value is not None and output is not None:
                known[output] = results[output] = value
            last_output = value if final else last_output
            continue
        return Progress(known, results, ran, step, last_output)
    if turn.exits and (fired := turn.exit_at(len(turn.steps), known)) is not None:
        return Progress(known, results, ran, None, last_output, fired)
    return Progress(known, results, ran, None, last_output)


def _runs(turn: Turn, step: str, known: dict[str, Value], branch: Branch) -> bool:
    """Whether the agent runs a step (one without a condition: always); a step whose
    condition is false it runs only with the values its tool requires."""
    condition = turn.conditions.get(step)
    if condition is None or turn.output(step) in turn.needed:
        return True
    told = holds(condition, known)
    if not branch(step, told):
        return False
    if told is not False:
        return True
    call = turn.calls[step]
    optional = turn.optional.get(call.tool, frozenset())
    return all(
        p in optional or source in known or literal(source) is not None
        for p, source in call.arguments
    )


Slip = Callable[[str, dict[str, Value], dict[str, Value]], dict[str, Value]]
"""A step, the arguments it is called with and the values the tools gave -> the
arguments passed."""


def follow(
    turn: Turn,
    skip: Callable[[str], bool] = lambda step: False,
    slip: Slip = lambda step, args, results: args,
    branch: Branch = as_told,
) -> Reply:
    """The next reply of an agent that takes the steps in order, except those it skips.

    A skipped step's value is worked out without its tool (a step whose value cannot be
    is called after all); the last step is never skipped, so the answer is what its tool
    returned. ``slip`` may change a call's arguments. On a branched workflow, ``branch``
    decides whether a conditional step runs (:func:`walk`), an exit whose condition
    holds is answered at once, and an argument the agent has no value for is left out
    where the tool's schema makes it optional.
    """
    progress = walk(turn, skip, branch)
    if progress.exit is not None:
        return finish(turn, progress.exit.answer)
    step = progress.pending
    if step is None:
        return finish(turn, progress.last_output, progress.known)
    call = turn.calls[step]
    optional = turn.optional.get(call.tool, frozenset())
    args: dict[str, Value] = {}
    missing: list[str] = []
    for param, source in call.arguments:
        value = progress.known.get(source, literal(source))
        if value is None:
            if param not in optional:
                missing.append(source)
        else:
            args[param] = value
    if missing:
        return {"content": f"I do not know the value of {', '.join(missing)}."}
    return _call(call.tool, slip(step, args, progress.results))


def finish(turn: Turn, value: Any, known: Mapping[str, Value] | None = None) -> Reply:
    """Submit ``value`` with the answer tool, once; then say so. An answer tool that takes
    several arguments takes a multi-field answer: each field is the value known of the
    variable of its name (an exit's answer gives them all)."""
    if turn.finish is not None and turn.finish not in turn.done and value is not None:
        params = turn.params[turn.finish]
        if isinstance(value, dict):
            return _call(turn.finish, dict(value))
        if len(params) > 1 and known is not None:
            return _call(turn.finish, {p: known[p] for p in params if p in known})
        argument = params[0] if params else "answer"
        return _call(turn.finish, {argument: value})
    return {"content": "Done."}


def faithful(seed: int) -> Profile:
    """Every step in order, with the values the tools returned."""
    return lambda turn, key: follow(turn)


def skipper(seed: int, rate: float = SKIP_RATE) -> Profile:
    """Leaves out steps (worked out in its head), the same ones for the same seed."""
    return lambda turn, key: follow(turn, skip=lambda step: draw(seed, key, step) < rate)


def _number(value: Value | None) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def sloppy(seed: int) -> Profile:
    """Slips on arguments now and then, answers some episodes half-way through, and takes
    the wrong branch of a conditional step now and then."""

    def slip(key: str, turn: Turn) -> Slip:
        def change(
            step: str, args: dict[str, Value], results: dict[str, Value]
        ) -> dict[str, Value]:
            numbers = [
                (k, v) for k, v in args.items() if isinstance(v, int | float) and _number(v)
            ]  # the arguments that are numbers (a category or a boolean is not slipped)
            if not numbers or draw(seed, key, step, "slip") >= SLIP_RATE:
                return args
            name, value = numbers[0]
            others = [
                v for k, v in sorted(results.items()) if k != name and _number(v) and v != value
            ]
            if others and draw(seed, key, step, "how") < 0.5:  # a neighbour's value
                wrong = others[int(draw(seed, key, step, "which") * len(others))]
            else:  # off by one unit
                wrong = round(value + 0.001, 3) if turn.decimal else int(value) + 1
            return {**args, name: wrong}

        return change

    def branch(key: str) -> Branch:
        def wrong(step: str, condition: bool | None) -> bool:
            if condition is not None and draw(seed, key, step, "branch") < BRANCH_RATE:
                return not condition
            return condition is not False

        return wrong

    def reply(turn: Turn, key: str) -> Reply:
        if draw(seed, key, "early") < EARLY_RATE:
            progress = walk(turn)
            ran = progress.ran
            if len(ran) >= max(1, len(turn.steps) // 2):
                params = turn.params.get(turn.finish or "", ())
                if len(params) > 1:  # a multi-field answer: the fields it knows so far
                    known = progress.known
                    return finish(turn, {p: known[p] for p in params if p in known})
                latest = turn.expressions.get(ran[-1])
                value = progress.results.get(latest.output) if latest else None
                if value is None or turn.fits_answer(value):
                    return finish(turn, value)
                # A branched workflow's answer of another type: the latest value of its
                # type (none: it goes on).
                for step in reversed(ran):
                    output = turn.output(step)
                    value = progress.results.get(output) if output else None
                    if value is not None and turn.fits_answer(value):
                        return finish(turn, value)
        return follow(turn, slip=slip(key, turn), branch=branch(key))

    return reply


def prompt_sensitive(seed: int) -> Profile:
    """Faithful when told not to skip steps; skips half of them when not."""
    careless = skipper(seed, CARELESS_SKIP_RATE)

    def reply(turn: Turn, key: str) -> Reply:
        wording = turn.prompt.lower()
        return follow(turn) if any(cue in wording for cue in CUES) else careless(turn, key)

    return reply


FACTORIES: dict[str, Callable[[int], Profile]] = {
    "faithful": faithful,
    "skipper": skipper,
    "sloppy": sloppy,
    "prompt-sensitive": prompt_sensitive,
}
"""Profile name -> its factory (taking the seed)."""


def make_profile(name: str, seed: int = 0) -> Profile:
    """The reply policy of a profile, for one seed.

    >>> from agentproc.agents.demo.reading import read_turn
    >>> make_profile("faithful")(read_turn({"messages": []}), "")
    {'content': 'Done.'}
    """
    if name not in FACTORIES:
        raise unknown_key("demo profile", name, list(FACTORIES))
    return FACTORIES[name](seed)
