"""Suites on disk: a grid of cells, generated into procedures, read back.

A suite folder holds ``suite.json`` (the grid, seed and count) and
``procedures.jsonl`` (one compact procedure per line). Scenarios, with their
tools and prompt, are compiled from procedures when they are loaded
(:mod:`agentproc.workflow.load`), so a reference-scale suite stays small and
fast to write.
"""

from __future__ import annotations

import collections
import contextlib
import hashlib
import json
import os
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from agentproc.errors import AgentprocError, InputError
from agentproc.jsonio import json_lines, loads, read_json
from agentproc.outputs import SUITE_FILES, check_suite_folder, replacing_folder
from agentproc.procedures.files import MANIFEST, PROCEDURES, check_complete, indexed_lines
from agentproc.procedures.files import procedure_ids as ids_in
from agentproc.procedures.generate import generate_procedure
from agentproc.procedures.grid import Block, Grid, load_grid, preset, presets
from agentproc.procedures.procedure import FORMAT, Cell, Procedure
from agentproc.procedures.records import procedure_of_json, procedure_of_text, procedure_record

__all__ = [
    "BATCH",
    "SUITES",
    "SUITE_FILES",
    "Block",
    "Grid",
    "OldFormatWarning",
    "check_format",
    "default_folder",
    "distance_summary",
    "holds_suite",
    "load_grid",
    "missing_suite",
    "preset",
    "presets",
    "procedure_id",
    "procedure_ids",
    "procedure_of_json",
    "procedure_of_text",
    "procedure_record",
    "read_procedures",
    "write_suite",
]
"""The names this module has always offered; grids and records live in their own modules."""


class OldFormatWarning(UserWarning):
    """A suite of procedures generated under an earlier procedure format: it is read as
    it was written (its steps' liveness as that format defined it)."""


def check_format(folder_: Path) -> None:
    """Warn about a suite of an older procedure format; refuse one of a newer format."""
    manifest = read_json(Path(folder_) / MANIFEST)
    version = manifest.get("format", 1) if isinstance(manifest, dict) else 1
    if not isinstance(version, int) or version > FORMAT:
        raise InputError(
            Path(folder_) / MANIFEST,
            f"procedure format {version!r} is not one this agentproc reads (1 to {FORMAT})",
            "format",
        )
    if version < FORMAT:
        warnings.warn(
            f"{folder_}: procedures of format {version} (this agentproc generates format "
            f"{FORMAT}); they are read as written, without the rules added since: "
            "generate the suite again to use them",
            OldFormatWarning,
            stacklevel=3,
        )


BATCH = 1000
"""Procedures generated and written together: memory stays flat whatever the count."""


def _batches(cells: list[Cell], count: int, seed: int) -> Iterator[tuple[Cell, int, int, int]]:
    """Work items ``(cell, first index, stop index, seed)``, cell by cell, in file order."""
    for cell in cells:
        for start in range(0, count, BATCH):
            yield cell, start, min(start + BATCH, count), seed


def _batch_lines(job: tuple[Cell, int, int, int]) -> tuple[str, str, dict[int, int]]:
    """A batch's cell id, its lines, and how many of its steps have each realised distance."""
    cell, start, stop, seed = job
    lines, counts = [], collections.Counter[int]()
    for i in range(start, stop):
        p = generate_procedure(cell, seed, i)
        counts.update(p.distance_shares())
        lines.append(json.dumps(procedure_record(p), separators=(",", ":")) + "\n")
    return cell.id, "".join(lines), dict(counts)


def distance_summary(manifest: dict[str, Any]) -> list[dict[str, Any]]:
    """Per look-back L of a suite's ``distances``: the realised maximum distance of a
    variable operand and the share of steps whose farthest variable operand lies at each
    distance (``[]`` for a suite written before they were recorded)."""
    by_lookback: dict[int, collections.Counter[int]] = {}
    for entry in (manifest.get("distances") or {}).values():
        counts = by_lookback.setdefault(int(entry["lookback"]), collections.Counter())
        counts.update({int(d): n for d, n in entry["steps"].items()})
    out = []
    for lookback, counts in sorted(by_lookback.items()):
        total = sum(counts.values())
        shares = {d: counts[d] / total for d in sorted(counts)}
        out.append({"lookback": lookback, "realised": max(counts), "shares": shares})
    return out


