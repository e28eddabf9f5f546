"""Regex mutations on hand-written packets (wording the generator never produces)."""

import pytest

from clinical_cf.catalog.css import CATALOG_PATH
from clinical_cf.catalog.css.interventions import Intervention, load_catalog
from clinical_cf.catalog.css.mutate import Packet, apply_regex
from clinical_cf.catalog.css.schema import load_cases
from helpers import HANDWRITTEN_CASES

CASES = {c.case_id: c for c in load_cases(HANDWRITTEN_CASES)}
CATALOG = load_catalog(CATALOG_PATH)


def intervention(**fields) -> Intervention:
    base = {
        "id": "T",
        "family": "A",
        "title": "t",
        "applies_to": {},
        "expected_change": "something changes",
        "rationale": "a test intervention",
        "source": "test",
    }
    return Intervention.model_validate({**base, **fields})


def test_replace_uses_backreferences_and_every_section():
    case = CASES["fx-breast-1"]
    item = intervention(mutation=[{"op": "replace", "pattern": r"(HER2)\+", "replacement": r"\g<1>-"}])
    packet = apply_regex(case, item)
    assert "HER2-" in packet.sections["overview"]
    assert packet.sections["biomarkers"] == case.sections["biomarkers"]


def test_delete_is_limited_to_named_sections():
    case = CASES["fx-breast-1"]
    item = intervention(mutation=[{"op": "delete", "pattern": r"Ki-67 \d+%\.?", "sections": ["overview"]}])
    packet = apply_regex(case, item)
    assert "Ki-67 45%" in packet.sections["biomarkers"]
    assert packet == Packet(dict(case.sections))  # overview has no Ki-67: a no-op


def test_insert_fills_date_and_value_templates():
    case = CASES["fx-lung-1"]
    item = intervention(
        dates={"when": -14},
        values={"drug": [{"when": {"cancer_types": ["breast"]}, "value": "letrozole"}, {"value": "docetaxel"}]},
        mutation=[{"op": "insert", "section": "encounters", "text": "{when}: progression on {drug}."}],
    )
    packet = apply_regex(case, item)
    assert packet.sections["encounters"].endswith("2025-07-18: progression on docetaxel.")


def test_reorder_changes_only_the_presentation_order():
    case = CASES["fx-lung-1"]
    order = [
        "overview",
        "encounters",
        "labs",
        "vitals",
        "procedures",
        "medications",
        "biomarkers",
        "diagnoses",
        "allergies",
        "demographics",
    ]
    packet = apply_regex(case, intervention(mutation=[{"op": "reorder", "order": order}]))
    assert packet.sections == dict(case.sections)
    assert packet.text.index("=== OVERVIEW ===") < packet.text.index("=== DEMOGRAPHICS ===")


def test_her2_flip_reaches_fish_ratio_and_narrative_wording():
    packet = apply_regex(CASES["fx-breast-1"], CATALOG.by_id("A1_her2_positive_to_negative"))
    assert "HER-2/neu not amplified by FISH (HER2/CEP17 ratio 1.2)" in packet.sections["biomarkers"]
    assert "HER2-negative, HR-negative" in packet.sections["encounters"]
    assert "HER2+" not in packet.text


def test_pdl1_flip_handles_tps_and_adjectives():
    packet = apply_regex(CASES["fx-lung-1"], CATALOG.by_id("A4_pdl1_high_to_negative"))
    assert "TPS 90%" not in packet.text
    assert "PD-L1 (22C3) TPS <1%" in packet.sections["biomarkers"]
    assert "PD-L1 high" not in packet.text


def test_receptor_strip_keeps_heart_rate_and_other_facts():
    packet = apply_regex(CASES["fx-breast-1"], CATALOG.by_id("C1_strip_receptor_status"))
    text = packet.text
    for gone in ("HER-2", "HER2", "ER 0%", "PgR", "ER-/PR-"):
        assert gone not in text
    assert "HR 72" in text  # heart rate, not hormone receptor
    assert "Ki-67 45%" in text
    assert "stage IIA" in text


def test_remove_resection_rewrites_procedures_and_status_post():
    packet = apply_regex(CASES["fx-pancreas-1"], CATALOG.by_id("D1_remove_resection"))
    assert "Pancreaticoduodenectomy" not in packet.sections["procedures"]
    assert "No oncologic resection to date" in packet.sections["procedures"]
    assert "s/p Whipple" not in packet.text
    assert "ypT2N1" not in packet.text and "cT2N1" in packet.text


def test_date_control_rewrites_us_dated_packets_without_changing_a_date():
    case = CASES["fx-breast-1"]  # written with MM/DD/YYYY dates
    packet = apply_regex(case, CATALOG.by_id("N1_date_format"))
    assert packet != Packet(dict(case.sections))
    assert "2025-03-02" not in case.packet and "05/12/2025" in case.packet
    # 05/12/2025 reads as 12 May or 5 Dec: only its separator changes, so neither reading is lost.
    assert "05-12-2025" in packet.text and "05/12/2025" not in packet.text


@pytest.mark.parametrize(
    "intervention_id, phrase, expected",
    [
        ("A1_her2_positive_to_negative", "HER2/neu 3+ (IHC)", "HER2/neu 1+ (IHC)"),
        ("A1_her2_positive_to_negative", "Her-2 positive by FISH", "Her-2 negative by FISH"),
        ("A1_her2_positive_to_negative", "HER2-amplified IDC", "HER2-negative IDC"),
        ("A1_her2_positive_to_negative", "triple positive (ER+/PR+/HER2+)", "HR-positive, HER2-negative (ER+/PR+/HER2-)"),
        ("A2_her2_negative_to_positive", "HER2-neg", "HER2-positive"),
        ("A2_her2_negative_to_positive", "FISH: no HER2 amplification (ratio 1.1)", "FISH: HER2 amplification (ratio 4.1)"),
        ("A3_hormone_receptor_positive_to_negative", "ER 95%, PR 80%", "ER <1%, PR <1%"),
        ("A3_hormone_receptor_positive_to_negative", "estrogen receptor: positive (90%)", "estrogen receptor: negative (<1%)"),
        ("A3_hormone_receptor_positive_to_negative", "ER positive (Allred 8/8)", "ER negative (Allred 0)"),
        ("A4_pdl1_high_to_negative", "PD-L1 22C3 TPS ≥50%", "PD-L1 22C3 TPS <1%"),
        ("A4_pdl1_high_to_negative", "PD-L1 expression 80%", "PD-L1 expression <1%"),
        ("D1_remove_resection", "status-post right upper lobectomy", "is being evaluated for right upper lobectomy"),
        ("D1_remove_resection", "post Whipple procedure", "pending Whipple procedure"),
        ("D1_remove_resection", "resected pT3N1 disease", "unresected cT3N1 disease"),
        ("E1_upstage_to_metastatic", "AJCC stage IIIA (pT2N2M0)", "AJCC stage IV (pT2N2M1)"),
        ("E1_upstage_to_metastatic", "cT2N1M0, no distant metastases", "cT2N1M1."),
    ],
)
def test_regexes_read_wording_the_generator_never_writes(intervention_id, phrase, expected):
    case = CASES["fx-breast-1"]
    case = case.model_copy(update={"sections": {**case.sections, "overview": phrase}})
    assert apply_regex(case, CATALOG.by_id(intervention_id)).sections["overview"] == expected
