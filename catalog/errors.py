"""Errors raised while loading user-editable catalog and case files.

Every error names the file, the entry id and the field, so a user fixing a
hand-written YAML or JSONL file never has to read a traceback to find the line.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

T = TypeVar("T", bound=BaseModel)


class CatalogError(ValueError):
    """A catalog, case or lock file is invalid."""

    def __init__(
        self,
        file: str | Path,
        message: str,
        entry: str | None = None,
        field: str | None = None,
    ) -> None:
        self.file = str(file)
        self.entry = entry
        self.field = field
        self.message = message
        where = self.file
        if entry is not None:
            where += f": entry '{entry}'"
        if field is not None:
            where += f", field '{field}'"
        super().__init__(f"{where}: {message}")


def validation_errors(
    file: str | Path, entry: str | None, error: ValidationError
) -> CatalogError:
    """Turn a pydantic ValidationError into a CatalogError naming every bad field."""
    problems = []
    first_field: str | None = None
    for item in error.errors():
        loc = ".".join(str(part) for part in item["loc"]) or "(entry)"
        first_field = first_field or loc
        got = item.get("input")
        shown = "" if isinstance(got, (dict, list)) or got is None else f" (got {got!r})"
        problems.append(f"{loc}: {item['msg']}{shown}")
    message = "; ".join(problems)
    return CatalogError(file, message, entry=entry, field=first_field)


def resolve_user_path(path: str | Path) -> Path:
    """Resolve a path a user passed as a task argument.

    `inspect eval tasks/<name>` runs task code from the task's folder, so a relative path
    is looked up from the directory the command was started in ($PWD) as well.
    """
    candidate = Path(path).expanduser()
    if candidate.is_absolute() or candidate.exists():
        return candidate
    started_in = os.environ.get("PWD")
    if started_in and (Path(started_in) / candidate).exists():
        return Path(started_in) / candidate
    return candidate


def load_entries(path: str | Path, key: str, model: type[T]) -> list[T]:
    """Validate the list under `key` of a YAML file entry by entry; errors name the file, the entry id and the field."""
    import yaml

    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as ex:
        raise CatalogError(path, f"cannot read: {ex}") from None
    entries = raw.get(key) if isinstance(raw, dict) else None
    if not isinstance(entries, list) or not entries:
        raise CatalogError(path, f"'{key}' must be a non-empty list", field=key)
    out: list[T] = []
    seen: set[str] = set()
    for index, entry in enumerate(entries):
        entry_id = str(entry.get("id")) if isinstance(entry, dict) and entry.get("id") else f"#{index}"
        try:
            out.append(model.model_validate(entry))
        except ValidationError as ex:
            raise validation_errors(path, entry_id, ex) from None
        if entry_id in seen:
            raise CatalogError(path, "duplicate id", entry=entry_id, field="id")
        seen.add(entry_id)
    return out
