"""The residue check: a counterfactual that still asserts or presupposes the original fact is caught."""

from datetime import date

import pytest

from clinical_cf.catalog.css import CASES_PATH, CATALOG_PATH
from clinical_cf.catalog.css.dates import entry_dates, find_dates, numeric_order, reformat_dates
from clinical_cf.catalog.css.expand import expand_tuples
from clinical_cf.catalog.css.interventions import load_catalog
from clinical_cf.catalog.css.mutate import apply_regex
from clinical_cf.catalog.css.residue import find_residue
from clinical_cf.catalog.css.schema import SECTIONS, load_cases
from tests.helpers import HANDWRITTEN_CASES

CATALOG = load_catalog(CATALOG_PATH)
CASES = {c.case_id: c for c in load_cases(HANDWRITTEN_CASES)}


def _sections(**given: str) -> dict[str, str]:
    return {name: given.get(name, "") for name in SECTIONS}


def _lines(intervention_id: str, board: date = date(2025, 6, 1), **sections: str) -> list[str]:
    return [h.line for h in find_residue(_sections(**sections), CATALOG.by_id(intervention_id), board)]


@pytest.mark.parametrize(
    "intervention_id, section, line",
    [
        ("A1_her2_positive_to_negative", "encounters", "MDT: commence Herceptin q21d with docetaxel"),
        ("A1_her2_positive_to_negative", "biomarkers", "c-erbB-2 overexpressed on repeat core"),
        ("A3_hormone_receptor_positive_to_negative", "medications", "Anastrozole 1 mg once a day"),
        ("A4_pdl1_high_to_negative", "overview", "For single-agent cemiplimab"),
        ("B1_first_line_progression", "overview", "Chemo-naive, performance status 1"),
        ("D1_remove_resection", "labs", "CEA 3.0 on POD 5"),
        ("D1_remove_resection", "diagnoses", "ypT3 ypN1b after chemoradiotherapy"),
        ("D2_add_resection", "overview", "Awaiting surgical referral for hemicolectomy"),
        ("E1_upstage_to_metastatic", "overview", "Plan curative-intent chemoradiation"),
    ],
)
def test_a_line_that_still_presupposes_the_fact_is_residue(intervention_id, section, line):
    assert _lines(intervention_id, **{section: line}) == [line]


@pytest.mark.parametrize(
    "intervention_id, section, line",
    [
        ("A1_her2_positive_to_negative", "overview", "Trastuzumab is not indicated."),
        ("A1_her2_positive_to_negative", "biomarkers", "HER2 IHC 1+, FISH non-amplified"),
        ("A3_hormone_receptor_positive_to_negative", "biomarkers", "ER <1%, PR 0%"),
        ("B1_first_line_progression", "overview", "Second-line options reviewed"),
        ("D1_remove_resection", "vitals", "HR 88, BP 120/70"),
        ("D1_remove_resection", "procedures", "No surgery to date; lobectomy to be considered."),
        ("E1_upstage_to_metastatic", "encounters", "Completed adjuvant FOLFOX in 2019"),
    ],
)
def test_negated_planned_or_unrelated_lines_are_not_residue(intervention_id, section, line):
    assert _lines(intervention_id, **{section: line}) == []


def test_entries_written_before_the_injected_event_are_history_not_residue():
    # B1 injects a first line that started 170 days before the board.
    old = "2024-10-01 Med onc: no prior systemic therapy."
    recent = "2025-05-20 Med onc: no prior systemic therapy."
    assert _lines("B1_first_line_progression", encounters=old) == []
    assert _lines("B1_first_line_progression", encounters=recent) == [recent]


def test_a_residue_tuple_is_dropped_counted_and_kept_on_request():
    case = CASES["fx-breast-1"]
    # A prior course of trastuzumab in the history cannot be rewritten: the HER2 flip stays incoherent.
    case = case.model_copy(update={"sections": {**case.sections, "medications": "2019: trastuzumab x 1 yr, completed."}})
    dropped = expand_tuples([case], CATALOG, families="A")
    counts = dropped.counts["A1_her2_positive_to_negative"]
    assert (counts.residue, counts.scored) == (1, 0)
    assert dropped.dropped[0].residue[0].section == "medications"
    kept = expand_tuples([case], CATALOG, families="A", residue="keep")
    (t,) = [t for t in kept.tuples if t.intervention.id == "A1_her2_positive_to_negative"]
    assert t.verdict == "residue" and kept.counts["A1_her2_positive_to_negative"].scored == 1


