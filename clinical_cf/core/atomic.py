"""Write a user's file whole or not at all (temp file in the same folder + rename).

A full disk or an interrupted run must never leave a half-written frozen set, decisions file
or cases file in place of the old one: the text goes to a temporary file next to the target,
is flushed to disk, and replaces the target with one `os.replace` (atomic on POSIX and Windows
within one file system). On failure the temporary file is removed and the old file is intact.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path


def current_umask() -> int:
    """The process's umask (Linux: read from /proc, which changes nothing; elsewhere set and put straight back)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def file_mode(path: str | Path) -> int:
    """The mode a rewrite of `path` should have: the file's own when it exists, else what `open()` would give."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        return 0o666 & ~current_umask()


def write_text_atomic(path: str | Path, text: str, encoding: str = "utf-8") -> Path:
    """Write `text` to `path` whole or not at all. A failure (a full disk, a file-size limit, a folder that is not
    there) is an OSError naming `path`, the file being written: never its hidden temporary file, never no file."""
    path = Path(path)
    try:
        return _write_whole(path, text, encoding)
    except OSError as ex:
        if ex.filename and not Path(str(ex.filename)).name.startswith(f".{path.name}."):
            raise  # names another file already (a folder in the way)
        raise type(ex)(ex.errno, ex.strerror or str(ex), str(path)) from None


def _write_whole(path: Path, text: str, encoding: str) -> Path:
    mode = file_mode(path)
    handle, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        # mkstemp creates 0600 (private while being written); the finished file gets the mode any other file
        # the user writes there would have, or the mode the replaced file had.
        os.chmod(tmp, mode)
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
