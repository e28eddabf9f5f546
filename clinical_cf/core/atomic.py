"""Write a user's file whole or not at all (temp file in the same folder + rename).

A full disk or an interrupted run must never leave a half-written frozen set, decisions file
or cases file in place of the old one: the text goes to a temporary file next to the target,
is flushed to disk, and replaces the target with one `os.replace` (atomic on POSIX and Windows
within one file system). On failure the temporary file is removed and the old file is intact.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from pathlib import Path

from clinical_cf.core import interrupts, phases


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


class StagedFolder:
    """A command's set of files written whole into `out` together, or none of them.

    The files are written into a hidden folder inside `out` (`stage`, on the same file system), then moved into
    `out` by `publish`, one `os.replace` each, with SIGINT and SIGTERM held back until the last is in place: a
    run cut short (an error, Ctrl-C, a full disk, a file-size limit) leaves `out` as it was, with no cut file under
    a final name. The stage is removed however the block ends. An error about a file in the stage names the file
    it was to become (`out/NAME`), never the hidden temporary one.
    """

    def __init__(self, out: str | Path) -> None:
        self.out = Path(out)
        self.stage = self.out

    def __enter__(self) -> StagedFolder:
        self.out.mkdir(parents=True, exist_ok=True)
        self.stage = Path(tempfile.mkdtemp(prefix=".staged-", suffix=".tmp", dir=self.out))
        return self

    def __exit__(self, kind, error, trace) -> None:
        if isinstance(error, OSError):
            self.name_for_user(error)
        shutil.rmtree(self.stage, ignore_errors=True)

    def name_for_user(self, error: OSError) -> None:
        """`error.filename` as the user knows it: a file in the stage by its final name, a missing `out` as `out`."""
        if not self.out.is_dir():
            error.filename, error.strerror = str(self.out), "the output folder is gone (removed while it was written?)"
            error.errno = None
            return
        if not error.filename:
            error.filename = str(self.out)  # a writer that did not say which file: the folder, never "input"
            return
        name = Path(str(error.filename))
        if name.parent == self.stage:
            final = name.name
            if final.startswith(".") and final.endswith(".tmp"):  # a writer's own temporary: `.NAME.<hex>.tmp`
                final = final[1:].rsplit(".", 2)[0]
            error.filename = str(self.out / final)

    def _staged(self) -> list[Path]:
        try:
            return [p for p in self.stage.iterdir() if p.is_file()]
        except OSError:
            return []

    def publish(self) -> list[str]:
        """Move every file of the stage into `out`; returns their names."""
        names = sorted(p.name for p in self.stage.iterdir() if p.is_file() and not p.name.startswith("."))
        with interrupts.deferred():
            phases.reached("publishing")
            for name in names:
                os.replace(self.stage / name, self.out / name)
        return names
