"""A tool-calling agent built by hand with LangGraph, evaluated by agentproc.

Run it over a suite from the command line::

    agentproc run suites/quick --agent examples/react_agent.py:make_agent --out runs/mine.jsonl
    agentproc report runs/mine.jsonl

agentproc calls ``make_agent(tools)`` once per episode with the scenario's mock
tools as LangChain tools (one per step, plus ``submit_answer``) and invokes the
graph it returns with ``{"messages": [SystemMessage, HumanMessage]}`` (the variant's
prompt and the task, as LangChain messages). Every call the graph
makes through those tools is executed, recorded and labelled.

The chat model is the embedded one (``local``, the ``local`` extra) unless
``AGENTPROC_EXAMPLE_MODEL`` names another, e.g. ``openai:MODEL`` with
``OPENAI_BASE_URL`` pointing at an OpenAI-compatible server (and ``OPENAI_API_KEY``
for a hosted one).
"""

from __future__ import annotations

import os
from typing import Any

from langchain_core.language_models import BaseChatModel
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from agentproc.agents.providers import make_chat_model


def chat_model() -> BaseChatModel:
    """The model this example runs: ``AGENTPROC_EXAMPLE_MODEL``, by default ``local``."""
    spec = os.environ.get("AGENTPROC_EXAMPLE_MODEL", "local")
    return make_chat_model(spec, base_url=os.environ.get("OPENAI_BASE_URL"))


def make_agent(tools: list[Any], model: BaseChatModel | None = None) -> Any:
    """A model node and a tool node in a loop, until the model replies without a call."""
    llm = (model or chat_model()).bind_tools(tools)

    async def call_model(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await llm.ainvoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("model", call_model)
    graph.add_node("tools", ToolNode(tools))
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", tools_condition)  # tool calls -> tools, else end
    graph.add_edge("tools", "model")
    return graph.compile()
