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

import difflib
import re
from pathlib import Path
from typing import Any

from clinical_cf.core.errors import CatalogError
from clinical_cf.core.loading import load_entries, load_yaml

MAX_SECTION_CHARS = 1_000_000
"""Largest chart section accepted (the CSS paper's whole packets are ~80,000 characters)."""

KNOWN_MARKERS: tuple[str, ...] = (
    "HER2", "ER", "PR", "Ki-67", "AR", "ESR1", "PIK3CA", "BRCA1", "BRCA2", "PALB2", "ATM", "HRD",
    "EGFR", "ALK", "ROS1", "KRAS", "NRAS", "RAS", "BRAF", "MET", "RET", "NTRK", "HER2 mutation", "PD-L1",
    "MSI", "MMR", "TMB", "CLDN18.2", "FGFR2", "FGFR3", "IDH1", "IDH2", "KIT", "PDGFRA",
)
"""Canonical biomarker names (the case schema's, as interventions' filters spell them)."""

def _squash(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def check_marker(path: str | Path, name: str, entry: str | None, field: str) -> None:
    """Refuse a biomarker name that is not canonical, naming the nearest canonical one."""
    if name in KNOWN_MARKERS:
        return
    same = [m for m in KNOWN_MARKERS if _squash(m) == _squash(name)]
    near = same or difflib.get_close_matches(name.upper(), [m.upper() for m in KNOWN_MARKERS], n=1, cutoff=0.5)
    if near and not same:
        near = [m for m in KNOWN_MARKERS if m.upper() == near[0]]
    hint = f"; did you mean '{near[0]}'?" if near else f"; known markers: {', '.join(KNOWN_MARKERS)}"
    raise CatalogError(
        path, f"unknown marker name '{name}' (interventions match canonical names exactly){hint}", entry=entry, field=field
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
    from clinical_cf.catalog.css.interventions import Intervention, ReplaceOp

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
    from clinical_cf.catalog.css.schema import load_cases

    cases = load_cases(path)
    check_cases(path, cases)
    return cases


def load_checked_interventions(path: str | Path) -> Any:
    """An intervention catalog validated against the schema and the checks above (what the CSS tasks read)."""
    from clinical_cf.catalog.css.interventions import load_catalog

    if not isinstance(load_yaml(path), dict):  # syntax errors with their line, before the schema loader
        raise CatalogError(path, "top level must be a mapping with 'interventions'")
    catalog = load_catalog(path)
    check_interventions(path, catalog)
    return catalog
