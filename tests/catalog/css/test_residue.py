"""The residue check: a counterfactual that still asserts or presupposes the original fact is caught."""

from datetime import date

import pytest

from clinical_cf.catalog.css.dates import entry_dates, find_dates, reformat_dates
from clinical_cf.catalog.css.expand import expand_tuples
from clinical_cf.catalog.css.interventions import load_catalog
from clinical_cf.catalog.css.mutate import apply_regex
from clinical_cf.catalog.css.residue import find_residue
from clinical_cf.catalog.css.schema import SECTIONS, load_cases
from clinical_cf.catalog.css import CATALOG_PATH
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
    from clinical_cf.catalog.css import CASES_PATH

    expansion = expand_tuples(load_cases(CASES_PATH), CATALOG, "structured")
    assert sum(c.residue for c in expansion.counts.values()) == 0


def test_dates_in_clinician_forms_are_found_and_reformatted_without_changing_meaning():
    text = "seen 7th March 2025, scan Mar 9, 2025, bx 2025-03-11, f/u 31.03.2025, dx 02/2025"
    assert [d.value for d in find_dates(text)] == [
        date(2025, 3, 7), date(2025, 3, 9), date(2025, 3, 11), date(2025, 3, 31), date(2025, 2, 1)
    ]
    out = reformat_dates(text)
    assert "2025-03-07" in out and "2025-03-09" in out and "03/11/2025" in out and "Feb 2025" in out
    assert reformat_dates("on 04/06/2025") == "on 04-06-2025"  # April 6 or 4 June: both readings kept
    assert entry_dates("12/01/2025 clinic\nnote text\n\nHEADING\nmore") [:2] == [date(2025, 12, 1)] * 2
