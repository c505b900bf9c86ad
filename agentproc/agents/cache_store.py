"""The response cache's store: replies by key in one SQLite file, checked before a run.

SQLite (stdlib ``sqlite3``) in WAL mode with a busy timeout: readers never wait for
a writer, and concurrent writers (episodes in flight, ``--workers`` processes, two
runs at once) wait their turn. Each process opens its own connection (a forked
worker never uses its parent's). ``diskcache`` would do the same on top of SQLite;
the store is two statements, so it is not worth a dependency. Each entry keeps a
digest of its value: an entry that does not match it, or does not parse as a
reply, is skipped with a :class:`CacheWarning` and never served; the next reply
replaces it.

The store records the version of the keys it holds (:data:`STORE_VERSION`). A store
written with other keys is refused by :func:`check_store` with one error that names
it: its entries would never be served, and a run that silently asks the model again
for every reply is the costly surprise a cache is there to prevent.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
import urllib.parse
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from agentproc.errors import InputError

CACHE_FILE = "responses.sqlite3"
"""The store's file name in the cache folder."""
STORE_VERSION = 2
"""The version of the keys a store holds: 2 keys on the request body as sent and the
endpoint (1, unrecorded, on a model identity that left length limits out)."""
_OPTION = "--cache"


class CacheWarning(UserWarning):
    """A cache entry was skipped (corrupted) or the store could not be written."""


def store_path(folder: Path) -> Path:
    """The store of the cache folder ``folder``."""
    return Path(folder) / CACHE_FILE


class ResponseStore:
    """Replies by key in one SQLite file (``read_only``: opened so, never created)."""

    def __init__(self, path: Path, read_only: bool = False) -> None:
        self.path = path
        if read_only:
            self._db = _connect_read_only(path)
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, timeout=60.0, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        if "responses" not in self.tables():  # a new store: its version first
            self._db.execute("BEGIN IMMEDIATE")
            self._db.execute("CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value)")
            self._db.execute("INSERT OR IGNORE INTO meta VALUES ('version', ?)", (STORE_VERSION,))
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS responses "
                "(key TEXT PRIMARY KEY, digest TEXT NOT NULL, value BLOB NOT NULL)"
            )
            self._db.execute("COMMIT")

    def tables(self) -> set[str]:
        """The tables the store holds."""
        rows = self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        return {str(name) for (name,) in rows}

    def version(self) -> int | None:
        """The version of its keys (``None``: an empty file, or a store of version 1)."""
        if "meta" not in self.tables():
            return None
        row = self._db.execute("SELECT value FROM meta WHERE name = 'version'").fetchone()
        return int(row[0]) if row is not None else None

    def check_writable(self) -> None:
        """Raise ``sqlite3.Error`` unless a reply could be stored (takes the write lock)."""
        self._db.execute("BEGIN IMMEDIATE")
        self._db.execute("ROLLBACK")

    def get(self, key: str, check: Callable[[dict[str, Any]], object]) -> dict[str, Any] | None:
        """The reply stored under ``key`` (``check`` raises on a wrong shape); ``None``
        when there is none or it is corrupted."""
        row = self._db.execute(
            "SELECT digest, value FROM responses WHERE key = ?", (key,)
        ).fetchone()
        if row is None:
            return None
        digest, value = row
        try:
            if not isinstance(value, bytes) or _digest(value) != digest:
                raise ValueError("its digest does not match its value")
            data = orjson.loads(value)
            check(data)  # its shape, checked before it is served
        except (ValueError, TypeError, KeyError) as exc:
            warnings.warn(
                f"{self.path}: skipped the corrupted cache entry {key[:16]}: {exc}",
                CacheWarning,
                stacklevel=3,
            )
            return None
        return data  # type: ignore[no-any-return]

    def put(self, key: str, data: dict[str, Any]) -> None:
        """Store ``data`` under ``key`` (over a corrupted entry, if any)."""
        value = orjson.dumps(data)
        try:
            self._db.execute(
                "INSERT OR REPLACE INTO responses (key, digest, value) VALUES (?, ?, ?)",
                (key, _digest(value), value),
            )
        except sqlite3.Error as exc:  # a full disk: the run goes on without storing
            said = f"{self.path}: could not store a reply: {exc}"
            warnings.warn(said, CacheWarning, stacklevel=2)

    def close(self) -> None:
        """Close the connection."""
        self._db.close()


