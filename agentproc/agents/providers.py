"""Chat models behind the agents, chosen by a ``provider:model`` spec.

- ``openai:MODEL``: any OpenAI-compatible chat-completions server (OpenAI itself,
  ``llama_cpp.server``, vLLM, the test fake) through ``langchain_openai.ChatOpenAI``.
- ``local[:MODEL]``: an in-process model, :class:`agentproc.agents.local.LocalChatModel`.

The client never retries (``max_retries=0``): the runner owns retries, and asks
:func:`is_retryable` which failures are worth another try. :func:`~agentproc.runs.redact.redact`
keeps API keys out of logs and run files.

Importing this module is cheap: ``langchain_openai`` and ``openai`` load only
when a model is made.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import weakref
from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING, Any

from agentproc.agents.conversation import RAW_KEY
from agentproc.agents.failures import MalformedResponse
from agentproc.errors import ConfigError, unknown_key
from agentproc.runs.redact import DEFAULT_KEY_ENV, secret_env, secret_url

if TYPE_CHECKING:
    from langchain_core.language_models.chat_models import BaseChatModel

BASE_URL_ENV = "OPENAI_BASE_URL"
"""The environment variable that gives the server when no ``base_url`` is passed."""
NO_KEY = "unused"
"""The key sent to a self-hosted server when none is set: the client insists on one."""
RETRY_STATUSES = frozenset({408, 429})
"""HTTP statuses below 500 that are worth retrying: request timeout, rate limit."""


Factory = Callable[..., "BaseChatModel"]


def make_chat_model(
    spec: str,
    *,
    base_url: str | None = None,
    timeout: float = 60.0,
    api_key_env: str = DEFAULT_KEY_ENV,
    **kw: Any,
) -> BaseChatModel:
    """Make the chat model a ``provider:model`` spec names.

    Extra keyword arguments go to the model class (e.g. ``max_tokens=64``). With a
    base URL, ``max_tokens`` is also sent under its old name, for servers such as
    ``llama_cpp.server`` that do not read ``max_completion_tokens``.

    >>> m = make_chat_model("openai:test-model", base_url="http://127.0.0.1:9/v1")
    >>> (m.model_name, m.max_retries, m.temperature)
    ('test-model', 0, 0.0)
    >>> make_chat_model("hf:gpt2")
    Traceback (most recent call last):
    ...
    agentproc.errors.ConfigError: unknown model provider 'hf' (expected one of: local, openai)

    Raises:
        ConfigError: an unknown provider, a missing model name, or no API key for
            a hosted ``openai:`` model.
    """
    provider, _, model = spec.partition(":")
    factory = PROVIDERS.get(provider)
    if factory is None:
        raise unknown_key("model provider", provider, sorted(PROVIDERS))
    return factory(model, base_url=base_url, timeout=timeout, api_key_env=api_key_env, **kw)


def _openai(
    model: str, *, base_url: str | None, timeout: float, api_key_env: str, **kw: Any
) -> BaseChatModel:
    if not model:
        raise ConfigError("the openai provider needs a model name: openai:MODEL")
    from pydantic import SecretStr

    secret_env(api_key_env)
    base_url = base_url or os.environ.get(BASE_URL_ENV) or None
    if base_url is not None:
        secret_url(base_url)  # a user:password in it is sent as Basic auth
    api_key = os.environ.get(api_key_env) or None
    if api_key is None:
        if base_url is None:
            raise ConfigError(f"set {api_key_env} to use openai:{model}, or give a base URL")
        api_key = NO_KEY  # a self-hosted server usually ignores it
    options: dict[str, Any] = {
        "temperature": 0,
        # Our fakes and self-hosted servers speak chat completions only; langchain
        # would switch some model names to the Responses API on its own.
        "use_responses_api": False,
        **kw,
    }
    if base_url is not None and kw.get("max_tokens") is not None and "extra_body" not in kw:
        # ChatOpenAI sends the limit as max_completion_tokens, which llama_cpp.server
        # ignores (it would generate up to the context size); send both.
        options["extra_body"] = {"max_tokens": kw["max_tokens"]}
    return _raw_class()(
        model=model,
        base_url=base_url,
        api_key=SecretStr(api_key),
        timeout=_own_client_timeout(timeout),
        max_retries=0,  # the runner retries, so that every attempt is counted
        **options,
    )


def _own_client_timeout(timeout: float) -> Any:
    """The timeout as an ``httpx.Timeout``, which makes LangChain build this model its own
    HTTP client: its default client is cached per process and bound to the first event
    loop that used it, so a second ``asyncio.run`` would fail with "Event loop is closed"."""
    try:
        from langchain_openai._compat import httpx
    except ImportError:  # pragma: no cover - an older langchain-openai
        return timeout
    return httpx.Timeout(timeout)


@cache
def _raw_class() -> type[Any]:
    from langchain_openai import ChatOpenAI
    from pydantic import PrivateAttr

    from agentproc.agents.completions import as_text

    class RawChatOpenAI(ChatOpenAI):  # type: ignore[misc]
        """``ChatOpenAI`` that keeps the raw argument text of every tool call.

        LangChain parses arguments and drops the text; a benchmark of tool use must
        record exactly what the model sent. Arguments that are JSON but not an
        object would make LangChain raise; they become invalid tool calls instead,
        so a model's mistake stays data.
        """

        _lean: Any = PrivateAttr(default=False)
        """The model's lean endpoint: False until asked for, None where there is none."""

        _loop: Any = PrivateAttr(default=None)
        """A weak reference to the event loop the openai client is bound to (None: not
        used yet). Kept on the model itself: a table keyed by ``id()`` would hand a new
        model the loop of a collected one that had the same id."""

        def lean_endpoint(self) -> Any:
            """The :class:`~agentproc.agents.completions.Completions` endpoint this model
            posts to, or None where only the ``openai`` client will do (a proxy...)."""
            if self._lean is False:
                from agentproc.agents.completions import Completions

                self._lean = Completions.of(self)
            return self._lean

        def lean_conversation(self, tools: Any, opening: list[dict[str, Any]]) -> Any:
            """The harness's conversation on the lean path (None: there is none)."""
            endpoint = self.lean_endpoint()
            if endpoint is None:
                return None
            from agentproc.agents.completions import CompletionsChat

            bound = getattr(self.bind_tools(tools), "kwargs", {}) if tools is not None else {}
            return CompletionsChat(endpoint, self._get_request_payload([], **bound), opening)

        async def _agenerate(
            self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any
        ) -> Any:
            payload = self._get_request_payload(messages, stop=stop, **kwargs)
            endpoint = self.lean_endpoint()
            if (
                endpoint is not None
                and "response_format" not in payload
                and not payload.get("stream")
            ):
                from agentproc.agents.completions import body_of

                return self._create_chat_result(await endpoint.create(body_of(payload)))
            # The openai client: an async HTTP client is bound to the event loop that
            # first used it, so a model used again under a new loop gets a new one.
            loop = asyncio.get_running_loop()
            seen = self._loop
            if seen is not None and seen() is not loop:
                if self.http_async_client is not None:
                    # The user's own client: its settings (headers, auth, certificates,
                    # a transport) cannot all be copied, so it is never swapped behind
                    # their back; nothing is sent.
                    raise ConfigError(
                        f"openai:{self.model_name}: the http_async_client given to this "
                        "model belongs to the event loop of an earlier asyncio.run, and an "
                        "HTTP client cannot move to another loop: give the model a new "
                        "client for each run (or none)"
                    )
                from langchain_openai._compat import httpx

                client = httpx.AsyncClient(timeout=self.request_timeout)  # type: ignore[arg-type]
                self.root_async_client = self.root_async_client.copy(http_client=client)
                self.async_client = self.root_async_client.chat.completions
            self._loop = weakref.ref(loop)
            return await super()._agenerate(messages, stop=stop, run_manager=run_manager, **kwargs)

        def _create_chat_result(
            self, response: Any, generation_info: dict[str, Any] | None = None
        ) -> Any:
            data = _completion(response)
            raw: list[tuple[str, str, str]] = []
            for choice in data.get("choices") or []:
                message = choice.get("message") if isinstance(choice, dict) else None
                calls = message.get("tool_calls") if isinstance(message, dict) else None
                for tc in calls if isinstance(calls, list) else []:
                    if not isinstance(tc, dict):
                        continue
                    given = tc.get("function")
                    fn: dict[str, Any] = given if isinstance(given, dict) else {}
                    tc["function"] = fn
                    # Keep exactly what was sent, as text: a name that is not a string, or
                    # arguments sent as an object, are the model's behaviour, not a crash.
                    name, text = as_text(fn.get("name")), as_text(fn.get("arguments"))
                    raw.append((str(tc.get("id") or ""), name, text))
                    fn["name"] = name
                    fn["arguments"] = text if _langchain_safe(text) else "\u0000" + text
            result = super()._create_chat_result(data, generation_info)
            for gen in result.generations:
                gen.message.additional_kwargs[RAW_KEY] = raw
            return result

    return RawChatOpenAI


