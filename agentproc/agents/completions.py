"""The lean path of ``openai:`` models: chat completions posted as prepared JSON.

A run keeps thousands of conversations going at once, and the client's own CPU
per turn decides how many. :class:`Completions` posts a ready body with the
lean HTTP client (:mod:`agentproc.agents.http11`) and reads the answer with
``orjson``; :class:`CompletionsChat` keeps a conversation as the plain JSON
messages the server reads, with the request's fixed part (model, tools,
sampling options) serialised once per episode.

Failures are raised as the ``openai`` package's own errors, made the way its
client makes them (``BadRequestError``, ``RateLimitError``, ``APITimeoutError``,
``APIConnectionError``...), and passed through LangChain's error mapping, so
that retries, error kinds and messages are those of the full client.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import importlib.metadata
import json
import urllib.parse
from functools import cache
from typing import Any, NoReturn

import orjson

from agentproc.agents.conversation import Request, Turn
from agentproc.agents.failures import MalformedResponse
from agentproc.agents.http11 import Origin, origin_of, post, proxied

CHAT_PATH = "/chat/completions"


class Completions:
    """The ``/chat/completions`` endpoint of one ``openai:`` model."""

    def __init__(self, model: Any, base_url: str) -> None:
        self.url = base_url.rstrip("/") + CHAT_PATH
        self.origin: Origin
        self.origin, prefix = origin_of(self.url)
        self.path = prefix  # origin_of keeps the path, CHAT_PATH included
        self.timeout = _seconds(model.request_timeout)
        self._sdk = model.root_async_client
        self._head = _header_block(model, base_url)

    @classmethod
    def of(cls, model: Any) -> Completions | None:
        """The lean endpoint of a ``ChatOpenAI`` model, or None where only the full
        client will do: a proxy in the environment, an HTTP client or query
        parameters of the user's own, or a provider URL that is not http(s)."""
        base_url = model.openai_api_base or "https://api.openai.com/v1"
        if model.http_async_client is not None or model.default_query or proxied(base_url):
            return None
        try:
            return cls(model, base_url)
        except ValueError:
            return None

    async def create(self, body: bytes) -> dict[str, Any]:
        """POST a request body; the chat completion as a dict.

        Raises:
            openai.APIStatusError: (a subclass for each status) the server said no.
            openai.APITimeoutError, openai.APIConnectionError: no answer.
            MalformedResponse: an answer that is not a chat completion.
        """
        openai = _openai()
        try:
            async with asyncio.timeout(self.timeout):
                response = await post(self.origin, self.path, self._head, body)
        except TimeoutError as exc:
            _raise(openai.APITimeoutError(request=self._request()), exc)
        except OSError as exc:  # refused, reset, hung up, not HTTP, no such host
            message = f"Connection error: {exc or type(exc).__name__}"
            _raise(openai.APIConnectionError(message=message, request=self._request()), exc)
        if response.status >= 400:
            _raise(self._status_error(response.status, response.headers, response.body), None)
        try:
            data = orjson.loads(response.body)
        except orjson.JSONDecodeError:
            snippet = response.body[:200].decode("utf-8", "replace")
            raise MalformedResponse(
                f"the endpoint answered with no chat completion: {snippet!r}"
            ) from None
        if not isinstance(data, dict) or not isinstance(data.get("choices"), list):
            raise MalformedResponse("the endpoint's answer has no choices")
        return data

    def _request(self) -> Any:
        return self._httpx().Request("POST", self.url)

    def _httpx(self) -> Any:
        """The HTTP library the ``openai`` client is built on (``httpx2``, or ``httpx``
        before openai 3), whose requests and responses its errors carry."""
        from openai import _base_client

        return getattr(_base_client, "httpx2", None) or getattr(_base_client, "httpx")  # noqa: B009

    def _status_error(self, status: int, headers: dict[str, str], body: bytes) -> Exception:
        response = self._httpx().Response(
            status, headers=headers, content=body, request=self._request()
        )
        error: Exception = self._sdk._make_status_error_from_response(response)
        return error


def _openai() -> Any:
    import openai  # loaded with langchain-openai, which made the model

    return openai


def _raise(error: Exception, cause: BaseException | None) -> NoReturn:
    """Raise ``error`` as LangChain's OpenAI client would: mapped by its handlers
    (a context overflow becomes ``ContextOverflowError``, and so on) where it has any."""
    openai = _openai()
    base: Any = None
    with contextlib.suppress(ImportError):  # langchain-openai is what makes the model
        from langchain_openai.chat_models import base
    if isinstance(error, openai.BadRequestError):
        handle = getattr(base, "_handle_openai_bad_request", None)
    else:
        handle = getattr(base, "_handle_openai_api_error", None)
    try:
        raise error from cause
    except openai.APIError as exc:
        if handle is not None:
            handle(exc)  # raises LangChain's mapped error where it has one
        raise