def _connect_read_only(path: Path) -> sqlite3.Connection:
    """``path`` opened read-only: never created, never written, even its WAL index. A
    store on a read-only file (a CI cache restored by another job) has no ``-shm`` file
    and cannot get one; it is then opened as immutable."""
    uri = f"file:{urllib.parse.quote(str(path.absolute()))}"
    try:
        db = sqlite3.connect(f"{uri}?mode=ro", uri=True, timeout=60.0, isolation_level=None)
        db.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return db
    except sqlite3.OperationalError:
        return sqlite3.connect(f"{uri}?immutable=1", uri=True, isolation_level=None)


def _digest(value: bytes) -> str:
    return hashlib.sha256(value).hexdigest()


def check_store(folder: Path, read_only: bool) -> None:
    """Refuse the store of ``folder`` with one :class:`~agentproc.errors.InputError` naming
    it when a run could not use it: not a file, not a response cache, written with other
    keys, not writable (unless ``read_only``), or missing under ``read_only`` (which
    never creates one). Called before the first episode, so that no episode errors."""
    path = store_path(folder)
    if path.is_dir():
        raise InputError(path, "is a folder, not a response cache's store", _OPTION)
    if read_only and not path.exists():
        raise InputError(
            path,
            "no response cache here (--cache-mode read never creates one; "
            "fill it with --cache-mode readwrite or write)",
            _OPTION,
        )
    if path.exists() and not path.is_file():
        raise InputError(path, "is a special file, not a response cache's store", _OPTION)
    if path.exists() and path.stat().st_size:
        tables, version = _inspect(path)
        if "responses" not in tables:
            raise InputError(path, "is an SQLite file but not a response cache's store", _OPTION)
        if version != STORE_VERSION:
            raise InputError(
                path,
                f"holds replies under keys of another agentproc version ({version or 1}, "
                f"this one reads {STORE_VERSION}): none would be served; remove it or give "
                "--cache another folder",
                _OPTION,
            )
    elif read_only:
        raise InputError(path, "is empty, not a response cache's store", _OPTION)
    if not read_only:
        if path.exists():  # the file itself: SQLite in WAL mode would write only beside it
            try:
                os.close(os.open(path, os.O_RDWR))
            except OSError as exc:
                raise InputError(
                    path, f"cannot use it as a response cache: {exc}", _OPTION
                ) from None
        _use(path, lambda store: store.check_writable())


def _inspect(path: Path) -> tuple[set[str], int | None]:
    """The tables and the key version of an existing store (opened read-only)."""
    found: list[tuple[set[str], int | None]] = []
    _use(path, lambda store: found.append((store.tables(), store.version())), read_only=True)
    return found[0]


def _use(path: Path, act: Callable[[ResponseStore], object], read_only: bool = False) -> None:
    """``act`` on the store at ``path``; any failure is one error that names it."""
    store = None
    try:
        store = ResponseStore(path, read_only=read_only)
        act(store)
    except (sqlite3.Error, OSError) as exc:
        raise InputError(path, f"cannot use it as a response cache: {exc}", _OPTION) from None
    finally:
        if store is not None:
            store.close()


_STORES: dict[tuple[int, int, Path, bool], ResponseStore] = {}
_LOCK = threading.Lock()


def open_store(folder: Path, read_only: bool) -> ResponseStore:
    """This process's (and thread's) connection to the store of ``folder``."""
    path = store_path(folder)
    key = (os.getpid(), threading.get_ident(), path, read_only)
    with _LOCK:
        store = _STORES.get(key)
        if store is None:
            store = _STORES[key] = ResponseStore(path, read_only)
    return store
