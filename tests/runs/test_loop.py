"""Every run of a process goes through one event loop, kept open between runs."""

from __future__ import annotations

import asyncio
import multiprocessing

from agentproc.runs.loop import run_on_loop


async def _loop_id() -> int:
    return id(asyncio.get_running_loop())


def test_two_runs_share_one_loop_that_stays_open():
    first = run_on_loop(_loop_id())
    assert run_on_loop(_loop_id()) == first


def test_a_client_bound_to_the_loop_of_one_run_serves_the_next():
    event: list[asyncio.Event] = []

    async def use() -> None:
        if not event:
            event.append(asyncio.Event())
        event[0].set()
        await event[0].wait()  # raises when bound to another loop

    run_on_loop(use())
    run_on_loop(use())


def _in_child(conn) -> None:
    conn.send(run_on_loop(_loop_id()))


def test_a_forked_worker_runs_on_a_loop_of_its_own():
    parent = run_on_loop(_loop_id())
    here, there = multiprocessing.get_context("fork").Pipe()
    proc = multiprocessing.get_context("fork").Process(target=_in_child, args=(there,))
    proc.start()
    child = here.recv()
    proc.join()
    assert proc.exitcode == 0
    assert isinstance(child, int)
    assert run_on_loop(_loop_id()) == parent
