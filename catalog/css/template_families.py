"""`catalog template` for every family (issue 43): A-E for a user's own cancer type and marker.

The marker flip (family A, `interventions.intervention_template`) was the only family a user could author; a board on
a glioblastoma also turns on progression on the running line (B), a marker's result removed (C), the resection removed
or added (D) and new metastases (E). This module adds those four to the template, each with the filter, the edit
patterns, the residue vocabulary and the editor's instruction written, and `<TODO ...>` where only the clinician can
answer (the expected change, scope, source, the operation's name, the sites of spread). Status words beyond
"positive" (methylated, amplified, wild-type, imaging-positive) and the result words of the five languages the
importer reads (`context_rules.py`) are in the flip's patterns, so "promoteur MGMT méthylé" is flipped too.
"""

from __future__ import annotations

import re

import yaml

from clinical_cf.catalog.css.assertions import OPERATION_WORDS, _alternation, _words
from clinical_cf.catalog.css.interventions import PLACEHOLDER, intervention_template

FAMILIES = "ABCDE"
RUNNING = r"(?i)\b(?:ongoing|on-?going|en cours|laufend|en curso|in corso)\b"
"""A line stated as running, in the five languages the importer reads."""
TODO = PLACEHOLDER + ": {}>"


def _todo(what: str) -> str:
    return TODO.format(what)


def _scope() -> dict:
    return {"holds": _todo("the setting, line and subtype where the expected change holds"),
            "source": _todo("guideline or trial, with year and section")}


def _clinician_fields() -> dict:
    return {"expected_change": _todo("what the board should now recommend instead"),
            "rationale": _todo("why this change decides the board for this cancer type"),
            "source": _todo("guideline or trial, with year and section")}


def _implications(marker: str, key: str, cancer_type: str) -> dict:
    operation = OPERATION_WORDS.replace("|surgery|operation)", ")")
    return {
        f"{key}_reported": {
            "fact": f"a {marker} result is reported",
            "rationale": "A statement of the result survives a strip of the result.",
            "terms": [{"kind": "status", "pattern": rf"\b{re.escape(marker)}\b"}],
        },
        f"{cancer_type}_unresected": {
            "fact": "the primary is in place",
            "rationale": "After a definitive operation no statement that the primary is unresected or awaits surgery stands.",
            "terms": [{"kind": "status", "negatable": False, "pattern": r"(?i)\b(?:unresected|not (?:yet )?resected|awaiting surgery|"
                       r"non opéré|nicht operiert|no operado|non operato)\b"}],
        },
        f"{cancer_type}_ongoing_line": {
            "fact": "a line of systemic therapy is running",
            "rationale": "After progression on it the line is no longer running.",
            "terms": [{"kind": "history", "pattern": r"(?i)\b(?:ongoing|on-?going|currently (?:on|receiving)|continues (?:on|with)|"
                       r"en cours|laufend|en curso|in corso)\b"}],
        },
        f"{cancer_type}_resected": {
            "fact": "the primary was removed by a definitive operation",
            "rationale": "Without the operation no statement of it, its margins or its pathology can stand.",
            "terms": [{"kind": "history", "pattern": operation, "unless": r"(?i)biops\w*|Biopsie"}],
        },
        f"{cancer_type}_non_metastatic": {
            "fact": "no distant metastases",
            "rationale": "New distant metastases contradict a statement that there are none.",
            "terms": [{"kind": "staging", "negatable": False,
                       "pattern": r"(?i)\bno (?:evidence of )?distant (?:metasta\w*|disease|spread)|\bnon-?metastatic\b|\bM0\b"}],
        },
    }


def _family_b(cancer_type: str) -> dict:
    return {
        "id": f"U_progression_on_current_line_{cancer_type}", "family": "B",
        "title": f"Progression on the line now running ({cancer_type})",
        "applies_to": {"cancer_types": [cancer_type], "min_prior_lines": 1, "packet_matches": RUNNING},
        "dates": {"scan_date": -10}, "scope": _scope(),
        "mutation": [
            {"op": "replace", "pattern": RUNNING,
             "replacement": "stopped {scan_date} for progressive disease"},
            {"op": "insert", "section": "encounters",
             "text": "{scan_date} Restaging MRI/CT: progressive disease on the current systemic therapy."},
        ],
        "residue": [f"{cancer_type}_ongoing_line"], "residue_since": "scan_date",
        "edit_instruction": "Add that restaging on {scan_date} shows progressive disease on the regimen now running and that "
        "it was stopped; rewrite every statement that it is ongoing. Write no recommendation. Change nothing else.",
        "edit_sections": ["diagnoses", "medications", "encounters", "overview"],
        "expect_after": [r"(?i)progress"], **_clinician_fields(),
    }


def _family_c(cancer_type: str, marker: str, key: str) -> dict:
    return {
        "id": f"U_strip_{key}_{cancer_type}", "family": "C", "title": f"{marker} result removed ({cancer_type})",
        "applies_to": {"cancer_types": [cancer_type], "biomarkers": {marker: ["positive", "negative"]}}, "scope": _scope(),
        "mutation": [{"op": "delete_statements", "implications": [f"{key}_reported"]}],
        "residue": [f"{key}_reported"],
        "edit_instruction": f"Remove every statement of the {marker} result (report, summaries, tables, the board question) so "
        f"the packet no longer says whether {marker} was tested. Change nothing else.",
        "edit_sections": ["diagnoses", "biomarkers", "encounters", "overview"], **_clinician_fields(),
    }


