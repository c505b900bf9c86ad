"""The scenario of a stored episode, however its line keeps it: whole (``scenario``), as
its compact procedure (``procedure``), or by reference to its suite (``scenario_ref``:
its procedure's line, or a declared workflow's scenario's line in ``scenarios.jsonl``).

Each distinct scenario is indexed once as a :class:`~agentproc.workflow.Workflow` and
kept (a run holds each scenario once per agent, variant and trial); one stored as a
procedure is compiled into its scenario only when that is asked for (relabelling
needs the workflow alone). A suite is indexed once (where each procedure's line
starts), so a reference costs one read of one line.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from pathlib import Path
from typing import Any

import orjson
from pydantic import ValidationError

from agentproc.errors import RunFileError
from agentproc.jsonio import loads
from agentproc.procedures import (
    PROCEDURES,
    Procedure,
    procedure_of_json,
    procedure_of_text,
    procedure_record,
)
from agentproc.procedures.files import SCENARIOS, line_digest, line_index
from agentproc.runs.records import EpisodeRecord, procedure_digest
from agentproc.workflow import Scenario, Workflow, build_workflow
from agentproc.workflow.compile import compile_procedure
from agentproc.workflow.runtime import declared_workflow, procedure_workflow

CACHE_SIZE = 1024
"""Workflows kept, least recently used first out."""


class _Suite:
    """Where each scenario's line lies in a suite's ``procedures.jsonl`` (a declared
    workflow's: ``scenarios.jsonl``), by its id (the suite's own line index:
    :func:`~agentproc.procedures.files.line_index`)."""

    def __init__(self, folder: Path) -> None:
        self.declared = (folder / SCENARIOS).is_file()
        self.path = folder / (SCENARIOS if self.declared else PROCEDURES)
        index = line_index(self.path)  # a file it cannot read: an InputError naming it
        self.at = {sid: (offset, size) for _, offset, size, sid in index if sid is not None}

    def line(self, scenario_id: str) -> bytes | None:
        where = self.at.get(scenario_id)
        if where is None:
            return None
        with open(self.path, "rb") as fh:
            fh.seek(where[0])
            return fh.read(where[1])


class ScenarioStore:
    """Scenarios of stored episodes and their workflows, indexed once each."""

    def __init__(self, suite: Path | None = None) -> None:
        self.suite = None if suite is None else Path(suite)
        """A folder to look referenced scenarios up in, instead of the one recorded."""
        self._cache: OrderedDict[bytes, Workflow] = OrderedDict()
        self._suites: dict[str, _Suite] = {}

    def scenario(self, path: Path | str, lineno: int | None, rec: EpisodeRecord) -> Scenario:
        """The scenario of ``rec`` (without tools and prompt); a :class:`RunFileError`
        naming the line (when given) and the field when it cannot be had."""
        return self.workflow(path, lineno, rec).scenario

    def workflow(self, path: Path | str, lineno: int | None, rec: EpisodeRecord) -> Workflow:
        """The workflow of ``rec``'s scenario (the default variant); errors as
        :meth:`scenario`."""
        at = f"line {lineno}: " if lineno else ""
        sweeps = rec["params"].get("sweeps") if isinstance(rec.get("params"), dict) else None
        if "scenario_ref" in rec:
            ref: dict[str, str] = rec["scenario_ref"]  # type: ignore[assignment]
            if not isinstance(ref, dict) or not all(
                isinstance(ref.get(k), str) for k in ("suite", "sha256")
            ):
                raise RunFileError(path, "expected {suite, sha256}", f"{at}scenario_ref")
            key = ref["sha256"].encode()
            make = lambda: self._referenced(path, at, rec, ref, sweeps)  # noqa: E731
        elif "procedure" in rec:
            procedure = rec["procedure"]
            if isinstance(procedure, bytes):  # its text, as the line holds it: parsed once
                key = b"t" + procedure
                make = lambda: _indexed(_read_text(path, at, procedure), sweeps)  # noqa: E731
            else:
                # As written, keys unsorted (once per episode; the writer keeps their
                # order): the same text is the same procedure.
                key = _key(procedure, sort=False)
                make = lambda: _indexed(_read(path, at, procedure), sweeps)  # noqa: E731
        elif "scenario" in rec:
            data = rec["scenario"]
            key = b"s" + _key(data)
            make = lambda: build_workflow(_with_sweeps(_validated(path, at, data), sweeps))  # noqa: E731
        else:
            raise RunFileError(path, "missing", f"{at}scenario_ref, procedure or scenario")
        found = self._cache.get(key)
        if found is None:
            found = self._cache[key] = make()
            if len(self._cache) > CACHE_SIZE:
                self._cache.popitem(last=False)
        else:
            self._cache.move_to_end(key)
        return found

    def _referenced(
        self, path: Path | str, at: str, rec: EpisodeRecord, ref: dict[str, str], sweeps: Any
    ) -> Workflow:
        folder = self.suite or Path(ref["suite"])
        hint = "give --suite DIR, or run with --self-contained to store scenarios in the run"
        suite = self._suites.get(str(folder))
        if suite is None:
            if not (folder / PROCEDURES).is_file() and not (folder / SCENARIOS).is_file():
                raise RunFileError(
                    path, f"the suite {folder} is not here ({hint})", f"{at}scenario_ref"
                )
            suite = self._suites[str(folder)] = _Suite(folder)
        sid = str(rec["scenario_id"])
        raw = suite.line(sid)
        if raw is None:
            raise RunFileError(
                path, f"the suite {folder} holds no scenario {sid!r} ({hint})", f"{at}scenario_ref"
            )
        if suite.declared:  # a declared workflow's scenario: its line's digest
            if line_digest(raw) != ref["sha256"]:
                raise _changed(path, at, folder, "scenario", sid)
            try:
                data = loads(raw)
            except ValueError as exc:
                raise RunFileError(suite.path, f"not valid JSON ({exc})", f"id {sid}") from None
            make = lambda: _validated(suite.path, f"id {sid}: ", data, "")  # noqa: E731
            try:  # the line the run read and checked (its digest): indexed as it is
                return declared_workflow(data, make)
            except (KeyError, TypeError, ValueError, AttributeError):
                return build_workflow(make())  # the first field that is wrong, named
        try:
            procedure = procedure_of_text(suite.path, f"id {sid}", raw)
        except ValueError as exc:
            raise RunFileError(suite.path, f"not valid JSON ({exc})") from None
        if procedure_digest(procedure_record(procedure)) != ref["sha256"]:
            raise _changed(path, at, folder, "procedure", sid)
        return _indexed(procedure, sweeps)


def _changed(path: Path | str, at: str, folder: Path, what: str, sid: str) -> RunFileError:
    return RunFileError(
        path,
        f"the suite {folder} holds another {what} {sid!r} than the one this episode ran "
        "(the suite changed since the run)",
        f"{at}scenario_ref.sha256",
    )


def _key(data: Any, sort: bool = True) -> bytes:
    try:
        return orjson.dumps(data, option=orjson.OPT_SORT_KEYS if sort else None)
    except TypeError:  # an integer orjson cannot write: the exact encoder can
        return json.dumps(data, sort_keys=True).encode()


def _read_text(path: Path | str, at: str, text: bytes) -> Procedure:
    try:
        return procedure_of_text(Path(path), f"{at}procedure", text)
    except ValueError as exc:
        raise RunFileError(path, f"not valid JSON ({exc})", f"{at}procedure") from None


def _read(path: Path | str, at: str, procedure: Any) -> Procedure:
    return procedure_of_json(Path(path), f"{at}procedure", procedure)


def _indexed(procedure: Procedure, sweeps: Any) -> Workflow:
    """The workflow of a procedure; its scenario, compiled when asked for, lists
    ``sweeps`` (the record's) when the procedure's cell has none of its own."""
    return procedure_workflow(
        procedure, lambda: _with_sweeps(compile_procedure(procedure, with_tools=False), sweeps)
    )


def _with_sweeps(scenario: Scenario, sweeps: Any) -> Scenario:
    if scenario.params.sweeps is None and isinstance(sweeps, list):
        scenario.params.sweeps = [str(s) for s in sweeps]
    return scenario


def _validated(path: Path | str, at: str, data: Any, field: str = "scenario.") -> Scenario:
    try:
        return Scenario.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"])
        raise RunFileError(path, err["msg"], f"{at}{field}{loc}") from None


_DEFAULT = ScenarioStore()


def scenario_of_record(
    path: Path | str, lineno: int | None, rec: EpisodeRecord, store: ScenarioStore | None = None
) -> Scenario:
    """The scenario of a stored episode (without tools and prompt;
    :func:`agentproc.workflow.complete` restores them when they are needed)."""
    return (store or _DEFAULT).scenario(path, lineno, rec)
