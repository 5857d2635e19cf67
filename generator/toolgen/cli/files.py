"""Replacing a file the commands write by hand (`toolgen describe`'s intent map and recordings,
`toolgen vendor`'s slice): one atomic, durable replace, shared so that every such writer flushes the
new file to disk before it takes the old one's place.

Input: a path, the bytes and permission bits it gets. Output: the file replaced; `OSError` otherwise.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["new_file_mode", "replace_file"]


def replace_file(path: Path, data: bytes, mode: int) -> None:
    """Replace `path` with a file holding `data`, with permission bits `mode`, atomically: a new file
    in the same folder, written and flushed to disk (``fsync``), renamed over `path` (``os.replace``:
    a reader sees the old file or the new one, never a part; a symbolic link at `path` is replaced,
    never followed). Raises `OSError`; the new file is removed when anything fails."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def new_file_mode() -> int:
    """The permission bits of an ordinary new file (``0o666`` less the process's umask), as an editor
    or git would create it."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask
