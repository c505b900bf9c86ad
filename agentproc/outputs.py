"""The one rule for every file a command writes: never over an input, never over a
special file, never over something that exists without ``--overwrite``, and never a
partial file.

:func:`check_output` refuses a target before anything runs; :func:`replacing` writes a
file beside its target and renames it into place only once it is complete, so a
failure leaves the old file byte-identical and no partial or empty file behind. Run
files are the one exception to the renaming: they are written as the run goes, so
that a killed run keeps its episodes for ``--resume``; they pass :func:`check_output`.
A suite is a folder written whole: :func:`check_suite_folder` refuses a folder that is
not a suite (or holds an input), and :func:`replacing_folder` writes the suite beside it
and renames it into place once complete.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

from agentproc.errors import InputError, OutputError
from agentproc.jsonio import cannot_write

MANIFEST = "suite.json"
SUITE_FILES = (MANIFEST, "procedures.jsonl", "scenarios.jsonl", "workflow.json", "workflows.json")
"""A suite folder's own files (the manifest; a grid's procedures, or a declared workflow's
scenarios and its copy): no output is ever written over one, and a folder that holds
anything else is not a suite."""


def input_files(path: Path) -> list[Path]:
    """The files an input path stands for: a suite folder's own files, or the file."""
    path = Path(path)
    if path.is_dir():
        return [path / name for name in SUITE_FILES]
    return [path]


def check_output(
    path: Path,
    *,
    inputs: Iterable[Path] = (),
    overwrite: bool = False,
    option: str = "--out",
    folder: bool = False,
    kept: Iterable[Path] = (),
) -> Path:
    """Refuse ``path`` as an output, with one :class:`InputError` naming it and ``option``,
    when it is one of ``inputs`` (the same file by any name: a hard link, a symlink),
    a suite's own file, a special file (a FIFO, a device, a socket), lies under a file,
    or exists (as a file, or as a folder for a file) without ``overwrite``. With
    ``folder``, ``path`` is a folder to write files into: it may exist, as a folder.
    ``kept`` are files the command keeps for itself (a response cache's store): never an
    output, by any name, whether they exist yet or not.

    >>> check_output(Path("/dev/null"))
    Traceback (most recent call last):
    ...
    agentproc.errors.InputError: /dev/null: --out: is a special file (a FIFO, device or socket)
    """
    path = Path(path)
    for own in kept:
        if _same(path, Path(own)):
            raise InputError(
                path, f"is the response cache's store {own}: write the output elsewhere", option
            )
    for parent in path.parents:  # the nearest existing folder must be a folder
        if parent.exists() or parent.is_symlink():
            if not parent.is_dir():
                raise InputError(
                    path, "cannot write: a part of the path is a file, not a folder", option
                )
            break
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return path
    except OSError as exc:
        raise InputError(path, f"cannot use it: {exc.strerror or exc}", option) from None
    if stat.S_ISDIR(st.st_mode):
        if folder:
            return path
        raise InputError(path, "is a folder, not a file to write", option)
    if not stat.S_ISREG(st.st_mode):
        raise InputError(path, "is a special file (a FIFO, device or socket)", option)
    if folder:
        raise InputError(path, "is a file: it must be a folder", option)
    for source in inputs:
        with contextlib.suppress(OSError):  # an input that is not there is not this file
            if os.path.samestat(st, os.stat(source)):
                raise InputError(
                    path, f"is the input {source}: the output must be a new file", option
                )
    if path.name in SUITE_FILES and (path.parent / MANIFEST).exists():
        raise InputError(path, "is a suite's own file: write the output elsewhere", option)
    if not overwrite:
        raise InputError(path, "already exists: use --overwrite to replace it", option)
    return path


