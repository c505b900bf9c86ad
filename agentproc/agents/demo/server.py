"""A small OpenAI-compatible chat-completions server on the standard library.

Serves ``POST /v1/chat/completions`` and ``GET /v1/models`` from a
``ThreadingHTTPServer`` (one daemon thread per connection, so a slow reply holds up no
other). What it answers comes from a *planner*, a function from the request body to a
:data:`~agentproc.agents.demo.reading.Reply`; ``agentproc serve-demo`` plans with a
scripted profile (:mod:`agentproc.agents.demo.profiles`), the tests with scripts.

The standard library is enough here: aiohttp.web would serve the same two routes, but
its handlers are coroutines, and a planner that blocks (a test's planned delay) would
hold up the event loop; a thread per connection keeps each reply apart.

A reply is a dict:

- ``{"tool_call": {"name": ..., "arguments": "<raw text or a dict>"}}`` (or
  ``{"tool_calls": [...]}`` for several at once), or ``{"content": "text"}``;
- ``{"message": {...}}``: the assistant message exactly as given;
- ``{"status": 429}`` (any status but 200): an OpenAI-style error body, with
  ``"message"`` as its text and ``"retry_after"`` as its ``Retry-After`` header (seconds
  or an HTTP date; a 429 says ``0`` when not told);
- ``{"body": "...", "content_type": "text/html"}``: a raw body (a proxy's page);
- ``"delay": seconds`` beside any of those: wait before answering.

>>> with ChatServer(lambda body: {"content": "hi"}) as srv:
...     srv.base_url.startswith("http://127.0.0.1:")
True
"""

from __future__ import annotations

import hashlib
import json
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from agentproc.agents.demo.checks import BadRequest, check_chat, content_length, parse_body
from agentproc.agents.demo.reading import Reply

Planner = Callable[[dict[str, Any]], Reply]
"""A chat-completion request body -> the reply to send."""

_ERRORS = {
    404: ("invalid_request_error", "not_found"),
    429: ("rate_limit_exceeded", "rate_limit_exceeded"),
}
"""The error type and code of each status whose error is not the default (:func:`error_body`)."""


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


@dataclass(frozen=True)
class Response:
    """What the handler sends back."""

    status: int
    body: bytes
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)


def json_response(status: int, payload: dict[str, Any]) -> Response:
    """A JSON response (a 429 says to retry at once)."""
    headers = {"retry-after": "0"} if status == 429 else {}
    return Response(status, json.dumps(payload).encode(), headers=headers)


