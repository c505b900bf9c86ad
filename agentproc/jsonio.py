"""Reading JSON and turning what is wrong with it into one :class:`InputError`.

Every file agentproc reads (presets, procedures, scenarios, message lists, run
files) goes through :func:`loads`, so each reports its problem the same way: the
file, the field, and what is wrong with it. Text that nests thousands deep, holds
an integer of thousands of digits, ``NaN``, or bytes that are not UTF-8 is an
input error like any other, never a traceback.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orjson import loads as _fast_loads  # faster; like _DECODER, it refuses NaN and Infinity

from agentproc.errors import InputError

if TYPE_CHECKING:  # only named in a signature: reading JSON needs no pydantic
    from pydantic import ValidationError


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


_DIGITS_AS_ZERO = bytes(48 if 48 <= i <= 57 else i for i in range(256))
_LONG_RUN = b"0" * 19
"""A run of 19 digits: an integer orjson may turn into a float (the standard library
reads it exactly). In a long line, found by mapping every digit to ``0`` and searching,
which is several times faster than a regular expression there."""


_SHORT = 512
_LONG_INT = re.compile("[0-9]{19}")
_LONG_INT_BYTES = re.compile(b"[0-9]{19}")


def _has_long_int(text: str | bytes) -> bool:
    if len(text) < _SHORT:  # short text (a call's arguments): a regular expression is faster
        pattern = _LONG_INT_BYTES if isinstance(text, bytes) else _LONG_INT
        return pattern.search(text) is not None  # type: ignore[arg-type]
    if isinstance(text, str):
        # Bytes translate several times faster than text; a dropped lone surrogate can
        # only join digits (a false alarm, read by the exact parser), never split them.
        text = text.encode("utf-8", "ignore")
    return _LONG_RUN in text.translate(_DIGITS_AS_ZERO)


def loads(text: str | bytes) -> Any:
    """JSON text to Python, fast, with integers beyond 64 bits kept exact.

    Raises ``ValueError`` (with a short reason) for text that is not JSON or not
    UTF-8, nests deeper than the parsers allow, holds ``NaN`` or ``Infinity``, or
    holds an integer too long to read (over 4,300 digits).
    """
    if not _has_long_int(text):
        try:
            return _fast_loads(text)
        except ValueError:
            pass  # orjson refuses a few things the standard library reads; ask it
    probe = text if isinstance(text, str) else text.decode("utf-8")
    try:
        return _DECODER.decode(probe)
    except RecursionError:
        raise ValueError("nested too deeply") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    except ValueError as exc:
        if "digits" in str(exc):
            raise ValueError("an integer too long to read (over 4,300 digits)") from None
        raise


_EXACT_LOW, _EXACT_HIGH = -(2.0**63), 2.0**64
"""orjson reads an integer literal in this range exactly, and one outside it as a float."""


def plain_object(text: str) -> dict[str, Any] | None:
    """A short text holding a flat JSON object (a call's arguments), parsed fast, or
    ``None`` when :func:`loads` must read it: it does not parse so, is not an object, or
    a value is nested or is a float outside :data:`_EXACT_LOW` .. :data:`_EXACT_HIGH`
    (where an integer orjson could not hold may have landed). Checked after the parse,
    not before it: relabelling a run reads every call's arguments through it."""
    try:
        obj = _fast_loads(text)
    except ValueError:
        return None
    if type(obj) is not dict:
        return None
    for value in obj.values():
        kind = type(value)
        if kind is float:
            if not _EXACT_LOW < value < _EXACT_HIGH:
                return None
        elif kind is dict or kind is list:
            return None
    return obj


def unreadable(path: Path, exc: OSError | UnicodeDecodeError) -> InputError:
    """What went wrong opening or reading a file, in one line."""
    if isinstance(exc, FileNotFoundError):
        return InputError(path, "no such file")
    if isinstance(exc, IsADirectoryError):
        return InputError(path, "is a folder, not a file")
    if isinstance(exc, UnicodeDecodeError):
        return InputError(path, f"not UTF-8 text (byte {exc.start})")
    reason = exc.strerror or exc.__class__.__name__
    return InputError(path, f"cannot read: {reason}")


def cannot_write(path: Path, exc: OSError) -> InputError:
    """What went wrong creating a file or folder, in one line."""
    if isinstance(exc, FileExistsError | NotADirectoryError):
        return InputError(path, "cannot write: a part of the path is a file, not a folder")
    return InputError(path, f"cannot write: {exc.strerror or exc.__class__.__name__}")


_spooled: dict[tuple[int, int], Path] = {}
"""A stream's device and inode -> the copy it was read into, once per process."""
_spool_dir: list[Path] = []


def seekable(path: Path) -> Path:
    """Where to read ``path`` from: itself for a regular file, a folder or a path that is
    not there (its opener says what is wrong), else a copy of the stream it names.

    A pipe, a FIFO, process substitution (``<(cat run.jsonl)``) or ``/dev/stdin`` can be
    read only once, and readers read a file twice (a count and a run, heads and then
    records) or seek to a line. Such a stream is copied into a temporary file the first
    time it is asked for and that copy is read since, in this process (the copy is
    removed at exit); the caller keeps naming ``path`` in what it shows.
    """
    path = Path(path)
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return path
    if stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode):
        return path
    key = (st.st_dev, st.st_ino)
    copy = _spooled.get(key)
    if copy is None:
        copy = _spool(path)
        _spooled[key] = copy
    return copy


