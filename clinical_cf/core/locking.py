"""Pre-registration lock: a catalog's SHA-256 recorded before any model is evaluated.

The lock lives next to the file and is named after its whole name (`my.yaml` -> `my.yaml.lock`),
so `my.yaml` and `my.jsonl` in one folder get two locks. Locks written before (`my.lock`, the name
without its extension; every bundled lock still has that name, because renaming them would change
nothing but the name) are still read, but only for the file they name in their `catalog` field: an
old `my.lock` written for `my.yaml` never registers `my.jsonl`. A new lock is always written under
the whole name. A run whose file no longer matches its lock stops, unless the user passes
`-T allow_unregistered=true`; either way the hash is recorded in every sample, so a log always says
exactly which catalog produced it.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from filelock import FileLock, Timeout

from clinical_cf.core.atomic import write_text_atomic
from clinical_cf.core.errors import CatalogError
from clinical_cf.core.loading import check_regular_file, load_json, read_bytes_checked
from clinical_cf.core.outputs import refuse_bundled

MAX_LOCK_BYTES = 64 * 1024
"""A lock is a few hundred bytes of JSON; anything larger is not a lock."""


class UnregisteredCatalogError(CatalogError):
    """The catalog's hash does not match its pre-registration lock."""


@dataclass(frozen=True)
class LockStatus:
    catalog_sha256: str
    locked_sha256: str | None
    lock_path: Path

    @property
    def registered(self) -> bool:
        return self.locked_sha256 == self.catalog_sha256


def file_sha256(path: str | Path) -> str:
    """SHA-256 of a regular file's bytes (read with the loader's bounds: never a FIFO, a device or an unbounded read)."""
    return hashlib.sha256(read_bytes_checked(path)).hexdigest()


def lock_path_for(catalog_path: str | Path) -> Path:
    """Where a file's lock is written: its whole name plus `.lock` (`my.yaml` -> `my.yaml.lock`)."""
    catalog_path = Path(catalog_path)
    return catalog_path.with_name(catalog_path.name + ".lock")


def legacy_lock_path(catalog_path: str | Path) -> Path:
    """The lock name used before: the file name without its extension (`my.yaml` -> `my.lock`)."""
    return Path(catalog_path).with_suffix(".lock")


def _locked_hash(lock_path: Path, catalog_name: str | None) -> str | None:
    """The hash a lock records; None for a legacy lock written for another file (`catalog_name` given)."""
    raw = load_json(lock_path, limit=MAX_LOCK_BYTES)
    if not isinstance(raw, dict) or not isinstance(raw.get("sha256"), str):
        raise CatalogError(lock_path, "lock file is not JSON with a 'sha256' key", field="sha256")
    if catalog_name is not None and raw.get("catalog", catalog_name) != catalog_name:
        return None
    return raw["sha256"]


def read_lock(catalog_path: str | Path) -> LockStatus:
    catalog_path = Path(catalog_path)
    lock_path = lock_path_for(catalog_path)
    locked: str | None = None
    if lock_path.exists():
        locked = _locked_hash(lock_path, None)
    else:
        legacy = legacy_lock_path(catalog_path)
        if legacy != catalog_path and legacy.exists():
            locked = _locked_hash(legacy, catalog_path.name)
            lock_path = legacy if locked is not None else lock_path
    return LockStatus(file_sha256(catalog_path), locked, lock_path)


def check_lock(catalog_path: str | Path, allow_unregistered: bool = False) -> LockStatus:
    """Return the lock status, raising unless the catalog matches its lock or the user allowed it."""
    status = read_lock(catalog_path)
    if not status.registered and not allow_unregistered:
        if status.locked_sha256 is None:
            why = f"has no lock file ({status.lock_path.name})"
        else:
            why = (
                f"no longer matches its lock (catalog sha256 {status.catalog_sha256[:12]}…, "
                f"locked {status.locked_sha256[:12]}…)"
            )
        raise UnregisteredCatalogError(
            catalog_path,
            f"catalog {why}. A pre-registered catalog must not change after evaluation starts. "
            "If this change is a deliberate re-registration, run `clinical-cf catalog lock "
            f"{catalog_path}`; to run an unregistered catalog anyway pass -T allow_unregistered=true.",
        )
    return status


def write_lock(catalog_path: str | Path) -> Path:
    """Record the catalog's current hash as its pre-registration."""
    catalog_path = Path(catalog_path)
    lock_path = lock_path_for(catalog_path)
    payload = {
        "catalog": catalog_path.name,
        "sha256": file_sha256(catalog_path),
        "locked_at": datetime.now(UTC).replace(microsecond=0).isoformat(),
    }
    write_text_atomic(lock_path, json.dumps(payload, indent=2) + "\n")  # whole or not at all
    return lock_path


# ---------------------------------------------------------------- one writer at a time

WAIT_SECONDS = 30.0
"""How long a command waits for another that holds the same file (a review of the same set) before it stops."""


class BusyError(CatalogError):
    """Another command holds the file for its read-modify-write."""


def busy_paths(path: str | Path) -> tuple[Path, Path]:
    """The lock file `filelock` holds while a command works on `path`, and the note naming that command."""
    path = Path(path)
    return path.with_name(f".{path.name}.busy"), path.with_name(f".{path.name}.busy.json")


def _holder(note: Path) -> str:
    try:
        held = json.loads(note.read_text(encoding="utf-8"))
        return f"{held['purpose']} (process {held['pid']} on {held['host']}, since {held['since']})"
    except (OSError, ValueError, KeyError, TypeError):
        return "another command"


@contextmanager
def exclusive(path: str | Path, purpose: str, wait: float | None = None) -> Iterator[None]:
    """Hold `path` for one read-modify-write (read it, change it, write it and its lock back).

    Another `exclusive` on the same file, in this process or any other, waits up to `wait` seconds (default
    `WAIT_SECONDS`), then raises `BusyError` naming the holder: its purpose, process id, host and start time,
    and that nothing was changed. The lock is `filelock`'s (an OS lock, released when the holder ends, even
    killed); a note next to it names the holder for the message.
    """
    path = Path(path)
    # Nothing is created beside a file the command will refuse: one in the bundled data, a folder, a FIFO.
    refuse_bundled(path, purpose)
    if path.exists() or path.is_symlink():
        check_regular_file(path)
    lock_file, note = busy_paths(path)
    lock = FileLock(str(lock_file))
    wait = WAIT_SECONDS if wait is None else wait
    try:
        lock.acquire(timeout=0)
    except Timeout:
        print(f"{path}: waiting up to {wait:g} s for {_holder(note)} to finish", file=sys.stderr)
        try:
            lock.acquire(timeout=wait)
        except Timeout:
            raise BusyError(
                path, f"is being changed by {_holder(note)}; nothing was changed: run this again once it has finished"
            ) from None
    try:
        since = datetime.now(UTC).replace(microsecond=0).isoformat()
        write_text_atomic(note, json.dumps({"purpose": purpose, "pid": os.getpid(), "host": socket.gethostname(), "since": since}))
        yield
    finally:
        note.unlink(missing_ok=True)
        lock.release()
