"""Reading JSON files and turning what is wrong with them into one :class:`InputError`.

Every file agentproc reads (presets, procedures, scenarios, message lists) goes
through here, so each reports its problem the same way: the file, the field, and
what is wrong with it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agentproc.errors import InputError


def read_json(path: Path) -> Any:
    """A JSON file's content; an :class:`InputError` naming the file when it cannot be read."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(path, "no such file") from None
    except (IsADirectoryError, PermissionError, UnicodeDecodeError) as exc:
        raise InputError(path, f"cannot read: {exc.__class__.__name__}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            path, f"not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from None


def json_lines(path: Path) -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` of every non-empty line of a JSON-lines file."""
    try:
        fh = open(path, encoding="utf-8")  # noqa: SIM115 (closed by the with block below)
    except FileNotFoundError:
        raise InputError(path, "no such file") from None
    with fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                yield lineno, json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(path, f"not valid JSON ({exc.msg})", f"line {lineno}") from None


def invalid(path: object, exc: ValidationError, where: str | None = None) -> InputError:
    """The first problem pydantic found, as an error naming the file and the field."""
    err = exc.errors()[0]
    loc = ".".join(str(p) for p in err["loc"]) or "(top level)"
    field = f"{where}: {loc}" if where else loc
    return InputError(path, err["msg"], field)
