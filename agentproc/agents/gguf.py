"""A GGUF file's header, read without loading the model: how ``--agent local:PATH.gguf``
is checked before a run writes anything.

The header is 24 bytes, little-endian: the magic ``GGUF``, a uint32 version, a uint64
count of tensors and a uint64 count of metadata key-value pairs. llama.cpp reads
versions 2 and 3 (version 1, with uint32 counts, is refused by it too). The counts are
checked against the file's size, as llama.cpp checks them before it allocates anything:
a tensor's description takes at least :data:`MIN_TENSOR_BYTES` and a key-value pair
at least :data:`MIN_KV_BYTES`, so a file whose header promises more than it could hold
(four magic bytes and then noise) is refused here, by name, and not by the engine.

A header that reads well is no proof that the model loads (a cut tensor, an unknown
architecture): the embedded model is therefore loaded before the first episode too
(:meth:`agentproc.agents.local.LocalChatModel.load`).
"""

from __future__ import annotations

import os
import stat
import struct
from dataclasses import dataclass
from pathlib import Path

from agentproc.errors import counted

GGUF_MAGIC = b"GGUF"
"""The first four bytes of every GGUF file."""
VERSIONS = (2, 3)
"""The GGUF versions llama.cpp reads."""
HEADER = struct.Struct("<4sIQQ")
"""Magic, version, tensor count, key-value count."""
MIN_TENSOR_BYTES = 24
"""The least a tensor's description takes: its name's length (8), its dimension count
(4), its type (4) and its data offset (8)."""
MIN_KV_BYTES = 13
"""The least a key-value pair takes: its key's length (8), its value type (4) and a
one-byte value."""


class NotGguf(ValueError):
    """A file that is no GGUF model; the message says what is wrong with it."""


@dataclass(frozen=True)
class GgufHeader:
    """What a GGUF file's header declares."""

    version: int
    tensors: int
    kvs: int
    size: int
    """The file's size in bytes."""


def _kind(mode: int) -> str:
    """What a path that is no regular file is, in words."""
    kinds = {
        stat.S_ISDIR: "a folder",
        stat.S_ISFIFO: "a FIFO",
        stat.S_ISSOCK: "a socket",
        stat.S_ISCHR: "a character device",
        stat.S_ISBLK: "a block device",
    }
    return next((what for test, what in kinds.items() if test(mode)), "no regular file")


def read_header(path: Path) -> GgufHeader:
    """The header of the GGUF file at ``path``, checked; nothing past it is read.

    Raises:
        FileNotFoundError: nothing is at ``path``.
        NotGguf: a path that is no regular file (``not a file (a folder)``), a file that
            cannot be read, or one whose header is no GGUF model's (``not a GGUF model:
            ...``), the message saying which.

    Examples:
        >>> import tempfile
        >>> with tempfile.NamedTemporaryFile(suffix=".gguf") as f:
        ...     _ = f.write(b"GGUF" + bytes(60))
        ...     _ = f.flush()
        ...     read_header(Path(f.name))
        Traceback (most recent call last):
        ...
        agentproc.agents.gguf.NotGguf: not a GGUF model: GGUF version 0 (llama.cpp reads ...
    """
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise
    except OSError as exc:  # a path through a file, a loop of links, no permission
        raise NotGguf(f"cannot be read: {exc.strerror or exc}") from None
    if not stat.S_ISREG(mode):  # never opened: a FIFO would block the run
        raise NotGguf(f"not a file ({_kind(mode)})")
    try:
        with open(path, "rb") as fh:
            head = fh.read(HEADER.size)
            size = os.fstat(fh.fileno()).st_size
    except OSError as exc:
        raise NotGguf(f"cannot be read: {exc.strerror or exc}") from None
    if head[: len(GGUF_MAGIC)] != GGUF_MAGIC:
        raise NotGguf("not a GGUF model: it does not start with the GGUF magic bytes")
    if len(head) < HEADER.size:
        raise NotGguf(f"not a GGUF model: it ends inside its {HEADER.size}-byte header")
    _, version, tensors, kvs = HEADER.unpack(head)
    if version not in VERSIONS:
        readable = " and ".join(map(str, VERSIONS))
        raise NotGguf(
            f"not a GGUF model: GGUF version {version} (llama.cpp reads versions {readable})"
        )
    if tensors == 0:
        raise NotGguf("not a GGUF model: its header declares no tensor")
    if tensors * MIN_TENSOR_BYTES + kvs * MIN_KV_BYTES > size - HEADER.size:
        raise NotGguf(
            f"not a GGUF model: its header declares {counted(tensors, 'tensor')} and "
            f"{counted(kvs, 'metadata key')}, more than a file of {counted(size, 'byte')} "
            "can hold"
        )
    return GgufHeader(version, tensors, kvs, size)