def forget_streams() -> None:
    """Forget the streams :func:`seekable` copied, and remove their copies: a command's
    reads are over, and a named FIFO read again later holds what is written to it then."""
    for copy in _spooled.values():
        copy.unlink(missing_ok=True)
    _spooled.clear()


def _spool(path: Path) -> Path:
    if not _spool_dir:
        _spool_dir.append(Path(tempfile.mkdtemp(prefix="agentproc-stream-")))
        atexit.register(shutil.rmtree, _spool_dir[0], True)
    fd, name = tempfile.mkstemp(prefix=f"{path.name or 'stream'}-", dir=_spool_dir[0])
    os.close(fd)
    copy = Path(name)
    try:
        with open(path, "rb") as src, open(copy, "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
    except OSError as exc:
        raise unreadable(path, exc) from None
    return copy


def read_json(path: Path) -> Any:
    """A JSON file's content; an :class:`InputError` naming the file when it cannot be read."""
    path = Path(path)
    try:
        text = seekable(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise unreadable(path, exc) from None
    try:
        return loads(text)
    except ValueError as exc:
        raise InputError(path, f"not valid JSON ({exc})") from None


def json_lines(path: Path) -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` of every non-empty line of a JSON-lines file."""
    path = Path(path)
    try:
        fh = open(seekable(path), "rb")  # noqa: SIM115 (closed by the with block below)
    except OSError as exc:
        raise unreadable(path, exc) from None
    with fh:
        try:
            for lineno, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    value = loads(line)
                except UnicodeDecodeError as exc:
                    raise InputError(
                        path, f"not UTF-8 text (byte {exc.start})", f"line {lineno}"
                    ) from None
                except ValueError as exc:
                    where = f"line {lineno}"
                    raise InputError(path, f"not valid JSON ({exc})", where) from None
                yield lineno, value
        except OSError as exc:  # reading failed (a file gone bad under us)
            raise unreadable(path, exc) from None


def invalid(path: object, exc: ValidationError, where: str | None = None) -> InputError:
    """The first problem pydantic found, as an error naming the file and the field."""
    err = exc.errors()[0]
    loc = ".".join(str(p) for p in err["loc"])
    if not loc:  # a check of the whole object: its message names the field
        return InputError(path, err["msg"].removeprefix("Value error, "), where)
    field = f"{where}: {loc}" if where else loc
    return InputError(path, err["msg"], field)
