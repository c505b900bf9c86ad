"""The spans of an OTLP JSON file, with their attributes as plain values.

A file is one ``ExportTraceServiceRequest`` (``{"resourceSpans": [...]}``) or JSON Lines
of them, one request a line, as the OpenTelemetry Collector's file exporter writes. Both
OTLP JSON (ids in hex) and protobuf's JSON mapping (ids in base64, snake_case names
accepted too) are read: ids are only grouping keys here. Every ``AnyValue`` shape is
read (string, bool, int, double, bytes, array, key-value list, empty); a value of the
wrong type, or a null item of an array (protobuf's JSON mapping refuses null in a repeated
field; an empty AnyValue is ``{}``), is one :class:`InputError` naming the file, the line
and the attribute.

Read as JSON, not through the OpenTelemetry protobuf classes: reading traces needs no
extra installed, and ``google.protobuf.json_format`` (7.x) misreads OTLP JSON's hex ids,
which collectors write: it accepts them as base64 and decodes a 32-character hex trace id
into 24 wrong bytes (a 16-character span id into 12), with no error.
"""

from __future__ import annotations

import base64
import binascii
import reprlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentproc.errors import InputError
from agentproc.jsonio import loads, unreadable

MAX_DEPTH = 32
"""How deep array and key-value list values may nest; deeper is refused, not recursed."""
_FLOAT_WORDS = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}


@dataclass(frozen=True)
class Span:
    """One span, where it sits in the file, and its attributes as plain values."""

    where: str
    trace_id: str
    span_id: str
    parent_id: str
    name: str
    start: int
    attrs: dict[str, Any]
    resource: dict[str, Any]


