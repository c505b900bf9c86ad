"""A small, real OpenAI-compatible HTTP server for tests and benchmarks.

Serves ``POST /v1/chat/completions`` and ``GET /v1/models`` on 127.0.0.1 from a
``ThreadingHTTPServer`` (one daemon thread per connection, so slow replies do
not hold up others). Every request is recorded for assertions.

Two ways to answer a chat completion:

- **scripted**: planned replies, consumed in order, globally or per conversation
  (a conversation is keyed by its first user message). A reply is a dict:

  - ``{"tool_call": {"name": ..., "arguments": "<raw text or a dict>"}}``
    (or ``{"tool_calls": [...]}`` for several at once),
  - ``{"content": "text"}``,
  - ``{"status": 429}`` / ``{"status": 500}``: an OpenAI-style error body
    (with ``"echo_headers": True`` its message quotes the request's headers),
  - ``"delay": seconds`` alongside any of those, or alone (then the reply is
    empty content): wait before answering, to trigger client timeouts,
  - ``{"message": {...}}``: the assistant message exactly as given (malformed tool
    calls: arguments as an object, a name that is a number, duplicate ids ...),
  - ``{"body": "<html>...", "content_type": "text/html"}``: a raw body with
    status 200 (or ``"status"``), e.g. a proxy's page or a truncated completion.

- **oracle**: a perfect agentproc agent. It reads the offered tools, the
  ``Inputs:`` line of the user message and the ``S<n> = <number>`` the tools
  returned, calls the next step not yet called with the known values, then the
  finish tool with the last step's value, then says ``Done.``.

>>> with ScriptedServer([{"content": "hi"}]) as srv:
...     srv.base_url.startswith("http://127.0.0.1:")
True

Run it standalone for benchmarks:
``python -m tests.fakes.openai_server --port 8011 --latency 0.1 --mode oracle``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import signal
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

Mode = Literal["scripted", "oracle"]
Reply = dict[str, Any]

_ERRORS = {
    400: ("invalid_request_error", None),
    404: ("invalid_request_error", "not_found"),
    429: ("rate_limit_exceeded", "rate_limit_exceeded"),
    500: ("server_error", None),
    503: ("server_error", None),
}
_STEP_TOOL = re.compile(r"^step_(\d+)$")
_ASSIGN = re.compile(r"\b(S\d+)\s*=\s*(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)")
_INPUTS = re.compile(r"^Inputs:(.*)$", re.MULTILINE)


@dataclass(frozen=True)
class Request:
    """One HTTP request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    """Header names lower-cased."""
    body: Any
    """The parsed JSON body, or ``None``."""
    raw: bytes


