"""Structured mode: the intervention changes the record and reaches every section that states the fact."""

import re
from datetime import timedelta

from clinical_cf.catalog.css import CASES_PATH, CATALOG_PATH
from clinical_cf.catalog.css.expand import expand_tuples, mode_differences
from clinical_cf.catalog.css.interventions import load_catalog
from clinical_cf.catalog.css.mutate import apply_regex, apply_structured
from clinical_cf.catalog.css.review_classes import encounter_blocks
from clinical_cf.catalog.css.schema import load_cases

CASES = load_cases(CASES_PATH)
CATALOG = load_catalog(CATALOG_PATH)


def first_case(intervention_id: str):
    item = CATALOG.by_id(intervention_id)
    return next(c for c in CASES if item.applies_to.matches(c)), item


def test_her2_flip_reaches_every_section():
    case, item = first_case("A1_her2_positive_to_negative")
    text = apply_structured(case, item).text
    assert not re.search(r"HER2[- ]?positive|HER2\+|HER2 3\+|HER-2/neu amplified|overexpressed", text)
    for section in ("biomarkers", "diagnoses", "overview"):
        assert "HER2" in apply_structured(case, item).sections[section]


def test_biomarker_strip_removes_every_mention():
    case, item = first_case("C2_strip_nsclc_drivers")
    text = apply_structured(case, item).text
    for marker in ("EGFR", "ALK", "PD-L1", "KRAS"):
        assert marker not in text
    assert "not available" in text


def test_removed_resection_leaves_no_surgery_and_no_adjuvant_line():
    case, item = first_case("D1_remove_resection")
    procedure = case.record.resection.procedure
    packet = apply_structured(case, item)
    assert procedure not in packet.text
    assert "Operative note" not in packet.text and "R0 resection" not in packet.text
    assert not re.search(r"\b(?<!neo)adjuvant\b", packet.sections["medications"])
    # Regex mode is the paper's: facts it cannot reach stay behind (incomplete propagation).
    assert apply_regex(case, item).text != packet.text


def test_injected_progression_appears_in_medications_encounters_and_overview():
    case, item = first_case("B1_first_line_progression")
    packet = apply_structured(case, item)
    regimen = item.template_values(case)["regimen"]
    for section in ("medications", "encounters", "overview"):
        assert regimen in packet.sections[section], section
    assert "progressi" in packet.sections["overview"].lower()


def test_upstaging_rewrites_the_current_stage_everywhere_and_dates_the_metastases():
    case, item = first_case("E1_upstage_to_metastatic")
    packet = apply_structured(case, item)
    found = case.board_date + timedelta(days=-20)
    # The stage now is IV everywhere; a stage I-III statement survives only as the stage at diagnosis, or in a
    # note written before the metastases were found (catalog v4: the record dates them).
    stage_i_iii = re.compile(r"\b[Ss]tage (?:I{1,3}|[123])[A-C]?\b(?![^;)]*at diagnosis)")
    current = [packet.sections[name] for name in packet.sections if name != "encounters"]
    current += [text for when, _, text in encounter_blocks(packet.sections["encounters"]) if when >= found]
    assert not [t for t in current if stage_i_iii.search(t)]
    assert any(stage_i_iii.search(text) for when, _, text in encounter_blocks(packet.sections["encounters"]) if when < found)
    assert "liver" in packet.sections["diagnoses"] and "liver" in packet.sections["overview"]
    assert "metastatic disease involving liver (multiple lesions) and lung" in packet.sections["encounters"]
    assert f"documented {found.isoformat()}" in packet.sections["overview"]
    # The scan that found them and the biopsy that proved them are in the chart on their dates.
    assert f"[{found.isoformat()}] Radiology" in packet.sections["encounters"] and "IR-guided liver biopsy" in packet.sections["encounters"]


def test_first_line_progression_fits_the_history_in_structured_mode_and_is_dropped_in_regex_mode():
    structured = expand_tuples(CASES, CATALOG, "structured", families="B").counts["B1_first_line_progression"]
    regex = expand_tuples(CASES, CATALOG, "regex", families="B").counts["B1_first_line_progression"]
    # Structured: the history moves earlier (shift_history), so a 170-day first line starts after the diagnosis
    # and the documented metastases. Regex cannot move a chart's dates: a de novo case diagnosed weeks ago, or a
    # recurrence found 9 days ago, cannot have failed 24 weeks of therapy: dropped, counted by invariant.
    assert structured.scored == structured.eligible and structured.incoherent == 0
    assert regex.incoherent > 0 and set(regex.invariants) <= {"dates_run_forward", "treatment_follows_diagnosis", "marker_after_test"}
    assert regex.invariants["treatment_follows_diagnosis"] == regex.incoherent
    assert regex.eligible == regex.scored + regex.incoherent + regex.noop + regex.residue


def test_modes_differ_and_the_difference_is_reported():
    # Family N (neutral edits): some tuples read the same in both modes, others do not, so a count that
    # reported every tuple (or none) as differing fails here.
    diff = mode_differences(CASES[:40], CATALOG, families="N")
    regex = {t.id: t.counterfactual.text for t in expand_tuples(CASES[:40], CATALOG, "regex", families="N").tuples}
    structured = {t.id: t.counterfactual.text for t in expand_tuples(CASES[:40], CATALOG, "structured", families="N").tuples}
    assert diff["tuples_regex"] == len(regex) and diff["tuples_structured"] == len(structured)
    assert diff["only_regex"] == len(regex.keys() - structured.keys())
    assert diff["only_structured"] == len(structured.keys() - regex.keys())
    assert 0 < diff["differ"] == sum(regex.get(i) != structured.get(i) for i in regex.keys() | structured.keys()) < len(regex)
    # D (resection toggled): structured mode re-renders every section that states the resection, so no D tuple
    # reads as its regex twin.
    d = mode_differences(CASES[:40], CATALOG, families="D")
    assert d["tuples_regex"] == d["tuples_structured"] == d["differ"] > 0