def check_suite_folder(path: Path, *, inputs: Iterable[Path] = (), overwrite: bool = False) -> Path:
    """Refuse ``path`` as a suite folder to write, with one :class:`InputError` naming it,
    when it is not a folder (a file, a link, a special file, or under a file), holds
    anything but a suite's own files (:data:`SUITE_FILES`), holds one of ``inputs`` (the
    same file by any name: the suite written there would replace it; the error names the
    input), or holds a suite without ``overwrite``. The suite is written whole in its
    place (:func:`replacing_folder`), so ``--overwrite`` replaces a suite and nothing else.

    >>> check_suite_folder(Path("/dev/null"))
    Traceback (most recent call last):
    ...
    agentproc.errors.InputError: /dev/null: is not a folder: give a suite folder to write
    """
    path = Path(path)
    if path.is_symlink() or (path.exists() and not path.is_dir()):
        raise InputError(path, "is not a folder: give a suite folder to write")
    check_output(path, folder=True)  # a part of the path that is a file
    if not path.exists():
        return path
    try:
        held = sorted(path.iterdir())
    except OSError as exc:
        raise InputError(path, f"cannot read: {exc.strerror or exc}") from None
    for p in held:
        if p.name not in SUITE_FILES or (p.is_dir() and not p.is_symlink()):
            raise InputError(
                path, f"holds {p.name!r}, so it is not a suite folder: give an empty or new folder"
            )
    for source in inputs:
        for p in held:
            if _same(p, Path(source)):
                raise InputError(
                    source,
                    f"is an input and lies in the suite folder {path} (as {p.name}), which the "
                    "new suite would replace: write the suite to another folder",
                )
    if held and not overwrite:
        raise InputError(path, "already holds a suite: use --overwrite to replace it")
    return path


@contextlib.contextmanager
def replacing_folder(path: Path) -> Iterator[Path]:
    """A new folder beside ``path`` to write a suite into; it takes the place of ``path``
    (and of the suite there) when the block ends without an error, and is removed when it
    raises: a generation that fails or is interrupted never leaves a half suite, nor
    loses the suite ``path`` held before."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise cannot_write(path, exc) from None
    partial = path.parent / f".{path.name}.partial-{os.getpid()}"
    old = path.parent / f".{path.name}.old-{os.getpid()}"
    shutil.rmtree(partial, ignore_errors=True)
    try:
        partial.mkdir()
    except OSError as exc:
        raise cannot_write(path.parent, exc) from None
    try:
        yield partial
        if path.exists():
            path.rename(old)
        partial.rename(path)
        shutil.rmtree(old, ignore_errors=True)
    except OSError as exc:  # a full disk, an I/O error: the old suite is put back
        shutil.rmtree(partial, ignore_errors=True)
        if old.exists() and not path.exists():
            old.rename(path)
        raise OutputError(path, f"cannot write: {exc.strerror or exc}") from None
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise


def _same(path: Path, other: Path) -> bool:
    """Whether two paths name one file: the same file on disk, or the same resolved path."""
    with contextlib.suppress(OSError):
        if os.path.samestat(os.stat(path), os.stat(other)):
            return True
    return path.resolve() == other.resolve()


@contextlib.contextmanager
def replacing(path: Path) -> Iterator[Path]:
    """A temporary file beside ``path`` to write; renamed over ``path`` when the block
    ends without an error, removed when it raises (``path`` is then left as it was).

    The new file gets the permissions an ordinary new file would (the umask's), and a
    symlink at ``path`` is replaced, never its target.
    """
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise cannot_write(path, exc) from None
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except OSError as exc:
        _remove(tmp)
        raise OutputError(path, f"cannot write: {exc.strerror or exc}") from None
    except OutputError as exc:  # a writer's own error names the temporary file: name ours
        _remove(tmp)
        if exc.path != str(tmp):
            raise
        raise OutputError(path, str(exc).removeprefix(f"{exc.path}: ")) from None
    except BaseException:
        _remove(tmp)
        raise


def _remove(tmp: Path) -> None:
    with contextlib.suppress(OSError):
        tmp.unlink()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