def _family_d(cancer_type: str) -> list[dict]:
    removed = {
        "id": f"U_remove_resection_{cancer_type}", "family": "D", "title": f"Resection removed ({cancer_type})",
        "applies_to": {"cancer_types": [cancer_type], "resected": True}, "scope": _scope(),
        "mutation": [{"op": "delete_statements", "implications": [f"{cancer_type}_resected"]}],
        "residue": [f"{cancer_type}_resected"],
        "edit_instruction": "Remove the definitive operation and everything that follows from it (its pathology, margins, "
        "post-operative visits); a diagnostic biopsy stays. Change nothing else.",
        "edit_sections": ["diagnoses", "procedures", "encounters", "overview"], **_clinician_fields(),
    }
    added = {
        "id": f"U_add_resection_{cancer_type}", "family": "D", "title": f"Resection added ({cancer_type})",
        "applies_to": {"cancer_types": [cancer_type], "resected": False, "metastatic": False}, "dates": {"surgery_date": -21},
        "scope": _scope(),
        "mutation": [{"op": "insert", "section": "procedures",
                      "text": "{surgery_date}: " + _todo(f"the definitive operation for {cancer_type}") + ", complete resection (R0)."}],
        "residue": [f"{cancer_type}_unresected"],
        "edit_instruction": "Add that the definitive operation was done on {surgery_date} with a complete resection, and "
        "rewrite statements that the primary is in place or awaits surgery. Change nothing else.",
        "edit_sections": ["diagnoses", "procedures", "encounters", "overview"], **_clinician_fields(),
    }
    return [removed, added]


def _family_e(cancer_type: str, sites: list[str]) -> dict:
    where = " and ".join(sites) if sites else _todo(f"the sites {cancer_type} spreads to")
    return {
        "id": f"U_new_metastases_{cancer_type}", "family": "E", "title": f"New distant metastases ({cancer_type})",
        "applies_to": {"cancer_types": [cancer_type], "metastatic": False}, "dates": {"scan_date": -20}, "scope": _scope(),
        "mutation": [{"op": "insert", "section": "encounters", "text": "{scan_date} Staging CT: new metastases in " + where + "."}],
        "residue": [f"{cancer_type}_non_metastatic"], "residue_since": "scan_date",
        "edit_instruction": "Add that staging on {scan_date} shows new distant metastases in " + where + ", and rewrite every "
        "later statement that there is no distant disease. Write no recommendation. Change nothing else.",
        "edit_sections": ["diagnoses", "encounters", "overview"], "expect_after": [r"(?i)metasta"], **_clinician_fields(),
    }


def status_words(positive_word: str | None) -> str:
    """The result words a flip reads as "the marker is altered": the user's own, English and the languages' words."""
    words = [*([positive_word] if positive_word else []), "detected", "positive", "present", "identified", *_words("positive")]
    return _alternation(sorted(set(words), key=lambda w: (-len(w), w)))


def catalog_template(cancer_type: str, marker: str, agents: list[str], families: str = FAMILIES, sites: list[str] | None = None,
                     positive_word: str | None = None, negative_word: str | None = None) -> str:
    """The template catalog with one intervention per family asked for (A-E)."""
    unknown = set(families) - set(FAMILIES)
    if unknown or not families:
        raise ValueError(f"--families {families!r}: letters of {FAMILIES}")
    text = intervention_template(cancer_type, marker, agents)
    header = [line for line in text.splitlines() if line.startswith("#")]
    raw = yaml.safe_load(text)
    key = re.sub(r"[^a-z0-9]+", "_", marker.lower()).strip("_")
    cancer_type = raw["interventions"][0]["applies_to"]["cancer_types"][0]
    flip = raw["interventions"][0]
    result = status_words(positive_word)
    for op in flip["mutation"]:
        if op["op"] == "replace" and "not detected" in op.get("replacement", ""):
            op["pattern"] = op["pattern"].replace(r"(?:detected|positive|present|identified)", f"(?:{result})")
            if negative_word:
                op["replacement"] = op["replacement"].replace("not detected", negative_word)
    for term in raw["implications"][f"{key}_positive"]["terms"]:
        term["pattern"] = term["pattern"].replace(r"(?:detected|positive|present|identified)", f"(?:{result})")
    raw["interventions"] = [flip] if "A" in families else []
    raw["implications"].update(_implications(marker, key, cancer_type))
    if "B" in families:
        raw["interventions"].append(_family_b(cancer_type))
    if "C" in families:
        raw["interventions"].append(_family_c(cancer_type, marker, key))
    if "D" in families:
        raw["interventions"].extend(_family_d(cancer_type))
    if "E" in families:
        raw["interventions"].append(_family_e(cancer_type, sites or []))
    raw["description"] = f"Interventions for {cancer_type} written by the user (families {families})."
    body = yaml.safe_dump(raw, sort_keys=False, allow_unicode=True, width=120)
    return "\n".join(header) + "\n" + body
