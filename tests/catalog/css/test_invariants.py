"""Clinical invariants on the record: each rule catches its defect, no bundled baseline breaks one, no scored tuple does."""

import re
from datetime import timedelta

import pytest

from clinical_cf.catalog.css import CASES_PATH, CATALOG_PATH
from clinical_cf.catalog.css.expand import expand_tuples
from clinical_cf.catalog.css.interventions import load_catalog
from clinical_cf.catalog.css.invariants import RULE_IDS, RULES, violations
from clinical_cf.catalog.css.mutate import apply_structured_ops
from clinical_cf.catalog.css.schema import Case, TreatmentLine, load_cases

CASES = load_cases(CASES_PATH)
BY_ID = {c.case_id: c for c in CASES}


def _edit(case: Case, **record) -> Case:
    return case.model_copy(update={"record": case.record.model_copy(update=record)})


def _rules(case: Case) -> set[str]:
    return {v.rule for v in violations(case)}


def test_every_rule_states_its_clinical_reason():
    assert len(RULES) == len(set(RULE_IDS)) == 22
    assert all(len(rule.reason) > 60 for rule in RULES)


def test_no_bundled_baseline_breaks_an_invariant():
    broken = {c.case_id: [str(v) for v in violations(c)] for c in CASES if violations(c)}
    assert broken == {}


def _recurrence() -> Case:
    return next(c for c in CASES if c.record.metastasis_date is not None and c.cancer_type == "colorectal")


def test_first_line_therapy_before_the_documented_recurrence_is_caught():
    case = _recurrence()
    early = TreatmentLine(regimen="FOLFOX + bevacizumab", setting="first-line metastatic", start=case.record.metastasis_date - timedelta(days=150),
                          end=case.board_date - timedelta(days=14), outcome="progression")
    assert "treatment_follows_diagnosis" in _rules(_edit(case, treatment_lines=[*case.record.treatment_lines, early]))


def test_metastases_at_diagnosis_then_curative_surgery_is_caught():
    case = _recurrence()
    # The v1 cohort: no dated recurrence, so the case was stage IV from the diagnosis and then had an R0 resection.
    old = _edit(case, metastasis_date=None, initial_stage=None)
    assert "stage_m_intent_agree" in _rules(old)


def test_curative_goals_while_metastatic_are_caught():
    case = next(c for c in CASES if c.metastatic and c.record.metastasis_date is None)
    encounters = [e.model_copy(update={"note": e.note + " Goals of care: cure if possible."}) for e in case.record.encounters]
    assert "stage_m_intent_agree" in _rules(_edit(case, encounters=encounters))


def test_pathology_without_its_operation_is_caught():
    melanoma = next(c for c in CASES if c.cancer_type == "melanoma" and c.resected)
    assert "pathology_after_resection" in _rules(_edit(melanoma.model_copy(update={"resected": False}), resection=None))
    prostate = next(c for c in CASES if c.cancer_type == "prostate" and c.record.resection and c.record.resection.margin == "R1")
    r0 = prostate.record.resection.model_copy(update={"margin": "R0"})
    assert "pathology_after_resection" in _rules(_edit(prostate, resection=r0))


def test_an_operation_that_does_not_fit_the_site_is_caught():
    tail = next(c for c in CASES if c.cancer_type == "pancreatic" and c.resected and c.record.primary_site != "pancreatic head")
    whipple = tail.record.resection.model_copy(update={"procedure": "pancreaticoduodenectomy (Whipple)"})
    assert "operation_fits_site" in _rules(_edit(tail, resection=whipple))


def test_a_drug_without_its_marker_is_caught():
    tnbc = next(c for c in CASES if c.cancer_type == "breast" and any("KEYNOTE-522" in t.regimen for t in c.record.treatment_lines))
    flipped = tnbc.model_copy(update={"biomarkers": {**tnbc.biomarkers, "HER2": "positive"}})
    assert "drug_needs_marker" in _rules(flipped)


def test_a_drug_started_before_its_marker_result_is_caught():
    case = next(c for c in CASES if any("letrozole" in t.regimen for t in c.record.treatment_lines) and c.cancer_type == "breast")
    late = [b.model_copy(update={"date": case.board_date - timedelta(days=1)}) if b.name in ("ER", "PR") else b for b in case.record.biomarkers]
    assert "marker_after_test" in _rules(_edit(case, biomarkers=late))


@pytest.mark.slow  # expands the whole cohort (several seconds)
def test_the_default_task_scores_no_tuple_that_breaks_an_invariant():
    catalog = load_catalog(CATALOG_PATH)
    expansion = expand_tuples(CASES, catalog, families="ABCDE")
    assert {t.route for t in expansion.tuples} == {"structured"}
    for t in expansion.tuples:
        assert violations(apply_structured_ops(t.case, t.intervention)) == [], t.id
    # And what they dropped is counted per rule, never silently.
    drops = expansion.invariant_drops()
    assert set(drops) <= set(RULE_IDS) and sum(c.incoherent for c in expansion.counts.values()) > 0


# ----------------------------------------------------------------- the second review's classes (issue 34)


def _resected(cancer_type: str, **where) -> Case:
    return next(c for c in CASES if c.cancer_type == cancer_type and c.resected and not c.metastatic
                and all(getattr(c.record, k) == v for k, v in where.items()))


