"""Posting chat-completion requests: aiohttp, one connection pool per event loop.

A run keeps thousands of conversations going at once, so the client's CPU per
request matters. Measured with 32 requests in flight: aiohttp 0.10 ms of CPU per
request, the ``openai`` SDK 1.38 ms. :class:`HttpEndpoint` posts a ready JSON body
with aiohttp; :class:`SdkEndpoint` posts it through the ``openai`` SDK, and is used
only when the user hands in an HTTP client of their own.

What the HTTP endpoint does, and why:

- one ``aiohttp.ClientSession`` per event loop (a session cannot move to another
  loop: a second ``asyncio.run`` gets a session of its own), closed when its loop
  shuts down its async generators, as ``asyncio.run`` does, or, when the endpoint is
  dropped first, on its loop as soon as that runs (a process keeps one loop for all its
  runs: :mod:`agentproc.runs.loop`);
- proxies from the environment (``HTTPS_PROXY``, ``NO_PROXY`` and kin, read once
  per session: aiohttp's ``trust_env`` would also look up ``~/.netrc`` in a thread
  on every request), TLS with the system's trust store
  or ``SSL_CERT_FILE`` / ``SSL_CERT_DIR``, gzip and deflate bodies decoded;
- the base URL's query parameters kept (``?api-version=...``);
- redirects refused (a POST must not be re-sent elsewhere behind the user's back);
- answers capped at :data:`MAX_BODY` bytes, decoded;
- a pooled connection that received bytes while idle (a second, unrequested
  answer) is closed, never handed to the next request.

Failures are raised as the ``openai`` package's own errors (``BadRequestError``,
``RateLimitError``, ``APITimeoutError``, ``APIConnectionError``...), passed through
LangChain's error mapping, so retries, error kinds and messages are those of the
SDK::

    openai.APIError
    ├── APIStatusError: a subclass per status; a 3xx is a refused redirect, not
    │   retried (the server would redirect again: the base URL must change)
    └── APIConnectionError: refused, reset, not HTTP, a malformed chunk (retried)
        └── APITimeoutError (retried)
    MalformedResponse: an answer that is no chat completion, or larger than
        MAX_BODY (retried, as a cut body is)
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import importlib.metadata
import ssl
import urllib.parse
import urllib.request
import weakref
from collections.abc import AsyncIterator, MutableMapping
from functools import cache
from typing import Any, NoReturn

import aiohttp
import orjson

from agentproc.agents.failures import MalformedResponse
from agentproc.errors import ConfigError

CHAT_PATH = "/chat/completions"
MAX_BODY = 64 << 20
"""Bytes an answer may hold once decoded: a chat completion is far smaller."""
REDIRECTS = frozenset({301, 302, 303, 307, 308})
KEPT = frozenset({"retry-after"})
"""The headers of a refusal its error keeps (lower-case): the retries read ``Retry-After``
(the body is kept decoded, so an encoding header would not describe it)."""


def chat_url(base_url: str, query: dict[str, str] | None = None) -> str:
    """The chat-completions URL of a base URL, its query kept (credentials dropped).

    >>> chat_url("https://x.example/openai/v1/?api-version=2024-06-01")
    'https://x.example/openai/v1/chat/completions?api-version=2024-06-01'
    """
    parts = urllib.parse.urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"the base URL must be an http(s) URL: {parts.scheme}://...")
    pairs = urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
    pairs += list((query or {}).items())
    netloc = parts.netloc.rpartition("@")[2]
    path = parts.path.rstrip("/") + CHAT_PATH
    return urllib.parse.urlunsplit((parts.scheme, netloc, path, urllib.parse.urlencode(pairs), ""))


def request_headers(
    api_key: str, base_url: str, organization: str | None, extra: dict[str, str] | None
) -> dict[str, str]:
    """The headers of every request: what the ``openai`` client sends that a server reads.

    Raises:
        ConfigError: a value holding a line break or another control character,
            which could inject a header; the value itself is never quoted.
    """
    headers = {
        "Accept": "application/json",
        "Content-Type": "application/json",
        "User-Agent": f"agentproc/{_version()}",
        "Authorization": f"Bearer {api_key}",
    }
    parts = urllib.parse.urlsplit(base_url)
    if parts.username or parts.password:  # credentials in the URL are sent as Basic auth
        pair = f"{urllib.parse.unquote(parts.username or '')}:"
        pair += urllib.parse.unquote(parts.password or "")
        headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
    if organization:
        headers["OpenAI-Organization"] = organization
    headers.update(extra or {})
    for name, value in headers.items():
        if any(ord(c) < 32 or ord(c) == 127 for c in f"{name}{value}"):
            what = "the API key" if name == "Authorization" else f"the header {name!r}"
            raise ConfigError(f"{what} holds a line break or control character; fix it")
    return headers


class HttpEndpoint:
    """The ``/chat/completions`` endpoint of one model, posted to with aiohttp."""

    def __init__(self, url: str, headers: dict[str, str], timeout: float | None) -> None:
        self.url = url
        self.headers = headers
        self.timeout = aiohttp.ClientTimeout(total=timeout)
        self._sessions: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = (
            weakref.WeakKeyDictionary()
        )
        """Each event loop's session, and the async generator that closes it."""
        # Held by the finaliser, not only by the endpoint: a dropped endpoint's sessions are
        # closed on their loops, never collected with it unclosed ("Unclosed client session").
        weakref.finalize(self, _close_sessions, self._sessions).atexit = False

    async def create(self, body: bytes) -> dict[str, Any]:
        """POST a request body; the chat completion as a dict.

        Raises:
            openai.APIStatusError: (a subclass for each status) the server said no.
            openai.APITimeoutError, openai.APIConnectionError: no usable answer.
            MalformedResponse: an answer that is not a chat completion.
        """
        session, proxy = await self._session()
        try:
            async with session.post(
                self.url, data=body, allow_redirects=False, proxy=proxy
            ) as response:
                status = response.status
                if status in REDIRECTS:
                    where = response.headers.get("Location", "?")
                    text = f"the endpoint redirected to {where} ({status}); redirects are not "
                    text += "followed: give that URL as the base URL"
                    said = orjson.dumps({"error": {"message": text, "type": "redirect"}})
                    raise_as_sdk(status_error(status, said, self.url), None)
                data = await _read_capped(response)
                headers = [(k, v) for k, v in response.headers.items() if k.lower() in KEPT]
        except TimeoutError as exc:
            raise_as_sdk(_openai().APITimeoutError(request=_request(self.url)), exc)
        except (aiohttp.ClientError, OSError) as exc:  # refused, reset, not HTTP, bad chunks
            message = f"Connection error: {exc or type(exc).__name__}"
            failed = _openai().APIConnectionError(message=message, request=_request(self.url))
            raise_as_sdk(failed, exc)
        if status >= 400:
            raise_as_sdk(status_error(status, data, self.url, headers), None)
        return completion_of(data)

    async def _session(self) -> tuple[Any, str | None]:
        loop = asyncio.get_running_loop()
        known = self._sessions.get(loop)
        if known is None:
            session = _new_session(self.headers, self.timeout)
            closer = _close_at_shutdown(session, loop, self._sessions)
            await anext(closer)
            # The loop holds its async generators weakly: kept here while the loop lives.
            known = self._sessions[loop] = (session, closer, _proxy(self.url))
        return known[0], known[2]


