"""Structured mode: the intervention changes the record and reaches every section that states the fact."""

import re

from clinical_cf.catalog.css import CASES_PATH, CATALOG_PATH
from clinical_cf.catalog.css.expand import expand_tuples
from clinical_cf.catalog.css.interventions import load_catalog
from clinical_cf.catalog.css.mutate import apply_regex, apply_structured
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


def test_upstaging_rewrites_stage_everywhere():
    case, item = first_case("E1_upstage_to_metastatic")
    packet = apply_structured(case, item)
    assert not re.search(r"\b[Ss]tage (?:I{1,3}|[123])[A-C]?\b", packet.text)
    assert "liver" in packet.sections["diagnoses"] and "liver" in packet.sections["overview"]
    assert "metastatic disease involving liver and lung" in packet.sections["encounters"]


def test_incoherent_counterfactuals_are_dropped_and_counted():
    expansion = expand_tuples(CASES, CATALOG, "structured", families="B")
    b1 = expansion.counts["B1_first_line_progression"]
    # A de novo metastatic case diagnosed weeks ago cannot have failed 24 weeks of therapy.
    assert b1.incoherent > 0 and all("before diagnosis" in r for r in b1.incoherent_reasons)
    assert b1.eligible == b1.scored + b1.incoherent + b1.noop


def test_modes_differ_and_the_difference_is_reported():
    from clinical_cf.catalog.css.expand import mode_differences

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
