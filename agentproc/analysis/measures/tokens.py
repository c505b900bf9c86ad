"""Token totals of an agent's model calls, and what they cost at a price.

Model agents record each episode's ``usage`` (input and output tokens over its model
calls); simulated agents and factories that do not report usage record none, and are
said to have no token counts rather than zero tokens. A price is USD per million input
and output tokens (``report --price IN,OUT``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

Price = tuple[float, float]
"""USD per million input tokens, per million output tokens."""
MAX_PRICE = 1_000_000.0
"""The highest price taken, USD per million tokens (a dollar a token): above it a price is a
typo, and one near the largest float costs a run ``$inf``."""
NO_TOKENS = "no token counts"
"""What an agent whose episodes recorded no usage shows instead of 0."""


@dataclass(slots=True)
class Tokens:
    """Tokens over the episodes that recorded usage (errored ones too: they were spent),
    summed as records are read (:meth:`add`)."""

    input: int = 0
    output: int = 0
    episodes: int = 0
    """Episodes whose record holds usage."""

    def add(self, rec: Mapping[str, Any]) -> None:
        usage = rec.get("usage")
        if not isinstance(usage, Mapping):
            return
        self.input += _count(usage.get("input_tokens"))
        self.output += _count(usage.get("output_tokens"))
        self.episodes += 1

    def counted(self) -> Tokens | None:
        """These totals, or ``None`` when no episode recorded usage."""
        return self if self.episodes else None

    def cost(self, price: Price) -> float:
        """USD at ``price``.

        >>> Tokens(2_000_000, 500_000, 3).cost((3.0, 15.0))
        13.5
        """
        return (self.input * price[0] + self.output * price[1]) / 1_000_000


def check_price(price: Price) -> Price:
    """``price`` if both its figures are finite, at least 0 and at most :data:`MAX_PRICE`;
    else a :class:`~agentproc.errors.ConfigError` saying so.

    >>> check_price((3.0, 15.0))
    (3.0, 15.0)
    """
    from agentproc.errors import ConfigError

    if not all(math.isfinite(p) and 0 <= p <= MAX_PRICE for p in price):
        raise ConfigError(
            f"a price is USD per million tokens, from 0 to {MAX_PRICE:,.0f} "
            f"(not {price[0]:g},{price[1]:g})"
        )
    return price


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def tokens_text(tokens: Tokens | None, price: Price | None = None) -> str:
    """One phrase of the totals (and the cost at ``price``).

    >>> tokens_text(Tokens(12345, 678, 4), (3.0, 15.0))
    'tokens: 12,345 in, 678 out over 4 episodes; cost $0.0472 at $3/$15 per million in/out'
    >>> tokens_text(None, (3.0, 15.0))
    'no token counts'
    """
    if tokens is None:
        return NO_TOKENS
    text = (
        f"tokens: {tokens.input:,} in, {tokens.output:,} out over {tokens.episodes} "
        f"episode{'s' if tokens.episodes != 1 else ''}"
    )
    if price is not None:
        text += (
            f"; cost ${tokens.cost(price):.4f} at ${price[0]:g}/${price[1]:g} per million in/out"
        )
    return text


def tokens_json(tokens: Tokens | None, price: Price | None = None) -> dict[str, Any] | None:
    """The JSON form (``None``: no token counts); ``cost_usd`` with a price."""
    if tokens is None:
        return None
    out: dict[str, Any] = {
        "input": tokens.input,
        "output": tokens.output,
        "episodes": tokens.episodes,
    }
    if price is not None:
        out["cost_usd"] = round(tokens.cost(price), 6)
        out["price_per_million"] = {"input": price[0], "output": price[1]}
    return out
