"""Errors raised while loading user-editable catalog and case files.

Every error names the file, the entry id and the field, so a user fixing a
hand-written YAML or JSONL file never has to read a traceback to find the line.

`CatalogError` is also Inspect's `PrerequisiteError` (the exception Inspect raises for "this run
cannot start"), so a catalog or data error raised while `inspect eval` builds a task is printed
as its one-line message with a non-zero exit instead of a traceback. Inspect has no public alias
for it; this is the one module that imports it (`tasks/arguments.py` takes it from here), and
`pyproject.toml` records that decision for inspect-evals-lint's private-import rule.
"""

from __future__ import annotations

import re
from pathlib import Path

from inspect_ai._util.error import PrerequisiteError  # no public alias; the CLI's clean-exit path checks this class
from pydantic import ValidationError
from rich.markup import escape


class CatalogError(PrerequisiteError, ValueError):
    """A catalog, case or lock file is invalid."""

    def __init__(
        self,
        file: str | Path,
        message: str,
        entry: str | None = None,
        field: str | None = None,
        line: int | None = None,
    ) -> None:
        self.file = str(file)
        self.entry = entry
        self.field = field
        self.line = line
        self.detail = message
        where = self.file if line is None else f"{self.file}, line {line}"
        if entry is not None:
            where += f": entry '{entry}'"
        if field is not None:
            where += f", field '{field}'"
        ValueError.__init__(self, f"{where}: {message}")
        # What Inspect prints (with rich: escaped, or "['a']" would be read as markup).
        self.message = f"[bold red]error[/bold red]: {escape(str(self))}"


def validation_errors(
    file: str | Path, entry: str | None, error: ValidationError, line: int | None = None
) -> CatalogError:
    """Turn a pydantic ValidationError into a CatalogError naming every bad field."""
    problems = []
    first_field: str | None = None
    for item in error.errors():
        msg = item["msg"].removeprefix("Value error, ")
        named = re.match(r"case '[^']*', field '([^']+)': ", msg)
        if not item["loc"] and named:
            # A whole-case rule that names its own case and field in one line ("case 'x', field 'metastatic': ...").
            first_field = first_field or named.group(1)
            problems.append(msg)
            continue
        loc = ".".join(str(part) for part in item["loc"]) or "(entry)"
        first_field = first_field or loc
        got = item.get("input")
        shown = "" if isinstance(got, (dict, list)) or got is None else f" (got {got!r})"
        problems.append(f"{loc}: {msg}{shown}")
    message = "; ".join(problems)
    return CatalogError(file, message, entry=entry, field=first_field, line=line)
