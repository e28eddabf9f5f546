"""The case schema's cancer types: a synonym is read as its canonical type (and said so), a near-miss is refused.

`cancer_type: "colon"` once validated silently and then no colorectal intervention applied to the case:
every colorectal-only intervention names `colorectal` in its `applies_to`.
"""

import json
from pathlib import Path

import pytest

from clinical_cf.catalog.css import CASES_PATH, CATALOG_PATH
from clinical_cf.catalog.css.assertions import CANCER_WORDS
from clinical_cf.catalog.css.expand import expand_tuples
from clinical_cf.catalog.css.interventions import load_catalog
from clinical_cf.catalog.css.schema import BUNDLED_CANCER_TYPES, KNOWN_CANCER_TYPES, case_notes, load_cases
from clinical_cf.cli import main
from clinical_cf.core.errors import CatalogError
from helpers import HANDWRITTEN_CASES

CATALOG = load_catalog(CATALOG_PATH)
RECORDS = [json.loads(line) for line in HANDWRITTEN_CASES.read_text().splitlines() if line.strip()]
COLORECTAL = next(r for r in RECORDS if r["cancer_type"] == "colorectal")


def written(tmp_path, cancer_type: str, record: dict = COLORECTAL):
    path = tmp_path / "mine.jsonl"
    path.write_text(json.dumps({**record, "cancer_type": cancer_type}) + "\n")
    return path


@pytest.mark.parametrize("given", ["colon", "rectal", "CRC", "mCRC", "Colorectal", "colon cancer", "large-bowel"])
def test_a_colorectal_synonym_gets_the_colorectal_interventions(given, tmp_path):
    path = written(tmp_path, given)
    (case,) = load_cases(path)
    assert case.cancer_type == "colorectal"
    applied = {t.intervention.id for t in expand_tuples([case], CATALOG, "regex").tuples}
    assert "C3_strip_colorectal_markers" in applied, applied


@pytest.mark.parametrize("given, canonical", [("lung", "nsclc"), ("NSCLC", "nsclc"), ("non-small cell lung", "nsclc"),
                                              ("stomach", "gastric"), ("PDAC", "pancreatic"), ("esophageal", "oesophageal"),
                                              ("kidney", "renal"), ("urothelial", "bladder"), ("HNSCC", "head_and_neck")])
def test_other_synonyms_map_to_the_canonical_type(given, canonical, tmp_path):
    # Stage IVA head and neck cancer is locoregionally advanced, not metastatic: the record's M1 needs IVC there.
    record = {**COLORECTAL, "biomarkers": {}, **({"stage": "IVC"} if canonical == "head_and_neck" else {})}
    (case,) = load_cases(written(tmp_path, given, record))
    assert case.cancer_type == canonical


def test_validation_says_which_synonym_it_read(tmp_path, capsys):
    path = written(tmp_path, "colon")
    assert case_notes(path) == [f"line 1 (case '{COLORECTAL['case_id']}'), field 'cancer_type': 'colon' read as 'colorectal'"]
    for argv in (["cases", "validate", str(path)], ["validate", str(path)]):
        assert main(argv) == 0
        out = capsys.readouterr().out
        assert "mine.jsonl" in out and "'colon' read as 'colorectal'" in out and "field 'cancer_type'" in out, out


@pytest.mark.parametrize("given, nearest", [("colorectl", "colorectal"), ("braest", "breast"), ("pancreatc", "pancreatic")])
def test_a_misspelt_type_is_refused_with_the_nearest_one(given, nearest, tmp_path, capsys):
    path = written(tmp_path, given)
    with pytest.raises(CatalogError) as info:
        load_cases(path)
    message = str(info.value)
    assert "mine.jsonl" in message and info.value.field == "cancer_type" and info.value.entry == COLORECTAL["case_id"]
    assert f"did you mean '{nearest}'" in message and "breast, nsclc" in message, message
    assert main(["cases", "validate", str(path)]) == 2
    assert f"did you mean '{nearest}'" in capsys.readouterr().err


def test_a_type_outside_the_list_is_still_accepted(tmp_path):
    """Open vocabulary (issue 22): applicability follows the facts; only type-specific interventions need the type."""
    (case,) = load_cases(written(tmp_path, "sarcoma", {**COLORECTAL, "biomarkers": {}}))
    assert case.cancer_type == "sarcoma"


def test_bundled_cases_are_read_unchanged_and_without_notes():
    raw = [json.loads(line)["cancer_type"] for line in CASES_PATH.read_text().splitlines() if line.strip()]
    assert [c.cancer_type for c in load_cases(CASES_PATH)] == raw
    assert case_notes(CASES_PATH) == [] and case_notes(HANDWRITTEN_CASES) == []


def test_every_type_the_catalog_names_is_a_known_canonical_type():
    named = set()
    for item in CATALOG.interventions:
        named |= set(item.applies_to.cancer_types or [])
    text = CATALOG_PATH.read_text()
    assert named and named <= set(KNOWN_CANCER_TYPES), named - set(KNOWN_CANCER_TYPES)
    assert all(f"{t}" in text for t in named)
    # Issue 43: one vocabulary - every type the importer can pre-fill is accepted by the schema, and docs/inputs.md names it.
    assert set(CANCER_WORDS) <= set(KNOWN_CANCER_TYPES), set(CANCER_WORDS) - set(KNOWN_CANCER_TYPES)
    assert set(KNOWN_CANCER_TYPES) <= named | set(CANCER_WORDS) | set(BUNDLED_CANCER_TYPES)
    docs = (Path(__file__).parents[3] / "docs" / "inputs.md").read_text()
    assert all(f"`{t}`" in docs for t in KNOWN_CANCER_TYPES), [t for t in KNOWN_CANCER_TYPES if f"`{t}`" not in docs]
