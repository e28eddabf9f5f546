"""Where a command writes: inside the folder the user named, never into the package's bundled data.

Two rules, each checked before anything is written:

- a file name built from a value read from a log (a setting, a run label) is one safe name inside
  the output folder: `../x`, an absolute path, a NUL or an empty value can never put a file anywhere
  else (`file_name_part`, `file_in`);
- an output path the user names (`--out`, `--rewards`) that resolves, symlinks followed, into the
  package's bundled data (the pre-registered catalogs and cohorts under `clinical_cf/catalog`) is
  refused (`refuse_bundled`): a write there would silently replace the data every run is locked to.

The bundled folder is located with `importlib.util.find_spec`, which reads where the package lies
without importing it (this module is the lowest layer and imports nothing of the catalog).
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
from functools import cache
from pathlib import Path

from clinical_cf.core.errors import shown

UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
MAX_PART = 64
"""Longest piece of a file name taken from a value (a file name has at most 255 bytes; the rest is ours)."""


class OutputPathError(ValueError):
    """An output path that would write outside its folder or into the bundled data."""


def file_name_part(value: object) -> str:
    """`value` (read from a log) as one piece of a file name: letters, digits, `.`, `_` and `-`.

    A value that is already such a name (`single_shot`, `agent`) is kept as it is; any other is cleaned and
    given 8 hex digits of its SHA-256, so two values that clean to the same text (`agent/x`, `agent_x`)
    still name two files. Never empty, never `.`/`..`, never hidden, never longer than MAX_PART + 9.
    """
    text = str(value)
    clean = UNSAFE.sub("_", text).strip("._-")
    if clean == text and len(text) <= MAX_PART:
        return text
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{clean[:MAX_PART] or 'unnamed'}-{digest}"


def file_in(folder: str | Path, name: str) -> Path:
    """`folder / name`, refusing a name that is not one plain file name (a separator, `..`, an absolute path)."""
    folder = Path(folder)
    if not name or Path(name).name != name or name in (".", "..") or "\x00" in name or "/" in name or "\\" in name:
        raise OutputPathError(f"output file name {shown(name)} is not a plain file name inside {folder}")
    return folder / name


@cache
def bundled_data_dirs() -> tuple[Path, ...]:
    """The folders of the package's bundled data (`clinical_cf.catalog`), resolved."""
    spec = importlib.util.find_spec("clinical_cf.catalog")
    locations = spec.submodule_search_locations if spec is not None else None
    return tuple(Path(p).resolve() for p in (locations or []))


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def refuse_bundled(path: str | Path, argument: str = "--out") -> Path:
    """`path` unchanged, unless it resolves (symlinks followed) into the bundled data, or names an existing folder
    holding a symlink into it: then an `OutputPathError` naming the argument, before anything is written."""
    given = Path(path).expanduser()
    resolved = given.resolve()
    candidates = [resolved]
    if resolved.is_dir():
        # A folder of the user's that holds a link into the bundled data: a writer opening `out/cases.jsonl` follows it.
        try:
            candidates += [child.resolve() for child in resolved.iterdir() if child.is_symlink()]
        except OSError:
            pass
    for root in bundled_data_dirs():
        hit = next((c for c in candidates if _inside(c, root)), None)
        if hit is not None:
            raise OutputPathError(
                f"{argument} {given}: resolves into the package's bundled data ({hit}); "
                "writing there would replace the pre-registered data: choose a path outside it"
            )
    return given
