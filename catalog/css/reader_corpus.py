"""The reader audit's corpus (`catalog/css/reader_audit_replies.yaml`): replies in many formats, each with its known reading.

`clinical_cf.tasks.css_reader_audit` asks the reader role to read each; this module validates the corpus and
turns it into samples.
"""

from __future__ import annotations

from pathlib import Path

from inspect_ai.dataset import Sample

from clinical_cf.catalog.css import CSS_DIR
from clinical_cf.core.errors import CatalogError
from clinical_cf.core.loading import load_yaml

CORPUS = CSS_DIR / "reader_audit_replies.yaml"
SUITES = ("css", "agent", "medpic", "workflow", "sensitivity")
"""The suites whose replies a reader reads (judge verdicts are read by contract only and are not audited here)."""
REQUIRED = {"medpic": "options", "sensitivity": "candidates"}


def load_corpus(path: str | Path = CORPUS) -> list[Sample]:
    """The corpus's reader-read replies as samples; errors name the file, the entry and the field."""
    path = Path(path)
    raw = load_yaml(path)
    if not isinstance(raw, list):
        raise CatalogError(path, "expected a list of replies (id, suite, format, reply, truth)")
    samples, seen = [], set()
    for i, entry in enumerate(raw):
        if not isinstance(entry, dict):
            raise CatalogError(path, f"entry {i} is not a mapping")
        name = str(entry.get("id") or f"[{i}]")
        for key in ("id", "suite", "format", "reply", "truth"):
            if key not in entry:
                raise CatalogError(path, f"entry {name}: missing field '{key}'")
        if name in seen:
            raise CatalogError(path, f"duplicate id {name}")
        seen.add(name)
        if entry["suite"] not in (*SUITES, "judge"):
            raise CatalogError(path, f"entry {name}: field 'suite' is {entry['suite']!r}, not one of {', '.join((*SUITES, 'judge'))}")
        if entry["suite"] == "judge":
            continue
        extra = REQUIRED.get(entry["suite"])
        if extra and not entry.get(extra):
            raise CatalogError(path, f"entry {name}: missing field '{extra}'")
        samples.append(Sample(
            id=name, input=str(entry["reply"])[:2000], target=str(entry["truth"]),
            metadata={k: entry.get(k) for k in ("suite", "format", "cls", "reply", "truth", "final", "options", "candidates")},
        ))
    if not samples:
        raise CatalogError(path, "no reply a reader reads (suites css, agent, medpic, workflow, sensitivity)")
    return samples
