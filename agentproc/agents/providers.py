"""Chat models behind the agents, chosen by a ``provider:model`` spec.

- ``openai:MODEL``: any OpenAI-compatible chat-completions server (OpenAI itself,
  ``llama_cpp.server``, vLLM, the test fake) through
  :class:`agentproc.agents.completions.OpenAIChat`, which sends what
  ``langchain_openai.ChatOpenAI`` would send.
- ``local[:MODEL]``: an in-process model, :class:`agentproc.agents.local.LocalChatModel`.

The model never retries: the runner owns retries, and asks
:func:`is_retryable` which failures are worth another try. :func:`~agentproc.runs.redact.redact`
keeps API keys out of logs and run files.

Importing this module is cheap: aiohttp and ``openai`` load only when a model
is used.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from agentproc.agents.failures import MalformedResponse, loaded
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
    >>> (m.model_name, m.temperature)
    ('test-model', 0.0)
    >>> make_chat_model("hf:gpt2")
    Traceback (most recent call last):
    ...
    agentproc.errors.ConfigError: unknown model provider 'hf' (expected one of: local, openai)

    Raises:
        ConfigError: an unknown provider, a missing model name, no API key for a
            hosted ``openai:`` model, an option the model does not take, or a key or
            header holding a line break.
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
    from pydantic import SecretStr, ValidationError

    from agentproc.agents.completions import OpenAIChat

    secret_env(api_key_env)
    base_url = base_url or os.environ.get(BASE_URL_ENV) or None
    if base_url is not None:
        secret_url(base_url)  # a user:password in it is sent as Basic auth
        kw["base_url"] = base_url
    api_key = os.environ.get(api_key_env) or None
    if api_key is None:
        if base_url is None:
            raise ConfigError(f"set {api_key_env} to use openai:{model}, or give a base URL")
        api_key = NO_KEY  # a self-hosted server usually ignores it
    if base_url is not None and kw.get("max_tokens") is not None and "extra_body" not in kw:
        # ChatOpenAI sends the limit as max_completion_tokens, which llama_cpp.server
        # ignores (it would generate up to the context size); send both.
        kw["extra_body"] = {"max_tokens": kw["max_tokens"]}
    try:
        return OpenAIChat(model=model, api_key=SecretStr(api_key), timeout=timeout, **kw)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors(include_input=False)
        )
        raise ConfigError(f"openai:{model}: {problems}") from None


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
    if isinstance(exc, loaded("openai.APIStatusError")):
        status: int = getattr(exc, "status_code", 0)
        return status >= 500 or status in RETRY_STATUSES
    # APIConnectionError includes APITimeoutError; openai 3 is built on httpx2, langchain
    # on either.
    timeouts = ("openai.APIConnectionError", "httpx.TimeoutException", "httpx2.TimeoutException")
    if isinstance(exc, loaded(*timeouts)):
        return True
    if isinstance(exc, loaded("langchain_core.exceptions.ModelError")):
        return bool(getattr(exc, "is_retryable", False))
    # An answer that is not a chat completion (a cut body, a proxy's page) is a
    # transport hiccup as far as we can tell: worth another try.
    cut = loaded("openai.APIResponseValidationError")
    return isinstance(exc, (MalformedResponse, json.JSONDecodeError, *cut))
