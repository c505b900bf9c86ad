"""The xllamacpp engine on the real packaged weights: what its cache serves, and errors."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from langchain_core.exceptions import ContextOverflowError

from agentproc.agents import xllama_runtime as xr
from agentproc.agents.local import check_installed, model_path, reply_schema
from agentproc.agents.xllama_runtime import Sampling
from agentproc.errors import ConfigError

try:
    check_installed("xllamacpp")
except ConfigError as e:
    pytest.skip(str(e), allow_module_level=True)

TOOL = {
    "type": "function",
    "function": {
        "name": "step_1",
        "description": "Compute S3 = S1 + S2.",
        "parameters": {
            "type": "object",
            "properties": {"S1": {"type": "number"}, "S2": {"type": "number"}},
            "required": ["S1", "S2"],
            "additionalProperties": False,
        },
    },
}
SCHEMA = json.dumps(reply_schema([TOOL]))
GREEDY = Sampling(max_tokens=48, temperature=0.0, top_k=1, seed=0)
OPENING = [
    {"role": "system", "content": "Call step_1(S1, S2) to add. Reply with one JSON object."},
    {"role": "user", "content": "S1 = 2.5 and S2 = 4. Call step_1."},
]


@pytest.fixture(scope="module")
def rt() -> Iterator[xr._Runtime]:
    yield xr.load(model_path(), 1024, None)  # its own context size: not the model tests' one


def test_the_grammar_is_llguidance_json_with_at_most_one_space() -> None:
    head, _, body = xr.grammar(SCHEMA).partition("start: %json ")
    assert head == "%llguidance {}\n"
    schema = json.loads(body)
    assert schema["x-guidance"] == {"whitespace_pattern": " ?"}
    assert schema["anyOf"] == json.loads(SCHEMA)["anyOf"]


def test_a_continued_conversation_reuses_exactly_the_previous_prompt(rt: xr._Runtime) -> None:
    first = xr.complete(rt, OPENING, SCHEMA, GREEDY)
    reply = json.loads(first.text)  # constrained: always JSON of the schema
    assert reply.get("name") == "step_1" or set(reply) == {"content"}
    following = [
        *OPENING,
        {"role": "assistant", "content": first.text},  # the reply exactly as generated
        {"role": "user", "content": "Result of step_1: S3 = 6.500"},
    ]
    second = xr.complete(rt, following, SCHEMA, GREEDY)
    # The prompt is served from the cache; the generated tokens (computed one at a
    # time) are not, though the conversation repeats them.
    assert second.cached_tokens == first.prompt_tokens
    assert second.prompt_tokens > first.prompt_tokens


def test_the_same_turns_again_give_the_same_reply_from_a_batched_cache(rt: xr._Runtime) -> None:
    first = xr.complete(rt, OPENING, SCHEMA, GREEDY)
    again = xr.complete(rt, OPENING, SCHEMA, GREEDY)
    assert again.text == first.text and again.completion_tokens == first.completion_tokens
    # A whole match would re-evaluate the last prompt token alone; the cache is cut
    # back to the template's opening instead.
    assert again.cached_tokens < 8


def test_a_prompt_longer_than_the_context_raises_context_overflow(rt: xr._Runtime) -> None:
    long = [OPENING[0], {"role": "user", "content": "S1 = 2.5. " * 400}]
    with pytest.raises(ContextOverflowError, match="n_ctx is 1024"):
        xr.complete(rt, long, SCHEMA, GREEDY)


def test_no_room_for_the_reply_raises_context_overflow(rt: xr._Runtime) -> None:
    tight = [OPENING[0], {"role": "user", "content": "S1 = 2.5. " * 150}]
    with pytest.raises(ContextOverflowError, match="n_ctx is 1024"):
        xr.complete(rt, tight, SCHEMA, Sampling(900, 0.0, 1, 0))