def _completion(response: Any) -> dict[str, Any]:
    """The chat completion as a dict; :class:`MalformedResponse` for anything else
    (an HTML page from a proxy, a cut body), which is the endpoint's failure."""
    if isinstance(response, dict):
        data = response
    elif hasattr(response, "model_dump"):
        data = response.model_dump(warnings=False)
    else:
        snippet = str(response)[:200]
        raise MalformedResponse(f"the endpoint answered with no chat completion: {snippet!r}")
    if not isinstance(data.get("choices"), list):
        raise MalformedResponse("the endpoint's answer has no choices")
    return data


def _langchain_safe(text: str) -> bool:
    """Whether LangChain can be handed the argument text as it is: it parses an
    object, and reports text that is not JSON as an invalid tool call, but raises
    on JSON that is not an object or nests too deeply (no text at all is no
    object either)."""
    if not text:
        return False
    try:
        return isinstance(json.loads(text), dict)
    except RecursionError:
        return False
    except ValueError:
        return True


def _local(
    model: str, *, base_url: str | None, timeout: float, api_key_env: str, **kw: Any
) -> BaseChatModel:
    from agentproc.agents.local import LocalChatModel  # loads llama.cpp

    if model:
        kw["model"] = model
    model_obj: BaseChatModel = LocalChatModel(**kw)
    return model_obj