def read_requests(path: Path) -> list[tuple[str, Any]]:
    """``(where, request)`` of each export request: the file's one JSON value, or each
    non-empty line of JSON Lines (``where`` then names the line)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise unreadable(Path(path), exc) from None
    try:
        return [("", loads(text))]
    except ValueError as whole:
        if "Extra data" not in str(whole):  # one value, broken: say where, as JSON
            raise InputError(path, f"not valid JSON ({whole})") from None
    lines = [(n, line) for n, line in enumerate(text.splitlines(), start=1) if line.strip()]
    out = []
    for n, line in lines:
        try:
            out.append((f"line {n}: ", loads(line)))
        except ValueError as exc:
            raise InputError(path, f"line {n}: not valid JSON ({exc}) (JSON Lines)") from None
    return out


def read_spans(path: Path) -> Iterator[Span]:
    """Every span of the file, in file order."""
    for prefix, data in read_requests(path):
        if not isinstance(data, dict) or _get(data, "resourceSpans") is None:
            raise InputError(path, f"{prefix}not OTLP JSON: expected an object with resourceSpans")
        for i, rs in enumerate(_list(data, "resourceSpans", path, f"{prefix}resourceSpans")):
            where = f"{prefix}resourceSpans[{i}]"
            res = _get(_object(rs, path, where), "resource")
            resource = _attributes(
                _get(_object(res, path, f"{where}.resource"), "attributes"),
                path,
                f"{where}.resource.attributes",
            )
            for j, ss in enumerate(_list(rs, "scopeSpans", path, f"{where}.scopeSpans")):
                at_scope = f"{where}.scopeSpans[{j}]"
                for k, span in enumerate(_list(ss, "spans", path, f"{at_scope}.spans")):
                    yield _span(span, f"{at_scope}.spans[{k}]", resource, path)


def _span(span: Any, where: str, resource: dict[str, Any], path: Path) -> Span:
    if not isinstance(span, dict):
        raise InputError(path, "a span must be an object", where)
    attrs = _attributes(_get(span, "attributes"), path, f"{where}.attributes")
    name = _get(span, "name")
    return Span(
        where=where,
        trace_id=_id(_get(span, "traceId")),
        span_id=_id(_get(span, "spanId")) or where,
        parent_id=_id(_get(span, "parentSpanId")),
        name=name if isinstance(name, str) else "",
        start=_nanos(_get(span, "startTimeUnixNano")),
        attrs=attrs,
        resource=resource,
    )


def _id(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _nanos(value: Any) -> int:
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


def _get(d: Any, camel: str) -> Any:
    """A field by its OTLP JSON name, or its protobuf (snake_case) name."""
    if not isinstance(d, dict):
        return None
    if camel in d:
        return d[camel]
    return d.get("".join(f"_{c.lower()}" if c.isupper() else c for c in camel))


def _object(value: Any, path: Path, where: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InputError(path, "expected an object", where)
    return value


def _list(d: Any, key: str, path: Path, where: str) -> list[Any]:
    value = _get(d, key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise InputError(path, "expected a list", where)
    return value


def _attributes(items: Any, path: Path, where: str) -> dict[str, Any]:
    """OTLP key-value attributes as a plain dict."""
    if items is None:
        return {}
    if not isinstance(items, list):
        raise InputError(path, "attributes must be a list of key-value pairs", where)
    out: dict[str, Any] = {}
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("key"), str):
            raise InputError(path, "an attribute needs a key", where)
        out[item["key"]] = any_value(item.get("value"), path, f"{where}[{item['key']}]")
    return out


def any_value(v: Any, path: Path, where: str, depth: int = 0) -> Any:
    """An OTLP ``AnyValue`` as a plain value (``None`` for an empty one)."""
    if depth > MAX_DEPTH:
        raise InputError(path, f"an attribute value nests deeper than {MAX_DEPTH}", where)
    if v is None or v == {}:
        return None
    if not isinstance(v, dict) or len(v) != 1:
        raise InputError(
            path, f"not an OTLP AnyValue (one typed field expected): {_show(v)}", where
        )
    ((key, x),) = v.items()
    kind = _KINDS.get(key)
    if kind is None:
        raise InputError(path, f"unknown AnyValue field {key!r} (expected {_EXPECTED})", where)
    value = _READ[kind](x, path, where, depth)
    if value is _BAD:
        raise InputError(path, f"{key} holds {_show(x)}, not a valid {key}", where)
    return value


_BAD = object()


def _string(x: Any, path: Path, where: str, depth: int) -> Any:
    return x if isinstance(x, str) else _BAD


def _bool(x: Any, path: Path, where: str, depth: int) -> Any:
    return x if isinstance(x, bool) else _BAD


def _int(x: Any, path: Path, where: str, depth: int) -> Any:
    if isinstance(x, int) and not isinstance(x, bool):
        return x
    if isinstance(x, str) and x.lstrip("-").isdigit() and len(x) < 24:  # int64 is a string
        return int(x)
    return _BAD


def _double(x: Any, path: Path, where: str, depth: int) -> Any:
    if isinstance(x, int | float) and not isinstance(x, bool):
        return float(x)
    return _FLOAT_WORDS.get(x, _BAD) if isinstance(x, str) else _BAD


def _bytes(x: Any, path: Path, where: str, depth: int) -> Any:
    if not isinstance(x, str):
        return _BAD
    try:
        return base64.b64decode(x, validate=True)
    except (binascii.Error, ValueError):
        return _BAD


def _array(x: Any, path: Path, where: str, depth: int) -> Any:
    values = _values(x)
    if values is None:
        return _BAD
    for n, item in enumerate(values):
        if item is None:  # protobuf's JSON mapping refuses null in a repeated field too
            raise InputError(
                path, "arrayValue holds null: each item is an AnyValue ({} for an empty one)",
                f"{where}[{n}]",
            )  # fmt: skip
    return [any_value(item, path, f"{where}[{n}]", depth + 1) for n, item in enumerate(values)]


def _kvlist(x: Any, path: Path, where: str, depth: int) -> Any:
    values = _values(x)
    if values is None:
        return _BAD
    out = {}
    for item in values:
        if not isinstance(item, dict) or not isinstance(item.get("key"), str):
            return _BAD
        out[item["key"]] = any_value(item.get("value"), path, f"{where}.{item['key']}", depth + 1)
    return out


def _values(x: Any) -> list[Any] | None:
    if x is None or x == {}:
        return []
    if not isinstance(x, dict):
        return None
    values = x.get("values")
    if values is None:  # protobuf's JSON mapping reads null as an empty repeated field
        return []
    return values if isinstance(values, list) else None


_READ = {
    "string": _string,
    "bool": _bool,
    "int": _int,
    "double": _double,
    "bytes": _bytes,
    "array": _array,
    "kvlist": _kvlist,
}
_KINDS = {f"{kind}Value": kind for kind in _READ} | {f"{kind}_value": kind for kind in _READ}
_EXPECTED = ", ".join(f"{kind}Value" for kind in _READ)


def _show(x: Any) -> str:
    return reprlib.repr(x)  # bounded in depth and length, whatever the value
