"""The cyclic garbage collector while a run is read or run.

**Reading a run**, paused:

Commands that read every episode of a run (``relabel``, ``replay``, ``report``) keep
what they build per scenario (the compiled scenario, its workflow) or per episode (the
records an HTML report drills into): thousands of tracked objects each, which every
collection scanned again, for no garbage (the records, calls and labels are freed by
reference counting as soon as they are done with). Paused, relabelling a run of 2,000
distinct scenarios took half the time, replaying it 28% less and its HTML report a
third less. The few cycles there are still go: :func:`now_and_then` collects every
:data:`COLLECT_EVERY` records.

**Running a suite**, with what exists at its start frozen (:func:`frozen`): the
modules, the model client and the compiled graph are a few hundred thousand
objects that every full collection scanned again, in one pause of the event loop
(150 ms at concurrency 64, while every episode's reply waited). Frozen, collections
scan only what the run made since.

>>> with paused():
...     pass  # read the run; call now_and_then(n) at each record n
>>> with frozen():
...     pass  # run the episodes
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

COLLECT_EVERY = 10_000
"""Records between two collections of cyclic garbage while the collector is paused."""


@contextmanager
def paused() -> Iterator[None]:
    """The cyclic garbage collector off inside, as it was after (also after a failure).

    Free what the block kept before it ends (return from a function called inside it):
    else the first collection after it scans all of that."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def now_and_then(n: int) -> None:
    """Collect the cycles, at every :data:`COLLECT_EVERY` th record ``n``, while paused."""
    if n % COLLECT_EVERY == 0 and not gc.isenabled():
        gc.collect()


@contextmanager
def frozen() -> Iterator[None]:
    """What the collector tracks now left out of its collections inside (``gc.freeze``);
    back in after, unless something outside had frozen objects already."""
    first = gc.get_freeze_count() == 0
    gc.freeze()
    try:
        yield
    finally:
        if first:
            gc.unfreeze()
