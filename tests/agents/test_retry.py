"""Retries honour the server's ``Retry-After`` (seconds or an HTTP date, capped), else back
off; every wait is read from an injected sleep, never timed.

The server is the tests' OpenAI-compatible one on 127.0.0.1, answering 429 with the
header as planned.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

import httpx2
import pytest

from agentproc.agents.providers import make_chat_model
from agentproc.agents.retry import ModelCall, RetryPolicy, invoke_with_retry, retry_after
from tests.fakes.openai_server import ScriptedServer

FUTURE = "Wed, 21 Oct 2099 07:28:00 GMT"
PAST = "Wed, 21 Oct 2015 07:28:00 GMT"


def waits_before_an_answer(
    refusal: dict[str, Any], policy: RetryPolicy | None = None, **model: Any
) -> tuple[list[float], list[ModelCall]]:
    """The waits between tries when the server refuses once with ``refusal`` and then
    answers, and the model call recorded."""
    waits: list[float] = []
    calls: list[ModelCall] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    with ScriptedServer([refusal, {"content": "hi"}]) as srv:
        chat = make_chat_model("openai:fake", base_url=srv.base_url, **model)
        reply = asyncio.run(
            invoke_with_retry(
                lambda: chat.ainvoke("hello"),
                policy or RetryPolicy(attempts=3),
                random.Random(0),
                calls,
                [],
                sleep=sleep,
            )
        )
    assert reply.content == "hi"
    return waits, calls


@pytest.mark.parametrize(
    ("header", "waited"),
    [("7", 7.0), ("1.5", 1.5), ("0", 0.0), (FUTURE, 60.0), (PAST, 0.0), ("3600", 60.0)],
    ids=["seconds", "fraction", "zero", "far-date-capped", "past-date", "long-capped"],
)
def test_a_429_waits_as_its_retry_after_says_capped(header, waited):
    waits, calls = waits_before_an_answer({"status": 429, "retry_after": header})
    assert waits == [waited]
    assert calls[0].attempts == 2


def test_the_cap_is_the_policys():
    waits, _ = waits_before_an_answer(
        {"status": 429, "retry_after": "7"}, RetryPolicy(attempts=2, max_retry_after=5.0)
    )
    assert waits == [5.0]


def test_a_503_with_retry_after_waits_as_it_says():
    waits, _ = waits_before_an_answer({"status": 503, "retry_after": "4"})
    assert waits == [4.0]


@pytest.mark.parametrize("header", [None, "soon", "-3"], ids=["none", "words", "negative"])
def test_without_a_readable_retry_after_the_wait_is_the_backoff(header):
    refusal: dict[str, Any] = {"status": 503}
    if header is not None:
        refusal["retry_after"] = header
    waits, _ = waits_before_an_answer(refusal)
    assert waits == [RetryPolicy(attempts=3).delay(1, random.Random(0))]


def test_a_users_own_http_client_keeps_the_header_too():
    waits, _ = waits_before_an_answer(
        {"status": 429, "retry_after": "7"}, http_async_client=httpx2.AsyncClient()
    )
    assert waits == [7.0]


def test_an_http_date_is_read_against_the_clock():
    request = httpx2.Request("POST", "http://127.0.0.1/v1/chat/completions")
    response = httpx2.Response(429, headers={"Retry-After": PAST}, request=request)
    import openai

    error = openai.RateLimitError("slow down", response=response, body=None)
    when = 1445412480.0  # 21 Oct 2015 07:28:00 GMT
    assert retry_after(error, now=lambda: when - 12.5) == 12.5
    assert retry_after(error, now=lambda: when + 1) == 0.0
    assert retry_after(ValueError("no response")) is None
