"""Model calls with a timeout and retries: exponential backoff with full jitter.

Retried: rate limits (429), server errors (5xx), request timeouts and lost
connections, as :func:`agentproc.agents.providers.is_retryable` says. Anything
else is the model's or the request's fault and is not retried.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from agentproc.agents.providers import is_retryable
from agentproc.runs import redact

T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    """How model calls are retried."""

    attempts: int = 5
    """Tries per model call, the first included."""
    base_delay: float = 0.5
    """Seconds before the first retry; doubled each time, with full jitter."""
    max_delay: float = 20.0
    timeout: float = 120.0
    """Seconds one model call may take before it counts as a timeout."""

    def delay(self, attempt: int, rng: random.Random) -> float:
        """Seconds to wait before retry number ``attempt`` (from 1)."""
        return rng.uniform(0, min(self.max_delay, self.base_delay * 2 ** (attempt - 1)))


@dataclass
class ModelCall:
    """One model turn: how long it took, what it cost, how often it was tried."""

    latency_s: float
    attempts: int
    input_tokens: int = 0
    output_tokens: int = 0
    error: str | None = None
    cache_hit: bool | None = None
    """Served by the response cache (``None``: no cache in use, and not recorded)."""

    def record(self) -> dict[str, Any]:
        """The run file's model-call record (``cache_hit`` only when a cache is in use)."""
        out = vars(self).copy()
        if self.cache_hit is None:
            del out["cache_hit"]
        return out


async def invoke_with_retry(
    ask: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    rng: random.Random,
    calls: list[ModelCall],
    errors: list[str],
) -> T:
    """``await ask()`` (one model turn) with timeout and retries; appends a :class:`ModelCall`.

    Raises the last error when every attempt failed or the error is not retryable.
    """
    last: BaseException | None = None
    start = time.perf_counter()
    attempt = 0
    for attempt in range(1, policy.attempts + 1):
        try:
            try:
                async with asyncio.timeout(policy.timeout):
                    reply = await ask()
            except TimeoutError as exc:
                if str(exc):  # the client's own timeout, which says what it was
                    raise
                raise TimeoutError(
                    f"the model call did not answer within {policy.timeout:g} s (--timeout)"
                ) from None
        except Exception as exc:
            last = exc
            if isinstance(exc, TimeoutError) or is_retryable(exc):
                errors.append(redact(f"attempt {attempt}: {type(exc).__name__}: {exc}"))
                if attempt < policy.attempts:
                    await asyncio.sleep(policy.delay(attempt, rng))
                continue
            break
        usage = getattr(reply, "usage_metadata", None) or {}
        calls.append(
            ModelCall(
                time.perf_counter() - start,
                attempt,
                usage.get("input_tokens", 0),
                usage.get("output_tokens", 0),
                cache_hit=getattr(reply, "cache_hit", None),
            )
        )
        return reply
    error = redact(f"{type(last).__name__}: {last}")
    calls.append(ModelCall(time.perf_counter() - start, attempt, error=error))
    raise last if last is not None else RuntimeError("no attempt was made")


def usage_summary(calls: list[ModelCall]) -> dict[str, Any]:
    """Token and time totals of an episode's model calls; replies served by the response
    cache count in ``cache_hits`` and not in ``model_seconds`` (a hit is no model's time)."""
    out: dict[str, Any] = {
        "input_tokens": sum(c.input_tokens for c in calls),
        "output_tokens": sum(c.output_tokens for c in calls),
        "model_seconds": round(sum(c.latency_s for c in calls if not c.cache_hit), 6),
        "model_calls": len(calls),
    }
    if any(c.cache_hit is not None for c in calls):
        out["cache_hits"] = sum(bool(c.cache_hit) for c in calls)
    return out
