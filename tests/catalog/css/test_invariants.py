"""Clinical invariants on the record: each rule catches its defect, no bundled baseline breaks one, no scored tuple does."""

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
    assert len(RULES) == len(set(RULE_IDS)) == 13
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
