"""Errors raised while loading user-editable catalog and case files.

Every error names the file, the entry id and the field, so a user fixing a
hand-written YAML or JSONL file never has to read a traceback to find the line.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError


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
