"""Model calls with a timeout and retries: exponential backoff with full jitter, or
the wait the server asked for.

Retried: rate limits (429), server errors (5xx), request timeouts and lost
connections, as :func:`agentproc.agents.providers.is_retryable` says. Anything
else is the model's or the request's fault and is not retried.

A failed answer's ``Retry-After`` header (seconds, or an HTTP date) is honoured: the
next try waits that long, cut to :attr:`RetryPolicy.max_retry_after` (60 s by default,
the longest the ``openai`` SDK honours), instead of the backoff. The header is read
from the response the error carries (``openai``'s errors and LangChain's, which keep
it); the ``openai`` client itself runs with ``max_retries=0``, so that every attempt is
counted here, and never reads it.
"""

from __future__ import annotations

import asyncio
import datetime
import email.utils
import math
import random
import re
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
    max_retry_after: float = 60.0
    """The longest wait a server's ``Retry-After`` is granted: a longer one (or a date
    further off) is waited for this long, then the call is tried again."""

    def delay(self, attempt: int, rng: random.Random, asked: float | None = None) -> float:
        """Seconds to wait before retry number ``attempt`` (from 1): what the server
        ``asked`` (its ``Retry-After``, capped at :attr:`max_retry_after`), else the
        backoff.

        >>> RetryPolicy().delay(1, random.Random(0), asked=7.0)
        7.0
        >>> RetryPolicy().delay(1, random.Random(0), asked=3600.0)
        60.0
        """
        if asked is not None:
            return min(asked, self.max_retry_after)
        return rng.uniform(0, min(self.max_delay, self.base_delay * 2 ** (attempt - 1)))


_SECONDS = re.compile(r"\d+(?:\.\d+)?")


def retry_after(exc: BaseException, now: Callable[[], float] = time.time) -> float | None:
    """The seconds a failed call's server asked to wait (``Retry-After``: a number of
    seconds, or an HTTP date, a past one being 0); ``None`` when the error carries no
    such header, or one that reads as neither.

    The error's own response is read, else its cause's (LangChain's errors wrap
    ``openai``'s).

    >>> import httpx2, openai
    >>> def limited(value):
    ...     request = httpx2.Request("POST", "http://127.0.0.1/v1/chat/completions")
    ...     response = httpx2.Response(429, headers={"Retry-After": value}, request=request)
    ...     return openai.RateLimitError("slow down", response=response, body=None)
    >>> retry_after(limited("7")), retry_after(limited("soon"))
    (7.0, None)
    >>> retry_after(limited("Thu, 01 Jan 1970 00:01:40 GMT"), now=lambda: 90.0)
    10.0
    """
    seen: BaseException | None = exc
    for _ in range(4):  # the error, its cause, and theirs
        if seen is None:
            return None
        headers = getattr(getattr(seen, "response", None), "headers", None)
        value = headers.get("retry-after") if headers is not None else None
        if isinstance(value, str):
            return _seconds(value.strip(), now)
        seen = seen.__cause__
    return None


def _seconds(value: str, now: Callable[[], float]) -> float | None:
    if _SECONDS.fullmatch(value):
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:  # "-0000": UTC, as an HTTP date always is
        when = when.replace(tzinfo=datetime.UTC)
    wait = when.timestamp() - now()
    return max(0.0, wait) if math.isfinite(wait) else None


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
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
) -> T:
    """``await ask()`` (one model turn) with timeout and retries; appends a :class:`ModelCall`.
    Between tries it awaits ``sleep(seconds)``: the server's ``Retry-After``
    (:func:`retry_after`, capped) or the backoff.

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
                    await sleep(policy.delay(attempt, rng, retry_after(exc)))
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