class ScriptedServer:
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
        self.script = list(script or [])
        self.per_conversation = per_conversation
        self.latency = latency
        self.model = model
        self._lock = threading.Lock()
        self._requests: list[Request] = []
        self.keep_requests = keep_requests
        self._cursors: dict[str, int] = {}
        self._ids = itertools.count(1)
        self._stopping = threading.Event()
        self.host = host
        self._httpd = _QuietServer((host, port), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        """The port the server listens on."""
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``: what an OpenAI client takes as ``base_url``."""
        return f"http://{self.host}:{self.port}/v1"

    @property
    def requests(self) -> list[Request]:
        """Every request received so far, in arrival order."""
        with self._lock:
            return list(self._requests)

    @property
    def completions(self) -> list[Request]:
        """The chat-completion requests received so far."""
        return [r for r in self.requests if r.path.endswith("/chat/completions")]

    def start(self) -> ScriptedServer:
        """Serve in a daemon thread."""
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; pending delays end at once, without a reply."""
        self._stopping.set()
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join()
            self._thread = None
        self._httpd.server_close()

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def serve_forever(self) -> None:
        """Serve in the calling thread until :meth:`stop` is called from elsewhere."""
        self._httpd.serve_forever(poll_interval=0.05)  # how long stop() waits, at most

    # -- what the handler calls ------------------------------------------------

    def record(self, request: Request) -> None:
        if not self.keep_requests:
            return
        with self._lock:
            self._requests.append(request)

    def wait(self, seconds: float) -> bool:
        """Sleep without blocking other requests; False when the server is stopping."""
        return not self._stopping.wait(seconds) if seconds > 0 else True

    def next_id(self) -> int:
        with self._lock:
            return next(self._ids)

    def planned(self, body: dict[str, Any]) -> Reply:
        """The reply to a chat completion: the next scripted one, or the oracle's."""
        if self.mode == "oracle":
            return oracle_reply(body)
        key = _conversation_key(body) if self.per_conversation else ""
        with self._lock:
            i = self._cursors.get(key, 0)
            self._cursors[key] = i + 1
        if i >= len(self.script):
            return {"status": 400, "message": f"script exhausted: no reply {i + 1} planned"}
        return self.script[i]


def _conversation_key(body: dict[str, Any]) -> str:
    users = [m for m in body.get("messages", []) if m.get("role") == "user"]
    return _text(users[0].get("content")) if users else ""


def _text(content: Any) -> str:
    """The text of a message's content: a string or a list of content parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def _number(text: str) -> float | int:
    return float(text) if any(c in text for c in ".eE") else int(text)


def oracle_reply(body: dict[str, Any]) -> Reply:
    """What a perfect agent does next, read from a chat-completion request."""
    params: dict[str, list[str]] = {}
    for tool in body.get("tools") or []:
        fn = tool.get("function", {})
        params[fn.get("name", "")] = list(fn.get("parameters", {}).get("properties", {}))
    steps = sorted((int(m[1]), name) for name in params if (m := _STEP_TOOL.match(name)))
    finish = next((name for name in params if not _STEP_TOOL.match(name)), None)

    known: dict[str, float | int] = {}
    called: dict[str, str] = {}  # tool_call_id -> tool name
    last_output: float | int | None = None
    for msg in body.get("messages", []):
        role, text = msg.get("role"), _text(msg.get("content"))
        if role == "user" and (line := _INPUTS.search(text)):
            known.update((var, _number(v)) for var, v in _ASSIGN.findall(line[1]))
        for call in msg.get("tool_calls") or []:
            called[call.get("id", "")] = call["function"]["name"]
        if role == "tool" and (m := _ASSIGN.search(text)):
            known[m[1]] = _number(m[2])
            if steps and called.get(msg.get("tool_call_id", "")) == steps[-1][1]:
                last_output = known[m[1]]

    done = set(called.values())
    for _, name in steps:
        if name not in done:
            missing = [p for p in params[name] if p not in known]
            if missing:
                return {"content": f"I do not know the value of {', '.join(missing)}."}
            return {"tool_call": {"name": name, "arguments": {p: known[p] for p in params[name]}}}
    if finish is not None and finish not in done and last_output is not None:
        argument = params[finish][0] if params[finish] else "answer"
        return {"tool_call": {"name": finish, "arguments": {argument: last_output}}}
    return {"content": "Done."}


def completion(server: ScriptedServer, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
    """A ``chat.completion`` object carrying a planned reply."""
    n = server.next_id()
    calls = reply.get("tool_calls") or ([reply["tool_call"]] if "tool_call" in reply else [])
    message: dict[str, Any] = {"role": "assistant", "content": reply.get("content")}
    if "message" in reply:
        message = reply["message"]
        calls = message.get("tool_calls") or []
    elif calls:
        message["tool_calls"] = [
            {
                "id": f"call_{n}_{i}",
                "type": "function",
                "function": {
                    "name": c["name"],
                    "arguments": c["arguments"]
                    if isinstance(c.get("arguments"), str)
                    else json.dumps(c.get("arguments", {})),
                },
            }
            for i, c in enumerate(calls)
        ]
    elif message["content"] is None:
        message["content"] = ""
    prompt_tokens = len(json.dumps(body.get("messages", []))) // 4 + 1
    completion_tokens = len(json.dumps(message)) // 4 + 1
    return {
        "id": f"chatcmpl-fake-{n}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", server.model),
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": "tool_calls" if calls else "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def error_body(status: int, message: str | None = None) -> dict[str, Any]:
    """An error body shaped like OpenAI's."""
    kind, code = _ERRORS.get(
        status, ("server_error" if status >= 500 else "invalid_request_error", None)
    )
    text = message or f"fake server error {status}"
    return {"error": {"message": text, "type": kind, "param": None, "code": code}}


class _QuietServer(ThreadingHTTPServer):
    """Does not print a traceback when a client hangs up mid-request (a killed run does)."""

    request_queue_size = 256  # many clients connect at once in the concurrency benchmark

    def handle_error(self, request: Any, client_address: Any) -> None:
        import sys

        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def _handler_for(server: ScriptedServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as the OpenAI client expects
        disable_nagle_algorithm = True  # headers and body go out in two writes
        timeout = 30  # idle keep-alive connections give their thread back

        def log_message(self, format: str, *args: Any) -> None:
            pass  # tests read srv.requests, not stderr

        def _receive(self) -> Request:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = None
            req = Request(
                method=self.command,
                path=self.path,
                headers={k.lower(): v for k, v in self.headers.items()},
                body=body,
                raw=raw,
            )
            server.record(req)
            return req

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            try:
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                if status == 429:
                    self.send_header("retry-after", "0")
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True  # the client gave up (e.g. its timeout)

        def _send_raw(self, status: int, body: str, content_type: str) -> None:
            data = body.encode()
            try:
                self.send_response(status)
                self.send_header("content-type", content_type)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True

        def do_GET(self) -> None:
            req = self._receive()
            if req.path.rstrip("/").endswith("/models"):
                entry = {"id": server.model, "object": "model", "created": 0, "owned_by": "tests"}
                self._send(200, {"object": "list", "data": [entry]})
            else:
                self._send(404, error_body(404, f"no route GET {req.path}"))

        def do_POST(self) -> None:
            req = self._receive()
            if not req.path.rstrip("/").endswith("/chat/completions"):
                self._send(404, error_body(404, f"no route POST {req.path}"))
                return
            if not isinstance(req.body, dict) or not isinstance(req.body.get("messages"), list):
                self._send(400, error_body(400, "the body must be a JSON object with messages"))
                return
            if req.body.get("stream"):
                self._send(400, error_body(400, "streaming is not supported by the fake server"))
                return
            reply = server.planned(req.body)
            if not server.wait(server.latency + float(reply.get("delay", 0))):
                self.close_connection = True
                return
            status = int(reply.get("status", 200))
            if "body" in reply:
                self._send_raw(status, reply["body"], reply.get("content_type", "text/html"))
            elif status != 200:
                message = reply.get("message")
                if reply.get("echo_headers"):  # a careless server quoting the request
                    message = f"{message or 'denied'}; request headers: {req.headers}"
                self._send(status, error_body(status, message))
            else:
                self._send(200, completion(server, req.body, reply))

    return Handler


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
