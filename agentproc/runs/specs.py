"""A long prompt template (megabytes) stored once per run file, not once per record.

The first record of a variant whose ``variant_spec`` is :data:`LONG_SPEC` characters or
more holds it whole; every later record the same writer writes holds only its digest,
``variant_spec_sha256`` (the first holds both). A system or user message as long is
stored so too: whole with ``content_sha256`` the first time, then ``content`` null
beside the digest; a message that is a prompt the spec holds (a template without
placeholders) refers to the spec's copy from the first record on, so the text is in the
file once. Readers get them back with :func:`resolve_spec` and
:func:`resolve_messages`, which find the line that holds them (once per file: what is
found is kept by digest). A resumed or merged file holds each again once per writer.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from agentproc.errors import RunFileError

LONG_SPEC = 64 * 1024
"""Characters of JSON from which a variant spec is stored once per file, not per record."""
REF = "variant_spec_sha256"
"""The record field that names a spec stored whole in an earlier line."""
CONTENT_REF = "content_sha256"
"""The message field that names a message content stored whole in an earlier line."""
_PROMPT_ROLES = ("system", "user")


def spec_sha256(spec: Any) -> str:
    """SHA-256 of a spec's canonical JSON (sorted keys, no spaces)."""
    return _sha256(json.dumps(spec, sort_keys=True, separators=(",", ":")))


class SharedSpecs:
    """What a writer has stored whole: every later record of a long spec refers to it."""

    def __init__(self) -> None:
        self._written: set[str] = set()

    def share(self, rec: dict[str, Any]) -> dict[str, Any]:
        """``rec`` as it is written: a long spec or prompt already written, by its digest."""
        spec = rec.get("variant_spec")
        if spec is not None and len(json.dumps(spec)) >= LONG_SPEC:
            digest = spec_sha256(spec)
            rec = {**rec, REF: digest}
            if self._first(digest):
                # A prompt the spec holds whole is not written again in the messages: they
                # refer to it (unless a secret in it would be redacted out of the spec).
                self._written.update(map(_sha256, filter(_unredacted, _long_texts(spec))))
            else:
                del rec["variant_spec"]
        messages = rec.get("messages")
        if isinstance(messages, list) and any(map(_long_prompt, messages)):
            rec = {**rec, "messages": [self._message(m) for m in messages]}
        return rec

    def _first(self, digest: str) -> bool:
        """Whether ``digest`` is written whole now (the first time)."""
        first = digest not in self._written
        self._written.add(digest)
        return first

    def _message(self, m: Any) -> Any:
        if not _long_prompt(m):
            return m
        digest = _sha256(m["content"])
        if self._first(digest):
            return {**m, CONTENT_REF: digest}
        return {**m, "content": None, CONTENT_REF: digest}


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _long_texts(value: Any) -> list[str]:
    """The strings of a spec long enough to be stored once (its prompt templates)."""
    if isinstance(value, str):
        return [value] if len(value) >= LONG_SPEC else []
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
    return [text for item in items for text in _long_texts(item)]


def _unredacted(text: str) -> bool:
    from agentproc.runs.redact import redact_data

    return redact_data(text) == text


def _long_prompt(m: Any) -> bool:
    return (
        isinstance(m, dict)
        and m.get("role") in _PROMPT_ROLES
        and isinstance(m.get("content"), str)
        and len(m["content"]) >= LONG_SPEC
    )


_found: dict[str, Any] = {}
"""Digest -> a long spec or prompt text found in a run file (they are few: one per
variant)."""


def resolve_spec(path: Path | str, rec: Any) -> Any:
    """The ``variant_spec`` of a record, stored in it or, by digest, in an earlier line of
    ``path``; ``None`` for an episode of the default variant.

    Raises:
        RunFileError: a digest that no line of ``path`` holds the spec of.
    """
    spec = rec.get("variant_spec")
    digest = rec.get(REF)
    if spec is not None or not isinstance(digest, str):
        return spec
    return _stored(path, digest, "variant_spec", REF)


def resolve_messages(path: Path | str, messages: Any) -> Any:
    """``messages`` with every content stored by digest filled in from ``path``.

    Raises:
        RunFileError: a digest that no line of ``path`` holds the content of.
    """
    if not isinstance(messages, list):
        return messages
    out = []
    for m in messages:
        digest = m.get(CONTENT_REF) if isinstance(m, dict) else None
        if isinstance(digest, str) and m.get("content") is None:
            m = {**m, "content": _stored(path, digest, "content", CONTENT_REF)}
        out.append(m)
    return out


def _stored(path: Path | str, digest: str, what: str, field: str) -> Any:
    """The text or spec of ``digest`` that a line of ``path`` holds whole (``path`` is
    read once for all of them)."""
    if digest not in _found:
        _scan(Path(path))
    if digest not in _found:
        raise RunFileError(path, f"no line holds the {what} of digest {digest}", field)
    return _found[digest]


def _scan(path: Path) -> None:
    """Learn every spec and message text that a line of ``path`` holds whole, by its
    digest (the digest written beside the text: the text on disk may have been redacted)."""
    from agentproc.runs.runfile import ReadReport, read_lines  # the one reader

    for line in read_lines(path, ReadReport(), "whole"):
        rec: dict[str, Any] = line.rec  # type: ignore[assignment]
        digest = rec.get(REF)
        if isinstance(digest, str) and isinstance(rec.get("variant_spec"), dict):
            _found[digest] = rec["variant_spec"]
            _found.update((_sha256(text), text) for text in _long_texts(rec["variant_spec"]))
        messages = rec.get("messages")
        for m in messages if isinstance(messages, list) else []:
            ok = isinstance(m, dict) and isinstance(m.get(CONTENT_REF), str)
            if ok and isinstance(m.get("content"), str):
                _found[m[CONTENT_REF]] = m["content"]
