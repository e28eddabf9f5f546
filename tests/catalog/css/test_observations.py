"""Observation perturbations: validation, how each op changes a tool return, applicability."""

import pytest
import yaml
from inspect_ai.tool import ToolError

from clinical_cf.catalog.css.observations import OBSERVATIONS_PATH, load_observations
from clinical_cf.catalog.css.schema import load_cases
from clinical_cf.core.errors import CatalogError
from clinical_cf.core.locking import read_lock
from helpers import HANDWRITTEN_CASES

BY_ID = {p.id: p for p in load_observations()}


def test_bundled_catalog_covers_the_three_kinds_and_is_locked():
    assert {p.kind for p in BY_ID.values()} == {"noise", "contradiction", "tool_failure"}
    assert read_lock(OBSERVATIONS_PATH).registered


def test_append_is_applied_to_its_section_only():
    noise = BY_ID["O1_haemolysed_specimen"]
    assert noise.perturb("labs", "Na 140", 0).endswith("no repeat requested.")
    assert noise.perturb("labs", "Na 140", 3).endswith("no repeat requested.")  # times: always
    assert noise.perturb("vitals", "BP 120/80", 0) == "BP 120/80"


def test_failure_happens_once_then_the_read_succeeds():
    failure = BY_ID["O3_biomarkers_timeout"]
    with pytest.raises(ToolError, match="timeout"):
        failure.perturb("biomarkers", "HER2 3+", 0)
    assert failure.perturb("biomarkers", "HER2 3+", 1) == "HER2 3+"


def test_contradiction_rewrites_the_overview_and_needs_a_resected_case():
    contradiction = BY_ID["O2_overview_denies_surgery"]
    text = "52F ...\nSurgery: s/p Whipple on 2025-01-14 (R0 resection).\nNo prior systemic therapy."
    assert "Surgery: no cancer-directed surgery to date." in contradiction.perturb("overview", text, 0)
    cases = {c.case_id: c for c in load_cases(HANDWRITTEN_CASES)}
    # The hand-written overviews have no "Surgery:" line: the replacement would change nothing.
    assert not contradiction.applies(cases["fx-pancreas-1"])


def test_invalid_entry_names_file_entry_and_field(tmp_path):
    doc = yaml.safe_load(OBSERVATIONS_PATH.read_text())
    doc["perturbations"][1]["op"] = "scramble"
    path = tmp_path / "obs.yaml"
    path.write_text(yaml.safe_dump(doc))
    with pytest.raises(CatalogError) as info:
        load_observations(path)
    assert "obs.yaml" in str(info.value) and "O2_overview_denies_surgery" in str(info.value) and info.value.field == "op"
