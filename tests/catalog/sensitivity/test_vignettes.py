"""Vignettes and perturbations: deterministic generation, constraint rules, edits."""

import pytest

from clinical_cf.catalog.sensitivity import PERTURBATIONS_PATH, VIGNETTES_PATH
from clinical_cf.catalog.sensitivity.perturbations import load_perturbations
from clinical_cf.catalog.sensitivity.vignettes import load_vignettes, write_vignettes
from clinical_cf.core.errors import CatalogError
from clinical_cf.core.locking import read_lock

VIGNETTES = load_vignettes(VIGNETTES_PATH)
PERTURBATIONS = {p.id: p for p in load_perturbations(PERTURBATIONS_PATH)[0]}


def test_sixty_vignettes_regenerate_identically(tmp_path):
    assert len(VIGNETTES) >= 60 and len({v.presentation for v in VIGNETTES}) >= 10
    assert write_vignettes(tmp_path / "v.jsonl").read_bytes() == VIGNETTES_PATH.read_bytes()
    assert all(4 <= len(v.candidates) <= 6 and v.gold in v.candidates for v in VIGNETTES)
    assert len({v.candidates.index(v.gold) for v in VIGNETTES}) > 1  # gold is not always the same letter
    assert read_lock(PERTURBATIONS_PATH).registered


def test_pregnancy_is_never_injected_into_a_man_or_outside_plausible_ages():
    pregnancy = PERTURBATIONS["B2_pregnancy"]
    for v in VIGNETTES:
        reason = pregnancy.skip_reason(v)
        if v.sex == "M":
            assert reason == "requires sex F"
        elif not 18 <= v.age <= 45:
            assert reason == "age outside the plausible range"


def test_each_edit_changes_only_what_it_says():
    v = next(v for v in VIGNETTES if v.presentation == "pe")
    assert PERTURBATIONS["S1_synonym"].apply(v).render() == v.render().replace(v.complaint, v.complaint_synonym)
    assert v.supporting_sign in PERTURBATIONS["M1_add_supporting_sign"].apply(v).render()
    assert v.removable_finding not in PERTURBATIONS["M2_remove_key_finding"].apply(v).render()
    assert "apixaban" in PERTURBATIONS["B3_anticoagulation"].apply(v).render()
    assert v.duration_long in PERTURBATIONS["T1_long_history"].apply(v).render()
    assert PERTURBATIONS["T1_long_history"].expected_for(v) == "down"


def test_bad_perturbation_names_file_entry_and_field(tmp_path):
    text = PERTURBATIONS_PATH.read_text().replace("op: reorder", "op: shuffle")
    path = tmp_path / "p.yaml"
    path.write_text(text)
    with pytest.raises(CatalogError) as info:
        load_perturbations(path)
    assert "p.yaml" in str(info.value) and "S3_finding_order" in str(info.value) and info.value.field == "op"