async def _close_at_shutdown(
    session: Any, loop: asyncio.AbstractEventLoop, sessions: MutableMapping[Any, Any]
) -> AsyncIterator[None]:
    """An async generator that closes the session when its loop finalises it
    (``loop.shutdown_asyncgens()``, which ``asyncio.run`` calls before it closes), or when
    its endpoint is dropped (:func:`_close_sessions`). It holds no reference to the
    endpoint, which would keep it alive."""
    try:
        yield
    finally:
        sessions.pop(loop, None)  # the session holds the loop: never freed else
        await session.close()


def _close_sessions(sessions: MutableMapping[asyncio.AbstractEventLoop, Any]) -> None:
    """Close a dropped endpoint's sessions, each on its own loop: at once if it is running,
    else when it next runs (a process's loop runs again for its next run, or at exit)."""
    for loop, (_, closer, _) in list(sessions.items()):
        if not loop.is_closed():
            loop.call_soon_threadsafe(loop.create_task, closer.aclose())


class _FreshConnector(aiohttp.TCPConnector):
    """A connector that never hands out a pooled connection holding bytes nobody asked
    for (a second answer sent after the first): the next request would read them as its
    own answer. aiohttp checks only that a pooled connection is still open."""

    async def connect(self, req: Any, traces: Any, timeout: Any) -> Any:
        while True:
            conn = await super().connect(req, traces, timeout)
            if conn.protocol is None or not conn.protocol.should_close:
                return conn
            conn.close()


def _new_session(headers: dict[str, str], timeout: aiohttp.ClientTimeout) -> aiohttp.ClientSession:
    # ssl.create_default_context() reads the system's store, or SSL_CERT_FILE/SSL_CERT_DIR.
    connector = _FreshConnector(limit=0, ssl=ssl.create_default_context())
    return aiohttp.ClientSession(
        connector=connector,
        headers=headers,
        timeout=timeout,
        cookie_jar=aiohttp.DummyCookieJar(),  # an API answer's cookies are not kept
    )


def _proxy(url: str) -> str | None:
    """The proxy the environment names for ``url`` (None: go direct)."""
    parts = urllib.parse.urlsplit(url)
    if urllib.request.proxy_bypass(parts.hostname or ""):
        return None
    proxies = urllib.request.getproxies()
    return proxies.get(parts.scheme) or proxies.get("all")


async def _read_capped(response: aiohttp.ClientResponse) -> bytes:
    """The decoded body, or :class:`MalformedResponse` as soon as it passes :data:`MAX_BODY`."""
    length = response.content_length
    if length is not None and "Content-Encoding" not in response.headers:
        if length <= MAX_BODY:  # else the length is the packed one, not what is decoded
            return await response.read()
        _too_large(response)
    parts: list[bytes] = []
    size = 0
    async for chunk in response.content.iter_any():
        size += len(chunk)
        if size > MAX_BODY:
            _too_large(response)
        parts.append(chunk)
    return b"".join(parts)


def _too_large(response: aiohttp.ClientResponse) -> NoReturn:
    response.close()  # the rest is never read, the connection never reused
    raise MalformedResponse(f"the endpoint's answer is larger than {MAX_BODY} bytes")


def completion_of(data: bytes) -> dict[str, Any]:
    """A chat completion read from an answer's body; :class:`MalformedResponse` for
    anything else (an HTML page from a proxy, a cut body)."""
    try:
        parsed = orjson.loads(data)
    except orjson.JSONDecodeError:
        snippet = data[:200].decode("utf-8", "replace")
        raise MalformedResponse(
            f"the endpoint answered with no chat completion: {snippet!r}"
        ) from None
    if not isinstance(parsed, dict) or not isinstance(parsed.get("choices"), list):
        raise MalformedResponse("the endpoint's answer has no choices")
    return parsed


class SdkEndpoint:
    """The endpoint reached through the ``openai`` SDK and an HTTP client of the user's
    own, whose settings (headers, auth, certificates, a transport) are all kept."""

    def __init__(self, client: Any, model: str) -> None:
        self.client = client
        self.model = model
        self._loop: Any = None
        """A weak reference to the event loop the client is bound to (None: not used yet)."""

    async def create(self, body: bytes) -> dict[str, Any]:
        loop = asyncio.get_running_loop()
        if self._loop is not None and self._loop() is not loop:
            raise ConfigError(
                f"openai:{self.model}: the http_async_client given to this model belongs to "
                "the event loop of an earlier asyncio.run, and an HTTP client cannot move to "
                "another loop: give the model a new client for each run (or none)"
            )
        self._loop = weakref.ref(loop)
        openai = _openai()
        try:
            answer = await self.client.post(CHAT_PATH, cast_to=object, body=orjson.loads(body))
        except openai.APIError as exc:
            raise_as_sdk(exc, exc.__cause__)
        return completion_of(orjson.dumps(answer))


STATUS_ERRORS = {
    400: "BadRequestError",
    401: "AuthenticationError",
    403: "PermissionDeniedError",
    404: "NotFoundError",
    409: "ConflictError",
    422: "UnprocessableEntityError",
    429: "RateLimitError",
}
"""The ``openai`` error class of each status, as the SDK chooses (5xx: InternalServerError)."""


def status_error(
    status: int, body: bytes, url: str, headers: list[tuple[str, str]] | None = None
) -> Exception:
    """The error the ``openai`` SDK makes of an answer with this status, body and headers
    (its ``response.headers``: where :func:`~agentproc.agents.retry.retry_after` reads)."""
    import httpx2  # what openai 3 is built on: its errors carry an httpx2 response

    openai = _openai()
    message = f"Error code: {status}"
    detail: Any = body.decode("utf-8", "replace").strip()
    with contextlib.suppress(ValueError):
        data = orjson.loads(detail)
        detail = data.get("error", data) if isinstance(data, dict) else data
    said = detail.get("message") if isinstance(detail, dict) else None
    if isinstance(said, str) and said:
        message += f" - {said}"
    response = httpx2.Response(status, headers=headers, content=body, request=_request(url))
    name = "InternalServerError" if status >= 500 else STATUS_ERRORS.get(status, "APIStatusError")
    error_class: Any = getattr(openai, name)
    made: Exception = error_class(message, response=response, body=detail)
    return made


def raise_as_sdk(error: Exception, cause: BaseException | None) -> NoReturn:
    """Raise ``error`` as LangChain's OpenAI client would: mapped by its handlers
    (a context overflow becomes ``ContextOverflowError``, and so on) where it has any."""
    from langchain_openai.chat_models import base  # a dependency of the package

    openai = _openai()
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


def _request(url: str) -> Any:
    import httpx2

    return httpx2.Request("POST", url)


def _openai() -> Any:
    import openai  # about a second to import: only once something failed

    return openai


@cache
def _version() -> str:
    try:
        return importlib.metadata.version("agentproc")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - run from a source tree
        return "dev"
