"""Loading user-editable catalog files: YAML entry lists and JSONL records, validated entry by entry.

Errors name the file, the entry id and the field (see `catalog.errors`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from datetime import date, datetime
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from clinical_cf.core.errors import CatalogError, validation_errors

T = TypeVar("T", bound=BaseModel)

MAX_FILE_BYTES = 64 * 1024 * 1024
"""Largest catalog or data file read (the bundled ones are under 2 MB): a bigger one is refused with a message."""


def read_text_checked(path: str | Path, limit: int | None = None) -> str:
    """A catalog or data file's text, or a CatalogError that says what is wrong with the path.

    A directory, a missing file, an oversized file and bytes that are not UTF-8 each get a
    sentence naming the file (and the line, for an encoding error), never a traceback.
    """
    path = Path(path)
    limit = MAX_FILE_BYTES if limit is None else limit
    if path.is_dir():
        raise CatalogError(path, "is a directory; pass the file itself")
    if not path.exists():
        raise CatalogError(path, "file not found")
    try:
        size = path.stat().st_size
        if size > limit:
            raise CatalogError(
                path, f"is {size / 1024 / 1024:.1f} MB; catalog and data files are limited to {limit // 1024 // 1024} MB"
            )
        data = path.read_bytes()
    except OSError as ex:
        raise CatalogError(path, f"cannot read: {ex.strerror or ex}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as ex:
        line = data[: ex.start].count(b"\n") + 1
        column = ex.start - (data.rfind(b"\n", 0, ex.start) + 1) + 1
        raise CatalogError(
            path, f"line {line}, column {column}: byte 0x{data[ex.start]:02x} is not UTF-8; save the file as UTF-8"
        ) from None


def load_yaml(path: str | Path) -> Any:
    """A YAML file's content; a syntax error names the line and column in one sentence."""
    path = Path(path)
    text = read_text_checked(path)
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as ex:
        mark = getattr(ex, "problem_mark", None)
        problem = getattr(ex, "problem", None) or str(ex).splitlines()[0]
        context = getattr(ex, "context", None)
        detail = f"not valid YAML: {problem}" + (f" ({context})" if context else "")
        raise CatalogError(path, detail, line=mark.line + 1 if mark else None) from None


def _jsonable(value: Any) -> Any:
    if isinstance(value, (date, datetime)):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not a JSON value")


def validate_strict(model: type[T], raw: Any) -> T:
    """Validate as the JSON the entry is: no "no" for false, no "ten" or "5" for a number.

    Pydantic's default (lax) mode coerces such strings; strict JSON-mode validation keeps ISO
    dates and whole numbers for real fields, which is everything a hand-written file needs.
    YAML dates are passed as their ISO text.
    """
    return model.model_validate_json(json.dumps(raw, default=_jsonable), strict=True)


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
    raw = load_yaml(path)
    entries = raw.get(key) if isinstance(raw, dict) else None
    if not isinstance(entries, list) or not entries:
        raise CatalogError(path, f"'{key}' must be a non-empty list", field=key)
    out: list[T] = []
    seen: set[str] = set()
    for index, entry in enumerate(entries):
        entry_id = str(entry.get("id")) if isinstance(entry, dict) and entry.get("id") else f"#{index}"
        try:
            out.append(validate_strict(model, entry))
        except ValidationError as ex:
            raise validation_errors(path, entry_id, ex) from None
        except TypeError as ex:
            raise CatalogError(path, f"unsupported value: {ex}", entry=entry_id) from None
        if entry_id in seen:
            raise CatalogError(path, "duplicate id", entry=entry_id, field="id")
        seen.add(entry_id)
    return out


def load_jsonl(path: str | Path, model: type[T], id_field: str) -> list[T]:
    """Validate a JSONL file record by record; duplicate ids are refused."""
    path = Path(path)
    text = read_text_checked(path)
    out: list[T] = []
    seen: set[str] = set()
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as ex:
            raise CatalogError(path, f"not valid JSON ({ex.msg} at column {ex.colno})", line=lineno) from None
        if not isinstance(raw, dict):
            raise CatalogError(path, "not a JSON object (one record per line)", line=lineno)
        entry = raw.get(id_field)
        entry = str(entry) if entry is not None else f"line {lineno}"
        try:
            item = model.model_validate_json(line, strict=True)
        except ValidationError as ex:
            raise validation_errors(path, entry, ex, line=lineno) from None
        if entry in seen:
            raise CatalogError(path, f"duplicate {id_field}", entry=entry, field=id_field, line=lineno)
        seen.add(entry)
        out.append(item)
    if not out:
        raise CatalogError(path, "no records in file")
    return out