def test_a_written_plan_that_presupposes_the_fact_is_removed_by_the_edit():
    case = CASES["fx-lung-1"]
    plan = "Recommend pembrolizumab monotherapy 200 mg q3w."
    case = case.model_copy(update={"sections": {**case.sections, "overview": case.sections["overview"] + " " + plan}})
    packet = apply_regex(case, CATALOG.by_id("A4_pdl1_high_to_negative"))
    assert "monotherapy" not in packet.text
    assert find_residue(packet.sections, CATALOG.by_id("A4_pdl1_high_to_negative"), case.board_date) == []


@pytest.mark.slow  # expands the whole cohort
def test_structured_mode_leaves_no_residue_on_the_bundled_cohort():
    expansion = expand_tuples(load_cases(CASES_PATH), CATALOG, "structured")
    assert sum(c.residue for c in expansion.counts.values()) == 0


def test_dates_in_clinician_forms_are_found_and_reformatted_without_changing_meaning():
    text = "seen 7th March 2025, scan Mar 9, 2025, bx 2025-03-11, f/u 31.03.2025, dx 02/2025"
    assert [d.value for d in find_dates(text)] == [
        date(2025, 3, 7), date(2025, 3, 9), date(2025, 3, 11), date(2025, 3, 31), date(2025, 2, 1)
    ]
    out = reformat_dates(text)
    # Issue 22: ISO becomes a month-name date, never MM/DD/YYYY (which is ambiguous where ISO was not).
    assert "2025-03-07" in out and "2025-03-09" in out and "11 Mar 2025" in out and "Feb 2025" in out
    assert reformat_dates("on 04/06/2025") == "on 04-06-2025"  # April 6 or 4 June: both readings kept
    assert entry_dates("12/01/2025 clinic\nnote text\n\nHEADING\nmore") [:2] == [date(2025, 12, 1)] * 2


def test_two_digit_years_dashes_and_month_year_entries_are_read():
    text = "Dec 25  MRI pelvis\n14.01.26  TLH BSO\n11/25  bleeding\nMDT 16-03-2026\nnodes 2/15 positive, seen Mar 15 in clinic"
    values = [(d.text, d.value) for d in find_dates(text)]
    assert values == [
        ("Dec 25", date(2025, 12, 1)), ("14.01.26", date(2026, 1, 14)), ("11/25", date(2025, 11, 1)), ("16-03-2026", date(2026, 3, 16))
    ]  # "2/15" (a node count) and "Mar 15" (a day without a year) are not dates mid-line
    uk = "Urology MDM 11/02/2026\nTURBT 08/01/2026\nCT 20/01/2026"
    assert numeric_order(uk) == "dmy"
    assert next(d.value for d in find_dates(uk, numeric_order(uk))) == date(2026, 2, 11)
    assert numeric_order("on 03/04/2026") is None and find_dates("on 03/04/2026")[0].ambiguous
    assert reformat_dates("Jan 26  histology") == "01/2026  histology"


def test_a_dated_statement_does_not_date_the_lines_after_it():
    section = "Mar 2025 started FOLFOX, tolerated well.\nPlan: continue FOLFOX and restage.\n[2025-04-01] Oncology clinic\nPt well.\nRestage in 8 weeks."
    assert entry_dates(section) == [date(2025, 3, 31), None,  # a month-precision date counts at its last day
    date(2025, 4, 1), date(2025, 4, 1), date(2025, 4, 1)]
    wrapped = "Feb 26  seen by surgeon - consented, radical hysterectomy planned after surgery\n        date confirmed\nMeds  iron"
    assert entry_dates(wrapped) == [date(2026, 2, 28), date(2026, 2, 28), None]