def write_suite(grid: Grid, out: Path, jobs: int | None = None) -> int:
    """Write a suite folder; returns the number of procedures written.

    Procedures are generated in batches of :data:`BATCH`, in ``jobs`` processes
    (default: one per core), and each batch is written as it comes, so memory
    stays flat whatever the count; the file is the same whatever the number of
    processes. The suite is written to a
    folder beside ``out`` and renamed into place only when complete, so a
    generation that fails or is interrupted never leaves a half suite, nor
    destroys the suite ``out`` held before; a folder that is not a suite is refused
    (:func:`~agentproc.outputs.check_suite_folder`).
    """
    cells = grid.cells()
    work = _batches(cells, grid.count, grid.seed)
    batches = len(cells) * -(-grid.count // BATCH)
    jobs = jobs or min(os.cpu_count() or 1, batches)
    out = check_suite_folder(Path(out), overwrite=True)
    with replacing_folder(out) as partial:
        digest = hashlib.sha256()
        distances: dict[str, collections.Counter[int]] = {
            c.id: collections.Counter() for c in cells
        }
        with contextlib.ExitStack() as stack:
            fh = stack.enter_context(open(partial / PROCEDURES, "w", encoding="utf-8"))
            chunks: Iterator[tuple[str, str, dict[int, int]]] = map(_batch_lines, work)
            if jobs > 1 and batches > 1:
                import multiprocessing  # here: only generation in parallel needs it

                pool = stack.enter_context(multiprocessing.get_context("spawn").Pool(jobs))
                chunks = pool.imap(_batch_lines, work)  # in work order, as each is done
            for cell_id, chunk, counts in chunks:
                fh.write(chunk)
                digest.update(chunk.encode("utf-8"))
                distances[cell_id].update(counts)
        # The manifest last: it marks a finished suite and says what it holds.
        manifest = {
            "format": FORMAT,
            "grid": grid.model_dump(mode="json"),
            "procedures": len(cells) * grid.count,
            "sha256": digest.hexdigest(),
            "distances": {
                c.id: {
                    "lookback": c.lookback,
                    "steps": {str(d): n for d, n in sorted(distances[c.id].items())},
                }
                for c in cells
            },
        }
        (partial / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
    return len(cells) * grid.count


SUITES = Path("suites")
"""Where ``generate`` writes a suite when no folder is given."""


def missing_suite(path: Path) -> InputError:
    """The error of a suite folder that does not exist, naming the command that makes it
    (a shipped preset's own, when the folder is named after one).

    >>> str(missing_suite(Path("suites/quick")))
    'suites/quick: no such file; make it with: agentproc generate --preset quick --out suites/quick'
    """
    name = path.name if path.name in presets() else "quick"
    command = f"agentproc generate --preset {name} --out {path}"
    return InputError(path, f"no such file; make it with: {command}")


def default_folder(grid: Grid, preset_name: str | None = None) -> Path:
    """``suites/NAME`` for a shipped preset used as it is, else ``suites/NAME-DIGEST``
    (the digest of the grid): the same arguments always name the same folder."""
    if preset_name is not None and preset_name in presets() and grid == preset(preset_name):
        return SUITES / preset_name
    text = json.dumps(grid.model_dump(mode="json"), sort_keys=True)
    return SUITES / f"{grid.name}-{hashlib.sha256(text.encode()).hexdigest()[:10]}"


def holds_suite(out: Path, grid: Grid) -> bool:
    """Whether ``out`` is a complete suite of exactly ``grid`` (so generating it again
    would write the same bytes)."""
    manifest = Path(out) / MANIFEST
    if not manifest.is_file() or not (Path(out) / PROCEDURES).is_file():
        return False
    try:
        data = read_json(manifest)
        if not isinstance(data, dict) or data.get("format", 1) != FORMAT:
            return False
        if load_grid(manifest) != grid:
            return False
        check_complete(Path(out), Path(out) / PROCEDURES)
    except AgentprocError:
        return False
    return True


def read_procedures(
    folder_: Path, keep: Callable[[str], bool] | None = None
) -> Iterator[Procedure]:
    """The procedures of a suite folder, one line at a time; with ``keep``, only those
    whose id it accepts (the others are passed over unparsed)."""
    target = Path(folder_) / PROCEDURES
    if not target.exists():
        raise InputError(folder_, f"not a suite folder: {PROCEDURES} is missing")
    check_complete(Path(folder_), target)
    check_format(Path(folder_))
    if keep is None:
        for lineno, data in json_lines(target):
            yield procedure_of_json(target, f"line {lineno}", data)
        return
    for lineno, raw in indexed_lines(target, keep):  # the lines of other ids unread
        try:
            data = loads(raw)
        except ValueError as exc:
            raise InputError(target, f"not valid JSON ({exc})", f"line {lineno}") from None
        procedure = procedure_of_json(target, f"line {lineno}", data)
        if keep(procedure.id):
            yield procedure


def procedure_id(target: Path, where: str, data: Any) -> str:
    """The id of one parsed procedures line, read as a procedure (checked as one)."""
    return procedure_of_json(target, where, data).id


def procedure_ids(folder_: Path) -> Iterator[str]:
    """The ids of a suite's procedures in order, read without checking each procedure
    (the suite is checked complete and unchanged)."""
    return ids_in(folder_, procedure_id)
