"""Loading user-editable catalog files: YAML entry lists and JSONL records, validated entry by entry.

Errors name the file, the entry id and the field (see `catalog.errors`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from collections.abc import Mapping
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from clinical_cf.catalog.errors import CatalogError, validation_errors

T = TypeVar("T", bound=BaseModel)


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


def comma_list(value: str | list[str] | tuple[str, ...] | None) -> set[str]:
    """The items of a task argument given as "a,b" or as the list Inspect makes of an unquoted `-T name=a,b`."""
    if not value:
        return set()
    items = value if isinstance(value, (list, tuple)) else [value]
    return {part.strip() for item in items for part in str(item).split(",") if part.strip()}


def record_field(record: Any, name: str) -> Any:
    """A field of a pydantic record or of its dict form (exports and other harnesses pass dicts)."""
    return record[name] if isinstance(record, Mapping) else getattr(record, name)


def load_entries(path: str | Path, key: str, model: type[T]) -> list[T]:
    """Validate the list under `key` of a YAML file entry by entry; errors name the file, the entry id and the field."""
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


def load_jsonl(path: str | Path, model: type[T], id_field: str) -> list[T]:
    """Validate a JSONL file record by record; duplicate ids are refused."""
    path = Path(path)
    if not path.exists():
        raise CatalogError(path, "file not found")
    out: list[T] = []
    seen: set[str] = set()
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as ex:
            raise CatalogError(path, f"line {lineno} is not valid JSON ({ex.msg})") from None
        entry = raw.get(id_field) if isinstance(raw, dict) else None
        entry = str(entry) if entry is not None else f"line {lineno}"
        try:
            item = model.model_validate(raw)
        except ValidationError as ex:
            raise validation_errors(path, entry, ex) from None
        if entry in seen:
            raise CatalogError(path, f"duplicate {id_field}", entry=entry, field=id_field)
        seen.add(entry)
        out.append(item)
    if not out:
        raise CatalogError(path, "no records in file")
    return out
