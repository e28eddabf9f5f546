"""Write a user's file whole or not at all (temp file in the same folder + rename).

A full disk or an interrupted run must never leave a half-written frozen set, decisions file
or cases file in place of the old one: the text goes to a temporary file next to the target,
is flushed to disk, and replaces the target with one `os.replace` (atomic on POSIX and Windows
within one file system). On failure the temporary file is removed and the old file is intact.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_text_atomic(path: str | Path, text: str, encoding: str = "utf-8") -> Path:
    path = Path(path)
    handle, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding=encoding, newline="") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def same_file(a: str | Path, b: str | Path) -> bool:
    """Whether two paths name the same file (resolved; an existing file also by inode)."""
    a, b = Path(a), Path(b)
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
    except OSError:
        pass
    return a.resolve() == b.resolve()