PROVIDERS: dict[str, Factory] = {"openai": _openai, "local": _local}
"""Provider prefix -> factory ``(model, *, base_url, timeout, api_key_env, **kw)``."""


def is_retryable(exc: BaseException) -> bool:
    """Whether a failed model call is worth trying again.

    True for rate limits (429), request timeouts (408), server errors (5xx),
    timeouts and connection failures, from ``openai``, ``httpx`` / ``httpx2`` or
    a langchain ``ModelError`` that says so; False for everything else (bad
    requests, authentication, context overflow, bugs).

    >>> is_retryable(ValueError("bad"))
    False
    """
    # An exception of a library can only exist once that library is imported, so
    # looking in sys.modules avoids importing openai (about a second) to answer.
    openai = sys.modules.get("openai")
    if openai is not None:
        if isinstance(exc, openai.APIStatusError):
            return exc.status_code >= 500 or exc.status_code in RETRY_STATUSES
        if isinstance(exc, openai.APIConnectionError):  # includes APITimeoutError
            return True
    for name in ("httpx", "httpx2"):  # openai 3 is built on httpx2, langchain on either
        httpx = sys.modules.get(name)
        if httpx is not None and isinstance(exc, httpx.TimeoutException):
            return True
    core = sys.modules.get("langchain_core.exceptions")
    model_error = getattr(core, "ModelError", None)
    if model_error is not None and isinstance(exc, model_error):
        return bool(exc.is_retryable)
    # An answer that is not a chat completion (a cut body, a proxy's page) is a
    # transport hiccup as far as we can tell: worth another try.
    return isinstance(exc, MalformedResponse | json.JSONDecodeError) or (
        openai is not None and isinstance(exc, openai.APIResponseValidationError)
    )
