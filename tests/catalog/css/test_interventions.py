"""Catalog validation: every error names the file, the intervention id and the field."""

from pathlib import Path

import pytest
import yaml

from clinical_cf.catalog.css import CATALOG_PATH
from clinical_cf.catalog.css.interventions import load_catalog
from clinical_cf.core.errors import CatalogError

GOOD_ENTRY = {
    "id": "X1_test",
    "family": "A",
    "title": "test",
    "applies_to": {"cancer_types": ["breast"]},
    "mutation": [{"op": "replace", "pattern": "HER2 3\\+", "replacement": "HER2 1+"}],
    "expected_change": "Drops HER2-directed agents.",
    "rationale": "HER2 status drives HER2-directed therapy.",
    "source": "NCCN Breast v.2026",
}


def write_catalog(tmp_path: Path, **overrides) -> Path:
    entry = {**GOOD_ENTRY, **overrides}
    entry = {k: v for k, v in entry.items() if v is not None}
    doc = {
        "version": 1,
        "name": "t",
        "description": "t",
        "scoring_rule": "1 = updated, 0.5 = acknowledged, 0 = unchanged",
        "interventions": [entry],
    }
    path = tmp_path / "catalog.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def test_bundled_catalog_has_fourteen_interventions_across_a_to_e_plus_controls():
    catalog = load_catalog(CATALOG_PATH)
    families = [i.family for i in catalog.interventions]
    # Twelve until catalog v3 (issue 22) added B3 castration resistance and C4 melanoma BRAF.
    assert sum(f in "ABCDE" for f in families) == 14
    assert set(families) == set("ABCDEN")
    assert families.count("N") >= 2
    for item in catalog.interventions:
        assert item.source and item.rationale and item.expected_change


@pytest.mark.parametrize(
    "overrides, field, words",
    [
        ({"mutation": [{"op": "replace", "pattern": "HER2 (3\\+", "replacement": "x"}]}, "pattern", "invalid regex"),
        ({"family": "Z"}, "family", "'A'"),
        ({"expected_change": None}, "expected_change", "Field required"),
        ({"mutation": [{"op": "shuffle", "pattern": "x"}]}, "mutation", "shuffle"),
        # Open vocabulary since issue 22: "lymphoma" is a valid type; a name that is not a lower-case identifier is not.
        ({"applies_to": {"cancer_types": ["Non-Hodgkin lymphoma"]}}, "cancer_types", "should match pattern"),
        ({"mutation": [{"op": "insert", "section": "imaging", "text": "x"}]}, "section", "imaging"),
        ({"expected_change": "Moves past {regimen} quickly."}, "(entry)", "unknown template field '{regimen}'"),
        ({"structured": [{"op": "teleport"}]}, "(entry)", "unknown op 'teleport'"),
    ],
)
def test_invalid_entry_names_file_entry_and_field(tmp_path, overrides, field, words):
    path = write_catalog(tmp_path, **overrides)
    with pytest.raises(CatalogError) as info:
        load_catalog(path)
    message = str(info.value)
    assert str(path) in message
    assert "entry 'X1_test'" in message
    assert field in (info.value.field or "")
    assert words in message


def test_duplicate_ids_are_rejected(tmp_path):
    path = write_catalog(tmp_path)
    doc = yaml.safe_load(path.read_text())
    doc["interventions"].append(dict(doc["interventions"][0]))
    path.write_text(yaml.safe_dump(doc))
    with pytest.raises(CatalogError, match="duplicate intervention id"):
        load_catalog(path)


def test_not_yaml_is_a_clear_error(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("interventions: [unclosed")
    with pytest.raises(CatalogError, match="not valid YAML"):
        load_catalog(path)
