"""How SIGINT and SIGTERM stop a server that writes a run file (``serve-mcp``): the first
stops serving, so that the open episodes are written (ended ``interrupted``), and any
signal after it is ignored, so that nothing cuts that shutdown short.

asyncio's own signal handling (``loop.add_signal_handler``, which anyio's
``open_signal_receiver`` uses) was measured and fell short: removing a handler, as the
receiver does when it closes and the loop does when it closes, puts Python's defaults
back (SIGINT raises ``KeyboardInterrupt``, SIGTERM ends the process), so a second Ctrl-C
50 ms after the first killed the server by the signal while it was writing its run
file. Here the handlers are Python's own (:func:`signal.signal`), held from before the
run file is opened until the command returns; a stop asked of the serving loop goes
through ``call_soon_threadsafe``, the one loop call a signal handler may make.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

SIGNALS = (signal.SIGINT, signal.SIGTERM)
"""The signals that stop the server."""


class Shutdown:
    """SIGINT and SIGTERM while a server runs; a context manager around the whole command.

    Args:
        stopped: Called (in the main thread, between two Python instructions) when the
            first signal comes: a plain assignment, such as marking the sessions
            interrupted.

    On leaving, the handlers that were there before are put back, unless a signal came:
    the process is then on its way out, and a repeated signal stays ignored until it has
    gone (its exit status stays 0).
    """

    def __init__(self, stopped: Callable[[], None] = lambda: None) -> None:
        self.signal: int | None = None
        """The signal that stopped the server (``None``: none came)."""
        self._stopped = stopped
        self._serving: tuple[asyncio.AbstractEventLoop, Callable[[], None]] | None = None
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> Shutdown:
        for signum in SIGNALS:
            self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for signum, previous in self._previous.items():
            signal.signal(signum, signal.SIG_IGN if self.signal is not None else previous)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.signal is not None:  # already shutting down: a repeated signal is ignored
            return
        self.signal = signum
        self._stopped()
        if self._serving is not None:
            loop, stop = self._serving
            loop.call_soon_threadsafe(stop)

    @contextlib.contextmanager
    def serving(self, stop: Callable[[], None]) -> Iterator[None]:
        """While the server runs on this thread's event loop, the first signal calls
        ``stop`` there (at once, if a signal came before serving began)."""
        self._serving = (asyncio.get_running_loop(), stop)
        try:
            if self.signal is not None:  # checked after the assignment: no signal is lost
                stop()
            yield
        finally:
            self._serving = None
