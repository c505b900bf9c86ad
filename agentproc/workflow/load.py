"""Scenarios from disk: a suite folder, a scenario ``.json`` or a ``.jsonl`` of scenarios.

Suites store compact procedures; their scenarios, with tools and prompt, are
compiled as they are read, one at a time.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agentproc.jsonio import invalid, json_lines, read_json
from agentproc.procedures import Procedure, read_procedures
from agentproc.workflow.compile import compile_procedure, complete
from agentproc.workflow.scenario import Scenario


def scenario_of(p: Procedure) -> Scenario:
    """The full scenario of a procedure, tools and prompt included."""
    return compile_procedure(p)


def load_scenarios(path: Path) -> Iterator[Scenario]:
    """Scenarios from a suite folder, a scenario ``.json`` or a ``.jsonl`` of scenarios."""
    path = Path(path)
    if path.is_dir():
        for p in read_procedures(path):
            yield scenario_of(p)
    elif path.suffix == ".jsonl":
        for lineno, data in json_lines(path):
            yield complete(parse_scenario(path, data, f"line {lineno}"))
    else:
        yield load_scenario(path)


def load_scenario(path: Path) -> Scenario:
    """One scenario from a scenario file."""
    return complete(parse_scenario(path, read_json(path)))


def parse_scenario(path: object, data: Any, where: str | None = None) -> Scenario:
    """A scenario from parsed JSON; an :class:`InputError` naming the file and field."""
    try:
        return Scenario.model_validate(data)
    except ValidationError as exc:
        raise invalid(path, exc, where) from None
