"""One event loop per process for every run it makes.

``compare`` and ``stress`` run one suite per variant, and a worker process runs one span
after another. Each run on an ``asyncio.run`` of its own would give each a new event loop
and close it after, which an agent's own HTTP client does not survive: LangChain's
``ChatOpenAI`` shares one ``httpx.AsyncClient`` per base URL across every model in the
process, and its pooled connections belong to the loop that opened them, so the second
run fails with ``RuntimeError: Event loop is closed``. Every run of a process (of a
thread) goes through :func:`run_on_loop` instead: one :class:`asyncio.Runner`, kept open
until the process ends. A forked worker makes its own (the parent's loop is not its to
use), and drops the HTTP clients LangChain cached in the parent (:data:`LOOP_BOUND`), whose
connections belong to the parent's loop: a model the worker builds gets a client of its own.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import sys
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

_here = threading.local()

LOOP_BOUND = ("langchain_openai.chat_models._client_utils._cached_async_httpx_client",)
"""Caches of clients bound to the event loop that first used them, emptied in a forked
worker (looked up only where their module is loaded already)."""


def _forget_inherited() -> None:
    for name in LOOP_BOUND:
        module, _, attr = name.rpartition(".")
        cached = getattr(sys.modules.get(module), attr, None)
        with contextlib.suppress(AttributeError):
            cached.cache_clear()  # type: ignore[union-attr]


def _close(runner: asyncio.Runner) -> None:
    with contextlib.suppress(Exception):  # at exit: whatever is left is let go
        runner.run(_settle())
        runner.close()


async def _settle(timeout: float = 2.0) -> None:
    """Let what the loop was handed while idle finish: a model dropped between runs has its
    HTTP session closed by a task scheduled on the loop then (``Runner.close`` would
    cancel it before it ran, and the session would be reported unclosed)."""
    await asyncio.sleep(0)  # the callbacks queued while idle create their tasks
    pending = asyncio.all_tasks() - {asyncio.current_task()}
    if pending:
        await asyncio.wait(pending, timeout=timeout)


def run_on_loop(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to its end on this process's (this thread's) event loop, as
    :func:`asyncio.run` would, but on the same loop as every earlier call here."""
    runner: asyncio.Runner | None = getattr(_here, "runner", None)
    if runner is None or getattr(_here, "pid", None) != os.getpid():
        if getattr(_here, "pid", None) is not None:  # forked from a process that ran one
            _forget_inherited()
        # No ``set_event_loop``: code that makes loops of its own is left as it was.
        runner = asyncio.Runner(loop_factory=asyncio.new_event_loop)
        _here.runner, _here.pid = runner, os.getpid()
        atexit.register(_close, runner)
    return runner.run(coro)