def _seconds(timeout: Any) -> float | None:
    """A client timeout (seconds, an ``httpx.Timeout``, a pair) as seconds, or None."""
    if timeout is None or isinstance(timeout, int | float):
        return timeout
    if isinstance(timeout, tuple):
        return max(t for t in timeout if t is not None) if any(timeout) else None
    parts = [getattr(timeout, k, None) for k in ("connect", "read", "write", "pool")]
    known = [p for p in parts if p is not None]
    return max(known) if known else None


def _header_block(model: Any, base_url: str) -> bytes:
    """The request's header lines: what the ``openai`` client sends that a server reads."""
    key = model.openai_api_key.get_secret_value() if model.openai_api_key else ""
    headers = {
        "Accept": "application/json",
        "Content-Type": "application/json",
        "User-Agent": f"agentproc/{_version()}",
        "Authorization": f"Bearer {key}",
    }
    parts = urllib.parse.urlsplit(base_url)
    if parts.username or parts.password:  # credentials in the URL are sent as Basic auth
        user = urllib.parse.unquote(parts.username or "")
        password = urllib.parse.unquote(parts.password or "")
        headers["Authorization"] = (
            "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
        )
    if model.openai_organization:
        headers["OpenAI-Organization"] = model.openai_organization
    headers.update(model.default_headers or {})
    lines = "".join(f"{k}: {v}\r\n" for k, v in headers.items() if v is not None)
    return lines.encode("utf-8")


def body_of(payload: dict[str, Any]) -> bytes:
    """A LangChain request payload as the JSON body the server gets (``extra_body``
    merged in, as the ``openai`` client does)."""
    fields = {k: v for k, v in payload.items() if k != "extra_body"}
    fields.update(payload.get("extra_body") or {})
    return orjson.dumps(fields, default=_plain)


def _plain(value: Any) -> Any:
    """What orjson cannot serialise itself: a pydantic model in a payload."""
    if hasattr(value, "model_dump"):
        return value.model_dump()
    raise TypeError(f"cannot send a {type(value).__name__} as JSON")


class CompletionsChat:
    """A conversation kept as the JSON messages a chat-completions server reads.

    The request's fixed part (model, tools, sampling options: exactly what the
    LangChain client would send) is serialised once; each turn appends the
    history to it.
    """

    def __init__(
        self, endpoint: Completions, fixed: dict[str, Any], opening: list[dict[str, Any]]
    ) -> None:
        self.endpoint = endpoint
        fields = {k: v for k, v in fixed.items() if k not in ("extra_body", "messages")}
        fields.update({k: v for k, v in (fixed.get("extra_body") or {}).items() if k != "messages"})
        head = orjson.dumps(fields, default=_plain)[:-1]
        self._prefix = head + (b',"messages":' if fields else b'"messages":')
        self.history: list[dict[str, Any]] = [dict(m) for m in opening]

    async def next_turn(self) -> Turn:
        data = await self.endpoint.create(self._prefix + orjson.dumps(self.history) + b"}")
        message, turn = reply_of(data)
        self.history.append(message)
        return turn

    def tool_result(self, call_id: str, text: str) -> None:
        self.history.append({"role": "tool", "tool_call_id": call_id, "content": text})


def reply_of(data: dict[str, Any]) -> tuple[dict[str, Any], Turn]:
    """The assistant message of a chat completion, as it goes back into the history,
    and the turn it is. Names and arguments are kept as the text the model sent."""
    choice = data["choices"][0] if data["choices"] else None
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(message, dict):
        raise MalformedResponse("the endpoint's answer has no message")
    content = message.get("content")
    calls = message.get("tool_calls")
    requests: list[Request] = []
    sent: list[dict[str, Any]] = []
    for tc in calls if isinstance(calls, list) else []:
        if not isinstance(tc, dict):
            continue
        given = tc.get("function")
        fn: dict[str, Any] = given if isinstance(given, dict) else {}
        call_id = str(tc.get("id") or "") or f"call_{len(requests)}"
        name, text = as_text(fn.get("name")), as_text(fn.get("arguments"))
        requests.append((call_id, name, text))
        sent.append(
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": text}}
        )
    back: dict[str, Any] = {"role": "assistant", "content": content}
    if sent:
        back["tool_calls"] = sent
    given = data.get("usage")
    usage: dict[str, Any] = given if isinstance(given, dict) else {}
    tokens = {
        "input_tokens": _count(usage.get("prompt_tokens")),
        "output_tokens": _count(usage.get("completion_tokens")),
    }
    return back, Turn(content if content is not None else "", requests, tokens)


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def as_text(value: Any) -> str:
    """A tool call's name or arguments as text, whatever JSON type the server sent."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError):
        return repr(value)


@cache
def _version() -> str:
    try:
        return importlib.metadata.version("agentproc")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - run from a source tree
        return "dev"
