"""The checks a schema cannot express, for the CSS inputs; `clinical_cf.inputs` validates every kind the suites declare
(`clinical-cf validate FILE [--kind KIND]`) and task start runs the same checks.

Each kind is its schema loader (strict types: no "no" for false, no word for a number; errors
name the file, the line or entry and the field) plus the checks a schema cannot express:

- **interventions**: every regex compiles *with its replacement*: a backreference to a group the
  pattern does not have (`\\2` with one group, `\\g<name>`) is an error here, not an `re.error`
  half-way through a run; marker names in applicability filters are known markers.
- **cases** (and the cases the observation tasks read): marker names are known markers (a
  `her2` or `HER-2` would never match an intervention's `HER2` filter, so the case would silently
  never be eligible): an unknown one is refused with the nearest valid name; a chart section is
  at most `MAX_SECTION_CHARS` characters.
- every file: it exists, is not a directory, is under the size limit and is UTF-8 (see
  `clinical_cf.core.loading`).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from clinical_cf.catalog.css.interventions import Intervention, ReplaceOp, load_catalog
from clinical_cf.catalog.css.schema import KNOWN_MARKERS, MARKER_ALIASES, MARKER_NAME, load_cases
from clinical_cf.core.errors import CatalogError
from clinical_cf.core.loading import load_entries, load_yaml

MAX_SECTION_CHARS = 1_000_000
"""Largest chart section accepted (the CSS paper's whole packets are ~80,000 characters)."""



def _squash(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def check_marker(path: str | Path, name: str, entry: str | None, field: str) -> None:
    """Refuse a marker name written in another spelling or another name of a canonical one (naming it), or not a name.

    Any other name is accepted (open vocabulary, issue 43: a user's own catalog and cases may name IDH1 or SSTR2A without
    a package edit); only an intervention that names it filters on it.
    """
    if name in KNOWN_MARKERS:
        return
    same = [m for m in KNOWN_MARKERS if _squash(m) == _squash(name)]
    alias = MARKER_ALIASES.get(name.upper()) or MARKER_ALIASES.get(name.upper().replace("_", " "))
    if same or alias:
        canonical = same[0] if same else alias
        raise CatalogError(
            path, f"unknown marker name '{name}' (interventions match canonical names exactly); did you mean '{canonical}'?",
            entry=entry, field=field,
        )
    if not re.fullmatch(MARKER_NAME, name):
        raise CatalogError(
            path, f"'{name}' is not a marker name (letters, digits, '.', '-', '/' or spaces, at most 40); known markers: "
            f"{', '.join(KNOWN_MARKERS)}", entry=entry, field=field,
        )


def check_cases(path: str | Path, cases: list[Any]) -> None:
    """Marker names and section sizes of loaded cases (see the module docstring)."""
    for case in cases:
        for name in case.biomarkers:
            check_marker(path, name, case.case_id, f"biomarkers.{name}")
        if case.record is not None:
            for i, marker in enumerate(case.record.biomarkers):
                check_marker(path, marker.name, case.case_id, f"record.biomarkers.{i}.name")
        for section, text in case.sections.items():
            if len(text) > MAX_SECTION_CHARS:
                raise CatalogError(
                    path,
                    f"section is {len(text):,} characters; the limit is {MAX_SECTION_CHARS:,} per section "
                    "(the paper's whole packets are ~80,000; use -T scale= for longer packets)",
                    entry=case.case_id,
                    field=f"sections.{section}",
                )


def check_replacement(pattern: str, replacement: str) -> str | None:
    """Why `replacement` cannot be used with `pattern` in `re.sub`, or None when it can."""
    try:
        compiled = re.compile(pattern)
    except re.error as ex:
        return f"invalid regex {pattern!r}: {ex}"
    try:
        compiled.sub(replacement, "")  # parses the template (group references) even without a match
    except (re.error, IndexError) as ex:
        groups = compiled.groups
        return f"replacement {replacement!r} does not fit pattern {pattern!r} ({groups} group(s)): {ex}"
    return None


def check_interventions(path: str | Path, catalog: Any) -> None:
    """Replacement backreferences and marker names of a loaded intervention catalog, strict types of its entries."""
    load_entries(path, "interventions", Intervention)  # strict: "resected: no" is not false
    for item in catalog.interventions:
        for i, op in enumerate(item.mutation):
            if isinstance(op, ReplaceOp):
                problem = check_replacement(op.pattern, op.replacement)
                if problem:
                    raise CatalogError(path, problem, entry=item.id, field=f"mutation.{i}.replacement")
        filters = [("applies_to", item.applies_to)] + [
            (f"values.{name}.{j}.when", option.when)
            for name, options in item.values.items()
            for j, option in enumerate(options)
            if option.when is not None
        ]
        for where, applicability in filters:
            for name in applicability.biomarkers or {}:
                check_marker(path, name, item.id, f"{where}.biomarkers.{name}")
        for i, sop in enumerate(item.structured or []):
            if sop.op not in ("set_biomarker", "remove_biomarkers"):
                continue
            names = sop.params.get("names", sop.params.get("name", []))
            for name in names if isinstance(names, list) else [names]:
                if isinstance(name, str):
                    check_marker(path, name, item.id, f"structured.{i}.params")


def load_checked_cases(path: str | Path) -> list[Any]:
    """Cases validated against the schema and the checks above (what the CSS tasks read)."""
    cases = load_cases(path)
    check_cases(path, cases)
    return cases


def load_checked_interventions(path: str | Path) -> Any:
    """An intervention catalog validated against the schema and the checks above (what the CSS tasks read)."""
    if not isinstance(load_yaml(path), dict):  # syntax errors with their line, before the schema loader
        raise CatalogError(path, "top level must be a mapping with 'interventions'")
    catalog = load_catalog(path)
    check_interventions(path, catalog)
    return catalog
