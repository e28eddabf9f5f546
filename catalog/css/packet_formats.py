"""Structured packets (a FHIR JSON bundle, a CSV export) read as data: one statement per resource or row.

Issue 43. A FHIR bundle pasted into the importer as text is one long JSON document: patterns read across resources
(a marker's name in one Observation, "negative" in the next) and no line names a meeting together with its date. Read
as data, each resource becomes one statement that keeps its own fields together: a Patient's `gender` is the sex
field, a Condition's codes and text are the diagnosis line, each `stage` entry is "its type: its summary" (the stage at
diagnosis apart from the current one), an Observation is "its code: its value", an Encounter is its type and its date.
A CSV export becomes "column: value" statements, one row per line. What is not structured is returned unchanged.
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any

SKIPPED_KEYS = frozenset({"resourceType", "id", "fullUrl", "reference", "system", "url", "meta", "subject", "patient", "intent",
                          "identifier"})
"""FHIR keys that carry identity and plumbing, not clinical statements."""
VALUE_KEYS = ("valueString", "valueCodeableConcept", "valueQuantity", "valueBoolean", "valueInteger", "interpretation")
MAX_DEPTH = 12


def _leaves(node: Any, depth: int = 0) -> list[str]:
    """The text a FHIR element holds: its `text`/`display`/`code` strings and other string leaves, in order."""
    if depth > MAX_DEPTH:
        return []
    if isinstance(node, str):
        return [node] if node.strip() else []
    if isinstance(node, bool | int | float):
        return [str(node)]
    if isinstance(node, list):
        return [leaf for item in node for leaf in _leaves(item, depth + 1)]
    if isinstance(node, dict):
        if isinstance(node.get("text"), str) and node["text"].strip():
            # A CodeableConcept's text says what its codings say; its codes are kept (ICD-10, ICD-O decide the type).
            codes = [c.get("code") for c in node.get("coding", []) if isinstance(c, dict) and isinstance(c.get("code"), str)]
            return [node["text"], *codes]
        out = []
        for key, value in node.items():
            if key in SKIPPED_KEYS:
                continue
            out.extend(_leaves(value, depth + 1))
        return out
    return []


def _resource_line(resource: dict[str, Any]) -> list[str]:
    kind = str(resource.get("resourceType", "Resource"))
    if kind == "Patient":
        parts = [f"Sex: {resource['gender']}"] if isinstance(resource.get("gender"), str) else []
        if isinstance(resource.get("birthDate"), str):
            parts.append(f"DOB: {resource['birthDate']}")
        return ["; ".join(parts)] if parts else []
    if kind == "Observation":
        name = " ".join(_leaves(resource.get("code", {})))
        value = " ".join(leaf for key in VALUE_KEYS for leaf in _leaves(resource.get(key)))
        when = resource.get("effectiveDateTime")
        # "EGFR negativo" says its marker; a bare value ("negative") is said with the marker's name.
        said = value if name and name in value else f"{name}: {value}"
        return [said + (f" ({when})" if isinstance(when, str) else "")]
    lines = []
    if kind == "Condition":
        lines.append("Diagnosis: " + "; ".join(_leaves(resource.get("code", {}))) +
                     (f" (onset {resource['onsetDateTime']})" if isinstance(resource.get("onsetDateTime"), str) else ""))
        for stage in resource.get("stage", []) if isinstance(resource.get("stage"), list) else []:
            label = " ".join(_leaves(stage.get("type", {}))) if isinstance(stage, dict) else ""
            summary = " ".join(_leaves(stage.get("summary", {}))) if isinstance(stage, dict) else ""
            lines.append(f"{label or 'Stage'}: {summary}")
        rest = {k: v for k, v in resource.items() if k not in ("code", "stage", "onsetDateTime")}
        extra = _leaves(rest)
        return lines + (["Condition: " + "; ".join(extra)] if extra else [])
    leaves = _leaves(resource)
    return [f"{kind}: " + "; ".join(leaves)] if leaves else []


def _resources(doc: Any) -> list[dict[str, Any]] | None:
    if isinstance(doc, dict) and doc.get("resourceType") == "Bundle":
        return [e["resource"] for e in doc.get("entry", []) if isinstance(e, dict) and isinstance(e.get("resource"), dict)]
    if isinstance(doc, dict) and isinstance(doc.get("resourceType"), str):
        return [doc]
    if isinstance(doc, list) and doc and all(isinstance(r, dict) and "resourceType" in r for r in doc):
        return doc
    return None


def fhir_statements(text: str) -> list[str] | None:
    """A FHIR resource, list or Bundle as statements (one or more per resource); None when the text is not FHIR JSON."""
    stripped = text.strip()
    if not stripped.startswith(("{", "[")):
        return None
    try:
        doc = json.loads(stripped)
    except (json.JSONDecodeError, RecursionError):
        return None
    resources = _resources(doc)
    if resources is None:
        return None
    return [line for resource in resources for line in _resource_line(resource) if line.strip()]


def csv_statements(text: str) -> list[str] | None:
    """A CSV (or ;/tab separated) table as "column: value" statements; None when the text is not a consistent table.

    A two-column table headed field/value (or any two columns) is one statement per row ("Diagnosis: glioblastoma"); a
    wider table is one statement per row with each column named.
    """
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) < 3:
        return None
    try:
        dialect = csv.Sniffer().sniff("\n".join(lines[:20]), delimiters=",;\t")
    except csv.Error:
        return None
    rows = [row for row in csv.reader(io.StringIO("\n".join(lines)), dialect) if any(cell.strip() for cell in row)]
    width = len(rows[0])
    if width < 2 or any(len(row) != width for row in rows) or any(len(cell) > 60 for cell in rows[0]):
        return None  # prose with commas: rows of different widths, or a "header" that is a sentence
    header, body = rows[0], rows[1:]
    if width == 2:
        start = body if [c.strip().lower() for c in header] in (["field", "value"], ["key", "value"], ["item", "value"]) else rows
        return [f"{key.strip()}: {value.strip()}" for key, value in start]
    return ["; ".join(f"{name.strip()}: {cell.strip()}" for name, cell in zip(header, row, strict=True) if cell.strip()) for row in body]


def as_statements(text: str) -> tuple[str, list[str]]:
    """The packet's text as the importer reads it: structured inputs as statements, with a note; other text unchanged."""
    for kind, reader in (("FHIR JSON", fhir_statements), ("CSV table", csv_statements)):
        found = reader(text)
        if found:
            return "\n".join(found) + "\n", [f"read as a {kind}: {len(found)} statement(s), one per resource or row"]
    return text, []
