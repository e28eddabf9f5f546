"""Pre-registration lock: a catalog's SHA-256 recorded before any model is evaluated.

The lock lives next to the catalog (`interventions.yaml` -> `interventions.lock`). A run
whose catalog no longer matches its lock stops, unless the user passes
`-T allow_unregistered=true`; either way the hash is recorded in every sample, so a
log always says exactly which catalog produced it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from clinical_cf.core.errors import CatalogError


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
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def lock_path_for(catalog_path: str | Path) -> Path:
    return Path(catalog_path).with_suffix(".lock")


def read_lock(catalog_path: str | Path) -> LockStatus:
    catalog_path = Path(catalog_path)
    lock_path = lock_path_for(catalog_path)
    locked: str | None = None
    if lock_path.exists():
        try:
            locked = json.loads(lock_path.read_text(encoding="utf-8"))["sha256"]
        except (json.JSONDecodeError, KeyError, TypeError):
            raise CatalogError(lock_path, "lock file is not JSON with a 'sha256' key", field="sha256") from None
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
        "locked_at": datetime.now(timezone.utc).replace(microsecond=0).isoformat(),
    }
    lock_path.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    return lock_path
