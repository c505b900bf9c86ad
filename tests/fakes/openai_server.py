"""A small, real OpenAI-compatible HTTP server for tests and benchmarks.

The server itself is the package's (:class:`agentproc.agents.demo.ChatServer`, which
``agentproc serve-demo`` runs); this adds what only tests need: every request recorded
for assertions, and planned replies.

Two ways to answer a chat completion:

- **scripted**: planned replies, consumed in order, globally or per conversation
  (a conversation is keyed by its first user message). A reply is any form
  :mod:`agentproc.agents.demo.server` takes (a tool call, content, an error status, a
  delay, a raw message or body), and also ``"echo_headers": True`` beside an error
  status: its message quotes the request's headers (a careless server).

- **oracle**: a perfect agentproc agent, the demo endpoint's ``faithful`` profile. It
  reads the offered tools, the ``Inputs:`` line of the user message and the
  ``S<n> = <number>`` the tools returned, calls the next step not yet called with the
  known values, then the finish tool with the last step's value, then says ``Done.``.

>>> with ScriptedServer([{"content": "hi"}]) as srv:
...     srv.base_url.startswith("http://127.0.0.1:")
True

Run it standalone for benchmarks:
``python -m tests.fakes.openai_server --port 8011 --latency 0.1 --mode oracle``.
"""

from __future__ import annotations

import argparse
import json
import signal
import threading
from collections.abc import Sequence
from typing import Any, Literal

from agentproc.agents.demo import ChatServer, Reply, Request, planner
from agentproc.agents.demo.reading import conversation_key

Mode = Literal["scripted", "oracle"]

__all__ = ["Request", "ScriptedServer", "oracle_reply"]

oracle_reply = planner("faithful")
"""What a perfect agent does next, read from a chat-completion request."""


class ScriptedServer(ChatServer):
    """An OpenAI-compatible server in a background thread.

    Args:
        script: Planned replies (scripted mode). Omit it for oracle mode.
        mode: ``scripted`` or ``oracle``; by default oracle when there is no script.
        per_conversation: Replay the script from the start for each conversation.
        latency: Seconds to wait before every chat completion.
        model: The model name ``/v1/models`` lists.
        port: 0 for a free port chosen by the OS.
        keep_requests: Keep every request for :attr:`requests` (tests read them). The
            standalone server keeps none: no one reads them, and holding every body
            made its collections longer with each run (a 100 ms completion took 30 ms
            more by the fourth run of a benchmark at concurrency 64).
    """

    def __init__(
        self,
        script: Sequence[Reply] | None = None,
        *,
        mode: Mode | None = None,
        per_conversation: bool = False,
        latency: float = 0.0,
        model: str = "fake-model",
        host: str = "127.0.0.1",
        port: int = 0,
        keep_requests: bool = True,
    ) -> None:
        self.mode: Mode = mode or ("oracle" if script is None else "scripted")
        if self.mode not in ("scripted", "oracle"):
            raise ValueError(f"unknown mode {self.mode!r} (expected one of: scripted, oracle)")
        super().__init__(oracle_reply, latency=latency, model=model, host=host, port=port)
        self.script = list(script or [])
        self.per_conversation = per_conversation
        self.keep_requests = keep_requests
        self._requests: list[Request] = []
        self._cursors: dict[str, int] = {}
        self._script_lock = threading.Lock()

    @property
    def requests(self) -> list[Request]:
        """Every request received so far, in arrival order."""
        with self._script_lock:
            return list(self._requests)

    @property
    def completions(self) -> list[Request]:
        """The chat-completion requests received so far."""
        return [r for r in self.requests if r.path.endswith("/chat/completions")]

    def start(self) -> ScriptedServer:
        super().start()
        return self

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def record(self, request: Request) -> None:
        if not self.keep_requests:
            return
        with self._script_lock:
            self._requests.append(request)

    def planned(self, body: dict[str, Any]) -> Reply:
        """The reply to a chat completion: the next scripted one, or the oracle's."""
        if self.mode == "oracle":
            return oracle_reply(body)
        key = conversation_key(body) if self.per_conversation else ""
        with self._script_lock:
            i = self._cursors.get(key, 0)
            self._cursors[key] = i + 1
        if i >= len(self.script):
            return {"status": 400, "message": f"script exhausted: no reply {i + 1} planned"}
        return self.script[i]

    def error_message(self, reply: Reply, request: Request) -> str | None:
        message = super().error_message(reply, request)
        if reply.get("echo_headers"):  # a careless server quoting the request
            message = f"{message or 'denied'}; request headers: {request.headers}"
        return message


def main(argv: Sequence[str] | None = None) -> None:
    """Serve until interrupted; print the base URL once listening."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds per completion")
    parser.add_argument("--mode", choices=["scripted", "oracle"], default="oracle")
    parser.add_argument("--script", help="a JSON file with the list of planned replies")
    parser.add_argument("--per-conversation", action="store_true")
    args = parser.parse_args(argv)
    script = None
    if args.script:
        with open(args.script, encoding="utf-8") as f:
            script = json.load(f)
    srv = ScriptedServer(
        script if args.mode == "scripted" else None,
        mode=args.mode,
        per_conversation=args.per_conversation,
        latency=args.latency,
        host=args.host,
        port=args.port,
        keep_requests=False,
    )

    def _terminate(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, _terminate)
    print(f"serving {args.mode} on {srv.base_url}", flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        srv.stop()


if __name__ == "__main__":
    main()
