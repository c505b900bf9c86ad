"""An endpoint careless with credentials, for the tests that keep them out of every artefact.

:class:`CredentialEcho` is the oracle of :mod:`tests.fakes.openai_server` (a perfect agent)
whose replies quote the credentials each request carried (the ``Authorization`` header: a
``Bearer`` key, or a ``Basic`` header's base64 of ``user:password``, with the pair and the
password it encodes), in every form :func:`forms` gives: in each reply's text, and in an extra
``note`` argument of a second call of its first step (refused: the tool takes no ``note``).
With ``faults``, each conversation also opens with a 500 error quoting them, and its first
reply adds a call whose tool name is the key and a call whose arguments are no JSON but
the echo.
"""

from __future__ import annotations

import base64
import json
import threading
import urllib.parse
from typing import Any

from agentproc.agents.demo import Reply, Request
from agentproc.agents.demo.reading import conversation_key
from tests.fakes.openai_server import ScriptedServer, oracle_reply


def forms(secret: str) -> set[str]:
    """``secret`` as an artefact might hold it: as written, JSON-escaped (and quoted),
    percent-encoded and in base64, padded and not."""
    coded = base64.b64encode(secret.encode()).decode()
    escaped = json.dumps(secret)
    return {secret, escaped, escaped[1:-1], urllib.parse.quote(secret, safe=""), coded}.union(
        {coded.rstrip("=")}
    )


def carried(authorization: str) -> list[str]:
    """The credentials an ``Authorization`` value carries: a Bearer key, or a Basic
    header's base64, the ``user:password`` it encodes and the password."""
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "basic":
        return [token] if token else []
    pair = base64.b64decode(token).decode()
    return [token, pair, pair.partition(":")[2]]


class CredentialEcho(ScriptedServer):
    """The oracle, echoing each request's credentials (see the module's docstring)."""

    def __init__(self, faults: bool = False) -> None:
        super().__init__(mode="oracle")
        self.faults = faults
        self._local = threading.local()
        self._failed: set[str] = set()

    def respond(self, req: Request) -> Any:
        self._local.credentials = carried(req.headers.get("authorization", ""))
        return super().respond(req)

    def planned(self, body: dict[str, Any]) -> Reply:
        secrets: list[str] = self._local.credentials
        echo = " ".join(sorted({f for s in secrets for f in forms(s)}))
        echo += f" Bearer {secrets[0]}" if secrets else ""
        reply = dict(oracle_reply(body))
        first = not any(m.get("role") == "assistant" for m in body.get("messages", []))
        key = conversation_key(body)
        if self.faults and first and key not in self._failed:
            self._failed.add(key)
            return {"status": 500, "message": f"upstream refused {echo}"}
        reply["content"] = f"as asked: {echo}"
        if first and "tool_call" in reply:
            call = reply.pop("tool_call")
            args = call["arguments"]
            noted = json.loads(args) if isinstance(args, str) else dict(args)
            calls = [call, {"name": call["name"], "arguments": {**noted, "note": echo}}]
            if self.faults and secrets:
                calls.append({"name": secrets[0], "arguments": "{}"})
                calls.append({"name": call["name"], "arguments": "{" + echo})
            reply["tool_calls"] = calls
        return reply
