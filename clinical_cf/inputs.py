"""One validator for every input kind the suites declare: `clinical-cf validate FILE [--kind KIND]` and task start run
the same checks.

The kinds, their loaders and the fields that identify a file of each are the suites' (`clinical_cf.suites.InputKind`);
nothing here names a kind. A file's kind is detected from its first record (JSONL) or its top-level keys (YAML; a
list's first item): the kind whose identifying fields it has, the most specific when several fit.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from clinical_cf.core.errors import CatalogError
from clinical_cf.core.loading import load_json_line, load_yaml, read_text_checked, split_records
from clinical_cf.suites import InputKind, input_kinds


@dataclass(frozen=True)
class Validated:
    path: Path
    kind: str
    entries: int


def _keys(path: Path) -> set[str]:
    """The keys a file is recognised by: its first JSON record's, or its YAML mapping's (a list's first item's)."""
    text = read_text_checked(path)
    lines = split_records(text)
    number, first = next(((n, line) for n, line in enumerate(lines, 1) if line.strip()), (1, ""))
    if path.suffix in (".jsonl", ".json") or first.lstrip().startswith("{"):
        try:
            record = load_json_line(first, path, number)
        except CatalogError as ex:
            if ex.detail.startswith("not valid JSON"):
                raise CatalogError(path, f"{ex.detail}; pass --kind to say what it should be", line=number) from None
            raise
        return set(record) if isinstance(record, dict) else set()
    raw = load_yaml(path)
    if isinstance(raw, list) and raw and isinstance(raw[0], dict):
        return set(raw[0])
    return set(raw) if isinstance(raw, dict) else set()


def detect_kind(path: str | Path, kinds: Mapping[str, InputKind] | None = None) -> str:
    """The input kind of a file: the kind whose identifying fields it has (the most fields, then the first declared)."""
    path = Path(path)
    kinds = input_kinds() if kinds is None else kinds
    keys = _keys(path)
    fitting = [item for item in kinds.values() if item.fields and item.fields <= keys]
    if not fitting:
        raise CatalogError(path, f"cannot tell which kind of file this is; pass --kind, one of: {', '.join(kinds)}")
    return max(fitting, key=lambda item: len(item.fields)).kind


def validate_file(path: str | Path, kind: str | None = None, kinds: Mapping[str, InputKind] | None = None) -> Validated:
    """Validate one input file of the given (or detected) kind; a CatalogError names file, entry and field."""
    path = Path(path)
    read_text_checked(path)
    kinds = input_kinds() if kinds is None else kinds
    if kind is not None and kind not in kinds:
        raise CatalogError(path, f"unknown kind '{kind}'; choose from: {', '.join(kinds)}")
    if kind is None:
        kind = detect_kind(path, kinds)
    else:
        try:
            detected = detect_kind(path, kinds)
        except CatalogError:
            detected = kind  # not recognisable: let the kind's own loader say what is wrong
        if detected != kind:
            raise CatalogError(path, f"looks like a {detected} file, not {kind} (--kind {kind})")
    item = kinds[kind]
    return Validated(path, kind, item.count(item.load(path)))