class ChatServer:
    """An OpenAI-compatible server, in the calling thread or a background one.

    Args:
        planner: What to answer each chat completion.
        latency: Seconds to wait before every chat completion.
        model: The model name ``/v1/models`` lists.
        host: The address to bind (127.0.0.1: this machine only).
        port: 0 for a free port chosen by the OS.
    """

    def __init__(
        self,
        planner: Planner,
        *,
        latency: float = 0.0,
        model: str = "demo",
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.planner = planner
        self.latency = latency
        self.model = model
        self.host = host
        self._stopping = threading.Event()
        self._httpd = _QuietServer((host, port), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        """The port the server listens on."""
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """``http://HOST:PORT/v1``: what an OpenAI client takes as ``base_url``."""
        return f"http://{self.host}:{self.port}/v1"

    def start(self) -> ChatServer:
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

    def __enter__(self) -> ChatServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def serve_forever(self) -> None:
        """Serve in the calling thread until :meth:`stop` is called from elsewhere."""
        self._httpd.serve_forever(poll_interval=0.05)  # how long stop() waits, at most

    # -- hooks a subclass may override --------------------------------------------

    def record(self, request: Request) -> None:
        """Called with every request as it arrives (the tests keep them)."""

    def planned(self, body: dict[str, Any]) -> Reply:
        """The reply to a chat completion."""
        return self.planner(body)

    def error_message(self, reply: Reply, request: Request) -> str | None:
        """The text of a planned error reply."""
        message = reply.get("message")
        return message if isinstance(message, str) else None

    # -- what the handler calls -----------------------------------------------------

    def wait(self, seconds: float) -> bool:
        """Sleep without blocking other requests; False when the server is stopping."""
        return not self._stopping.wait(seconds) if seconds > 0 else True

    def respond(self, req: Request) -> Response | None:
        """The response to a request (None: close the connection without one); a request
        it cannot read gets a 400 naming the field, a fault of its own a 500."""
        try:
            return self._respond(req)
        except BadRequest as exc:
            return json_response(exc.status, error_body(exc.status, exc.message))
        except Exception as exc:  # a planner's fault: an answer, never a dead thread
            return json_response(500, error_body(500, f"{type(exc).__name__}: {exc}"[:200]))

    def _respond(self, req: Request) -> Response | None:
        route = req.path.split("?")[0].rstrip("/")
        if req.method == "GET":
            if route.endswith("/models"):
                entry = {"id": self.model, "object": "model", "created": 0, "owned_by": "agentproc"}
                return json_response(200, {"object": "list", "data": [entry]})
            return json_response(404, error_body(404, f"no route GET {req.path}"))
        if not route.endswith("/chat/completions"):
            return json_response(404, error_body(404, f"no route POST {req.path}"))
        check_chat(req.body)
        if req.body.get("stream"):
            return json_response(400, error_body(400, "streaming is not supported by this server"))
        reply = self.planned(req.body)
        if not self.wait(self.latency + float(reply.get("delay", 0))):
            return None
        status = int(reply.get("status", 200))
        if "body" in reply:
            content_type = reply.get("content_type", "text/html")
            return Response(status, str(reply["body"]).encode(), content_type)
        if status != 200:
            refused = json_response(status, error_body(status, self.error_message(reply, req)))
            if "retry_after" in reply:
                refused.headers["retry-after"] = str(reply["retry_after"])
            return refused
        return json_response(200, completion(reply_id(req.body), self.model, req.body, reply))


def reply_id(body: dict[str, Any]) -> str:
    """The id of the reply to a chat completion: its conversation (a digest of its first two
    messages) and how many replies the conversation holds so far. A function of the
    request, so two identical runs send identical conversations (and count identical
    tokens), whatever other conversations the server answered in between."""
    messages = body.get("messages") or []
    head = json.dumps(messages[:2], sort_keys=True, default=str).encode()
    turn = sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "assistant")
    return f"{hashlib.blake2b(head, digest_size=4).hexdigest()}_{turn}"


def completion(n: int | str, model: str, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
    """A ``chat.completion`` object carrying a planned reply (``n`` makes its ids:
    :func:`reply_id`)."""
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
    # A rough count (4 characters a token), so that usage figures are not all zero.
    prompt_tokens = len(json.dumps(body.get("messages", []))) // 4 + 1
    completion_tokens = len(json.dumps(message)) // 4 + 1
    return {
        "id": f"chatcmpl-{n}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", model),
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
    text = message or f"server error {status}"
    return {"error": {"message": text, "type": kind, "param": None, "code": code}}


class _QuietServer(ThreadingHTTPServer):
    """Does not print a traceback when a client hangs up mid-request (a killed run does)."""

    request_queue_size = 256  # many clients connect at once at high concurrency

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def _handler_for(server: ChatServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as the OpenAI client expects
        disable_nagle_algorithm = True  # headers and body go out in two writes
        timeout = 30  # idle keep-alive connections give their thread back

        def log_message(self, format: str, *args: Any) -> None:
            pass  # one line per request would drown the URL the command printed

        def _receive(self) -> Request | Response:
            headers = {k.lower(): v for k, v in self.headers.items()}
            try:
                length = content_length(headers)
            except BadRequest as exc:  # the body is left unread: the connection ends
                self.close_connection = True
                return json_response(exc.status, error_body(exc.status, exc.message))
            raw = self.rfile.read(length) if length else b""
            try:
                body = parse_body(raw)
            except BadRequest as exc:
                bad: Response | None = json_response(
                    exc.status, error_body(exc.status, exc.message)
                )
                body = None
            else:
                bad = None
            req = Request(self.command, self.path, headers, body, raw)
            server.record(req)
            return bad or req

        def _answer(self) -> None:
            received = self._receive()
            response = received if isinstance(received, Response) else server.respond(received)
            self._send(response)

        def send_error(
            self, code: int, message: str | None = None, explain: str | None = None
        ) -> None:
            """The standard library's own refusals (a bad request line or header), in
            OpenAI's error shape rather than an HTML page."""
            self.close_connection = True
            self.request_version = self.protocol_version  # a status line even for a bad one
            text = message or self.responses.get(code, ("error",))[0]
            self._send(json_response(code, error_body(code, text)))

        def _send(self, response: Response | None) -> None:
            if response is None:
                self.close_connection = True
                return
            try:
                self.send_response(response.status)
                self.send_header("content-type", response.content_type)
                self.send_header("content-length", str(len(response.body)))
                for name, value in response.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(response.body)
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True  # the client gave up (e.g. its timeout)

        do_GET = _answer
        do_POST = _answer

    return Handler
