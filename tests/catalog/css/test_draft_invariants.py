"""What a regex draft inserts passes the record's invariants (issue 35): other diseases' stages untouched, the
histology's own words, a locoregional stage IV restaged as the M1 group, no event dated before the diagnosis."""

from __future__ import annotations

from clinical_cf.catalog.css import CATALOG_PATH
from clinical_cf.catalog.css.expand import expand_tuples
from clinical_cf.catalog.css.importer import answer_case, import_packet, pending_record
from clinical_cf.catalog.css.interventions import load_catalog

CATALOG = load_catalog(CATALOG_PATH)


def case_of(text: str, **answers):
    report = import_packet(text, "x", CATALOG)
    defaults = {"resected": False, "operation": "none", "prior_lines": 0, "consensus": "as written", "stage_date": "unknown"}
    _record, case, problems = answer_case(pending_record(report), {**defaults, **answers}, {"*"})
    assert case is not None, problems
    return case


def e1(case):
    expansion = expand_tuples([case], CATALOG, "regex", families="E", residue="keep")
    return expansion, {t.intervention.id: t for t in expansion.tuples}


def test_a_comorbidity_stage_is_left_as_written():
    case = case_of("Endometrial MDT 2026-01-20. 62-year-old woman. Comorbidity: COPD GOLD stage 2; CKD stage 3a.\n"
                   "Endometrioid endometrial carcinoma, FIGO stage IB, hysterectomy 2025-12-09.\n", resected=True,
                   operation="hysterectomy", board_date="2026-01-20", age=62)
    _, tuples = e1(case)
    text = tuples["E1_upstage_to_metastatic"].counterfactual.text
    assert "GOLD stage 2" in text and "CKD stage 3a" in text and "FIGO stage IV" in text


def test_a_gist_is_not_called_a_carcinoma_and_a_thyroid_ivb_becomes_ivc():
    gist = case_of("Sarcoma MDT 2026-02-26. 64-year-old man. Gastric GIST, KIT exon 11 deletion detected, stage II (T3 N0 M0),"
                   " diagnosed on biopsy 2025-12-01. CT: no metastases.\n", board_date="2026-02-26", age=64,
                   **{"biomarkers.KIT": "positive"})
    _, tuples = e1(gist)
    text = tuples["E1_upstage_to_metastatic"].counterfactual.text
    assert "gastrointestinal stromal tumour consistent with the known primary" in text and "metastatic carcinoma" not in text
    thyroid = case_of("Thyroid MDT 2026-03-09. 73-year-old man. Anaplastic thyroid carcinoma, core biopsy 2026-01-02, "
                      "T4b N1b M0, AJCC stage IVB; no distant metastases.\n", board_date="2026-03-09", age=73,
                      stage="IVB", metastatic=False)
    _, tuples = e1(thyroid)
    assert "AJCC stage IVC" in tuples["E1_upstage_to_metastatic"].counterfactual.text


def test_an_event_injected_before_the_diagnosis_is_incoherent_even_with_day_first_dates():
    case = case_of("Renal MDT 10/03/2026. 63-year-old man. Clear cell RCC diagnosed on biopsy 05/03/2026, stage II (T2 N0 M0).\n"
                   "CT 08/03/2026: no distant metastases.\n", board_date="2026-03-10", age=63)
    expansion, tuples = e1(case)
    assert "E1_upstage_to_metastatic" not in tuples
    assert "before the packet's diagnosis (2026-03-05)" in expansion.counts["E1_upstage_to_metastatic"].incoherent_reasons[0]
