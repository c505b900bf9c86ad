"""Where the shipped data files live: tool templates, presets and JSON Schemas.

In a source checkout they are the top-level ``tools/``, ``scenarios/presets/``
and ``schemas/`` folders; an installed wheel carries copies in ``_data/``.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

_PACKAGE = Path(__file__).resolve().parent
_PLACES: dict[str, tuple[Path, ...]] = {
    "tools": (_PACKAGE.parent / "tools", _PACKAGE / "_data" / "tools"),
    "presets": (_PACKAGE.parent / "scenarios" / "presets", _PACKAGE / "_data" / "presets"),
    "schemas": (_PACKAGE.parent / "schemas", _PACKAGE / "_data" / "schemas"),
    "variants": (_PACKAGE.parent / "scenarios" / "variants", _PACKAGE / "_data" / "variants"),
    "workflows": (_PACKAGE.parent / "scenarios" / "workflows", _PACKAGE / "_data" / "workflows"),
}


def folder(kind: str) -> Path:
    """The folder holding one kind of shipped file."""
    for place in _PLACES[kind]:
        if place.is_dir():
            return place
    raise FileNotFoundError(f"agentproc data folder {kind!r} is missing from the installation")


@cache
def load_json(kind: str, name: str) -> Any:
    """A shipped JSON file, parsed once."""
    return json.loads((folder(kind) / name).read_text(encoding="utf-8"))
