"""Scenarios from disk: a suite folder, a scenario ``.json`` or a ``.jsonl`` of scenarios.

Suites store compact procedures; their scenarios, with tools and prompt, are
compiled as they are read, one at a time.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agentproc.errors import AgentprocError, InputError
from agentproc.jsonio import invalid, json_lines, loads, read_json, seekable
from agentproc.procedures import MANIFEST, Procedure, load_grid, missing_suite, read_procedures
from agentproc.procedures.files import SCENARIOS, check_complete, indexed_lines, line_digest
from agentproc.workflow.compile import compile_procedure, complete
from agentproc.workflow.scenario import Scenario


def scenario_of(p: Procedure) -> Scenario:
    """The full scenario of a procedure, tools and prompt included."""
    return compile_procedure(p)


def load_scenarios(path: Path, keep: Callable[[str], bool] | None = None) -> Iterator[Scenario]:
    """Scenarios from a suite folder, a scenario ``.json`` or a ``.jsonl`` of scenarios.

    With ``keep``, only the scenarios whose id it accepts; a suite's procedures are
    then passed over before they are compiled (a shard compiles only its own).
    """
    path = Path(path)
    if not path.exists() and path.suffix not in (".json", ".jsonl"):
        raise missing_suite(path)
    if path.suffix == ".toml" and not path.is_dir():
        raise not_a_suite(path)
    if path.is_dir() and (path / SCENARIOS).is_file():  # a declared workflow's suite
        yield from _declared_suite(path, keep)
        return
    if path.is_dir():
        procedures = read_procedures(path, keep)
        first = next(procedures, None)  # checks the suite is complete before its design is read
        if first is None:
            return
        sweeps = load_grid(path / MANIFEST).sweeps()
        suite = str(path.resolve())
        for p in itertools.chain([first], procedures):
            scenario = scenario_of(p)
            scenario.params.sweeps = sweeps.get(p.cell.id)
            scenario._suite = suite
            yield scenario
    elif path.suffix == ".jsonl" or (path.suffix != ".json" and _json_lines(path)):
        for lineno, data in json_lines(path):
            scenario = parse_scenario(path, data, f"line {lineno}")
            if keep is None or keep(scenario.id):
                yield complete(scenario)
    else:
        scenario = load_scenario(path)
        if keep is None or keep(scenario.id):
            yield scenario


def _declared_suite(folder: Path, keep: Callable[[str], bool] | None) -> Iterator[Scenario]:
    """A declared workflow's suite: its scenarios, each knowing its suite and the digest of
    its line (a run file refers to it by them, as to a procedure)."""
    target = folder / SCENARIOS
    check_complete(folder, target)
    suite = str(folder.resolve())
    for lineno, raw in indexed_lines(target, keep):  # the lines of other ids unread
        try:
            data = loads(raw)
        except ValueError as exc:  # UnicodeDecodeError is one
            raise InputError(target, f"not valid JSON ({exc})", f"line {lineno}") from None
        scenario = parse_scenario(target, data, f"line {lineno}")
        if keep is None or keep(scenario.id):
            scenario._suite = suite
            scenario._digest = line_digest(raw)
            yield complete(scenario)


def _json_lines(path: Path) -> bool:
    """Whether a file named neither ``.json`` nor ``.jsonl`` (a pipe, ``/dev/stdin``) holds
    JSON lines: its first non-blank line is a whole JSON value (a one-line file reads the
    same either way; a pretty-printed scenario's first line is not)."""
    try:
        with open(seekable(path), "rb") as fh:
            first = next((line for line in fh if line.strip()), b"")
    except OSError:
        return False  # reading it as one scenario says what is wrong
    try:
        loads(first)
    except ValueError:
        return False
    return True


def per_cell(scenarios: Iterable[Scenario], k: int | None) -> Iterator[Scenario]:
    """The first ``k`` scenarios of each grid cell, in suite order (all with ``None``):
    a run spread over every cell of a suite."""
    seen: Counter[str] = Counter()
    for s in scenarios:
        if k is None or seen[s.params.cell] < k:
            seen[s.params.cell] += 1
            yield s


def suite_size(path: Path) -> int | None:
    """How many scenarios ``load_scenarios(path)`` gives, when a suite's manifest says
    so without reading its procedures; ``None`` otherwise."""
    manifest = Path(path) / MANIFEST
    if not manifest.is_file():
        return None
    try:
        data = read_json(manifest)
    except AgentprocError:
        return None  # reading the suite will say what is wrong with it
    count = data.get("procedures") if isinstance(data, dict) else None
    return count if isinstance(count, int) and not isinstance(count, bool) else None


def load_scenario(path: Path) -> Scenario:
    """One scenario from a scenario file (a workflow file in its place is said so)."""
    data = read_json(path)
    if isinstance(data, dict) and data.keys() >= WORKFLOW_KEYS and "id" not in data:
        raise not_a_suite(path)
    return complete(parse_scenario(path, data))


WORKFLOW_KEYS = frozenset({"inputs", "steps", "answer"})
"""Keys every declared workflow file has (:class:`~agentproc.procedures.WorkflowSpec`) and
no scenario has all of."""


def not_a_suite(path: Path) -> InputError:
    """The error of a declared workflow's file given where a suite goes."""
    return InputError(
        path,
        f"is a workflow file, not a suite: make a suite of it with 'agentproc generate "
        f"--workflow {path} --out DIR', then give DIR",
    )


def parse_scenario(path: object, data: Any, where: str | None = None) -> Scenario:
    """A scenario from parsed JSON; an :class:`InputError` naming the file and field."""
    try:
        return Scenario.model_validate(data)
    except ValidationError as exc:
        raise invalid(path, exc, where) from None
