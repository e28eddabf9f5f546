"""Where the report's caches live and how a log's content is keyed (standard library only: the warm report
path imports nothing heavy before it knows whether it can reuse a report)."""

from __future__ import annotations

import hashlib
import os
import zipfile
from pathlib import Path

from platformdirs import user_cache_dir


def _local(text: str) -> Path | None:
    return None if "://" in text.removeprefix("file://") else Path(text.removeprefix("file://"))


def cache_dir() -> Path | None:
    """Where per-log row caches live: `CLINICAL_CF_CACHE_DIR`, else the user cache folder; "off" disables it."""

    setting = os.environ.get("CLINICAL_CF_CACHE_DIR")
    if setting == "off":
        return None
    if setting:
        return Path(setting)

    return Path(user_cache_dir("clinical_cf")) / "report-rows"


def _file_hash(path: str) -> str | None:
    """The cache key of a local log's content, None for a remote log.

    A `.eval` log is a zip whose directory records every member's CRC-32 and size: the key is the SHA-256 of
    that directory (names, CRCs, sizes, read without inflating anything), so a 2 GB log is keyed in
    milliseconds and any change to any member's bytes changes the key. Anything else (a `.json` log, a zip
    that does not open) is keyed by the SHA-256 of all its bytes.
    """

    local = _local(path)
    if local is None or not local.is_file():
        return None
    digest = hashlib.sha256()
    if local.suffix == ".eval":
        try:
            with zipfile.ZipFile(local) as archive:
                for info in archive.infolist():
                    digest.update(f"{info.filename}\x1f{info.CRC:08x}\x1f{info.file_size}\x1f{info.compress_size}\n".encode())
            return "z" + digest.hexdigest()
        except (zipfile.BadZipFile, OSError, ValueError):
            digest = hashlib.sha256()
    with open(local, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


