"""The demo endpoint's scripted agents: one reply policy per profile.

A profile is a function from the request's :class:`~agentproc.agents.demo.reading.Turn`
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
  the latest value half-way through the procedure.
- ``prompt-sensitive`` is ``faithful`` when its prompt tells it not to skip (``do not
  skip`` or ``step by step`` anywhere in the system or user message, as the shipped
  variants ``one-call-per-step`` and ``step-by-step`` do) and skips each step but the last
  with probability 0.5 otherwise: a prompt effect that ``agentproc compare`` can see.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Literal, get_args

from agentproc.agents.demo.reading import Number, Reply, Turn
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
CARELESS_SKIP_RATE = 0.5
"""``prompt-sensitive``: the chance of leaving out a step when not told otherwise."""
CUES = ("do not skip", "step by step")
"""``prompt-sensitive``: wording that makes it follow every step (case-insensitive)."""


def draw(seed: int, *keys: str) -> float:
    """A uniform number in [0, 1) fixed by the seed and the keys."""
    digest = hashlib.sha256("\x1f".join([str(seed), *keys]).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def _call(name: str, arguments: dict[str, Number]) -> Reply:
    return {"tool_call": {"name": name, "arguments": arguments}}


def follow(
    turn: Turn,
    skip: Callable[[str], bool] = lambda step: False,
    slip: Callable[[str, dict[str, Number]], dict[str, Number]] = lambda step, args: args,
) -> Reply:
    """The next reply of an agent that takes the steps in order, except those it skips.

    A skipped step's value is worked out without its tool (a step whose value cannot be
    is called after all); the last step is never skipped, so the answer is what its tool
    returned. ``slip`` may change a call's arguments.
    """
    known = dict(turn.known)
    for i, step in enumerate(turn.steps):
        if step in turn.done:
            continue
        if i < len(turn.steps) - 1 and skip(step):
            value = turn.head_value(step)
            expression = turn.expressions.get(step)
            if value is not None and expression is not None:
                known[expression.output] = value
                continue
        missing = [p for p in turn.params[step] if p not in known]
        if missing:
            return {"content": f"I do not know the value of {', '.join(missing)}."}
        return _call(step, slip(step, {p: known[p] for p in turn.params[step]}))
    return finish(turn, turn.last_output)


def finish(turn: Turn, value: Number | None) -> Reply:
    """Submit ``value`` with the answer tool, once; then say so."""
    if turn.finish is not None and turn.finish not in turn.done and value is not None:
        argument = turn.params[turn.finish][0] if turn.params[turn.finish] else "answer"
        return _call(turn.finish, {argument: value})
    return {"content": "Done."}


def faithful(seed: int) -> Profile:
    """Every step in order, with the values the tools returned."""
    return lambda turn, key: follow(turn)


def skipper(seed: int, rate: float = SKIP_RATE) -> Profile:
    """Leaves out steps (worked out in its head), the same ones for the same seed."""
    return lambda turn, key: follow(turn, skip=lambda step: draw(seed, key, step) < rate)


def sloppy(seed: int) -> Profile:
    """Slips on arguments now and then, and answers some episodes half-way through."""

    def slip(key: str, turn: Turn) -> Callable[[str, dict[str, Number]], dict[str, Number]]:
        def change(step: str, args: dict[str, Number]) -> dict[str, Number]:
            if not args or draw(seed, key, step, "slip") >= SLIP_RATE:
                return args
            name = next(iter(args))
            others = [v for k, v in sorted(turn.known.items()) if k != name and v != args[name]]
            if others and draw(seed, key, step, "how") < 0.5:  # a neighbour's value
                wrong = others[int(draw(seed, key, step, "which") * len(others))]
            else:  # off by one unit
                wrong = round(args[name] + 0.001, 3) if turn.decimal else int(args[name]) + 1
            return {**args, name: wrong}

        return change

    def reply(turn: Turn, key: str) -> Reply:
        if draw(seed, key, "early") < EARLY_RATE:
            ran = [s for s in turn.steps if s in turn.done]
            if len(ran) >= max(1, len(turn.steps) // 2):
                latest = turn.expressions.get(ran[-1])
                value = turn.known.get(latest.output) if latest else None
                return finish(turn, value)
        return follow(turn, slip=slip(key, turn))

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