def test_a_node_count_against_its_n_is_caught():
    gastric = next(c for c in CASES if c.cancer_type == "gastric" and c.resected and c.record.tnm.startswith("pT3"))
    # The review's css-gastric-002: "pT3N2 (1/28 LN)" (AJCC 8 gastric N2 is 3-6 nodes).
    wrong = gastric.record.resection.model_copy(update={"pathology": "pT3 pN2 (1/28 LN), R0", "nodes_positive": 1, "nodes_examined": 28})
    assert "n_from_node_count" in _rules(_edit(gastric, resection=wrong, tnm="pT3N2M0"))
    nsclc = next(c for c in CASES if c.cancer_type == "nsclc" and c.resected and "N0" in c.record.tnm)
    one = nsclc.record.resection.model_copy(update={"pathology": "pT2b pN0 (1/16 LN), margins negative", "nodes_positive": 1})
    assert "n_from_node_count" in _rules(_edit(nsclc, resection=one))


def test_a_sentinel_node_biopsy_after_node_positive_staging_is_caught():
    breast = next(c for c in CASES if c.cancer_type == "breast" and c.resected and not c.record.treatment_lines and "N1a" in c.record.tnm)
    assert "n_from_node_count" in _rules(_edit(breast, tnm="cT2N1M0"))


def test_a_typed_stage_group_is_caught():
    gastric = next(c for c in CASES if c.cancer_type == "gastric" and c.resected and c.record.tnm == "pT3N2M0")
    assert "stage_group_computed" in _rules(gastric.model_copy(update={"stage": "IIIB"}))  # AJCC 8: pT3N2 is IIIA
    gg5 = next(c for c in CASES if c.cancer_type == "prostate" and not c.resected and not c.metastatic and "Grade Group 5" in c.record.histology)
    assert gg5.stage == "IIIC"
    assert "stage_group_computed" in _rules(gg5.model_copy(update={"stage": "IIIA"}))


def test_an_m1_subcategory_not_from_the_sites_is_caught():
    melanoma = next(c for c in CASES if c.cancer_type == "melanoma" and "brain" in c.record.metastatic_sites and c.record.metastasis_date is None)
    assert "M1d" in melanoma.record.tnm
    assert "m_from_sites" in _rules(_edit(melanoma, tnm=melanoma.record.tnm.replace("M1d", "M1b")))


def test_a_post_treatment_stage_at_diagnosis_is_caught():
    breast = next(c for c in CASES if c.cancer_type == "breast" and c.resected and c.record.tnm.startswith("pT") and not c.record.treatment_lines)
    assert "y_prefix_after_neoadjuvant" in _rules(_edit(breast, tnm="ypT1cN1aM0"))
    yp = breast.record.resection.model_copy(update={"pathology": "ypT1c ypN0 (0/3 SLN), margins negative"})
    assert "y_prefix_after_neoadjuvant" in _rules(_edit(breast, resection=yp))


def test_a_metastatic_marker_level_without_metastases_is_caught():
    colon = next(c for c in CASES if c.cancer_type == "colorectal" and not c.metastatic and not c.resected)
    labs = [lab.model_copy(update={"value": 150.2}) if lab.name == "CEA" else lab for lab in colon.record.labs]  # review: colorectal-012
    assert "marker_course" in _rules(_edit(colon, labs=labs))


def test_a_marker_falling_after_progression_is_caught():
    on_treatment = next(c for c in CASES if c.metastatic and any(t.outcome == "ongoing" for t in c.record.treatment_lines)
                        and c.cancer_type != "prostate")
    # The review's structured B2 before issue 34: the line ends with progression, the marker keeps its response.
    lines = [t.model_copy(update={"outcome": "progression", "end": on_treatment.board_date - timedelta(days=10)})
             if t.outcome == "ongoing" else t for t in on_treatment.record.treatment_lines]
    progressed = _edit(on_treatment, treatment_lines=lines)
    assert "marker_course" in _rules(progressed)
    b2 = next(iv for iv in load_catalog(CATALOG_PATH).interventions if iv.id.startswith("B2"))
    assert "marker_course" not in _rules(apply_structured_ops(on_treatment, b2))


def test_an_aromatase_inhibitor_before_menopause_without_ovarian_suppression_is_caught():
    young = next(c for c in CASES if c.cancer_type == "breast" and c.record.menopausal_status == "premenopausal"
                 and any("palbociclib" in t.regimen for t in c.record.treatment_lines))
    lines = [t.model_copy(update={"regimen": "letrozole + palbociclib"}) if "palbociclib" in t.regimen else t for t in young.record.treatment_lines]
    assert "menopause_endocrine" in _rules(_edit(young, treatment_lines=lines))  # the review's css-breast-025
    assert "menopause_endocrine" not in _rules(young)


def test_a_marker_positive_case_treated_as_marker_negative_is_caught():
    her2 = next(c for c in CASES if c.cancer_type == "breast" and c.record.metastasis_date is not None and c.biomarkers.get("HER2") == "positive"
                and c.biomarkers.get("ER") == "positive")
    adjuvant = [t for t in her2.record.treatment_lines if t.setting == "adjuvant"]
    assert any("trastuzumab" in t.regimen for t in adjuvant) and any(re.search("letrozole|exemestane", t.regimen) for t in adjuvant)
    without_endocrine = [t for t in her2.record.treatment_lines if not re.search("letrozole|exemestane", t.regimen)]
    assert "drug_needs_marker" in _rules(_edit(her2, treatment_lines=without_endocrine))  # the review's css-breast-020
    hr = next(c for c in CASES if c.cancer_type == "breast" and c.record.metastasis_date is not None and c.biomarkers.get("HER2") == "negative"
              and any(t.setting == "adjuvant" and "letrozole" in t.regimen for t in c.record.treatment_lines))
    flipped = hr.model_copy(update={"biomarkers": {**hr.biomarkers, "HER2": "positive"}})
    assert "drug_needs_marker" in _rules(flipped)  # the review's css-breast-024:A2: adjuvant letrozole alone in HER2+ disease
