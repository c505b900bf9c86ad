"""The demo endpoint: an OpenAI-compatible server whose replies follow a scripted profile.

``agentproc serve-demo`` serves it; :func:`demo_server` builds one in Python:

>>> with demo_server("faithful", seed=0) as srv:
...     srv.base_url.startswith("http://127.0.0.1:")
True
"""

from __future__ import annotations

from typing import Any

from agentproc.agents.demo.profiles import PROFILES, ProfileName, make_profile
from agentproc.agents.demo.reading import Reply, conversation_key, read_turn
from agentproc.agents.demo.server import (
    ChatServer,
    Planner,
    Request,
    Response,
    completion,
    error_body,
)

__all__ = [
    "PROFILES",
    "ChatServer",
    "Planner",
    "ProfileName",
    "Reply",
    "Request",
    "Response",
    "completion",
    "demo_server",
    "error_body",
    "make_profile",
    "planner",
    "read_turn",
]


def planner(profile: str, seed: int = 0) -> Planner:
    """A server's planner that answers as ``profile`` does for ``seed``."""
    policy = make_profile(profile, seed)

    def plan(body: dict[str, Any]) -> Reply:
        return policy(read_turn(body), conversation_key(body))

    return plan


def demo_server(
    profile: str = "faithful", *, seed: int = 0, host: str = "127.0.0.1", port: int = 0
) -> ChatServer:
    """A chat-completions server that answers as ``profile`` does for ``seed``."""
    return ChatServer(planner(profile, seed), host=host, port=port, model="demo")
