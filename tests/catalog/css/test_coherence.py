"""Coherence for imported cases and controls that cannot change a packet (issue 22)."""

from clinical_cf.catalog.css import CATALOG_PATH
from clinical_cf.catalog.css.expand import expand_tuples
from clinical_cf.catalog.css.interventions import load_catalog
from clinical_cf.catalog.css.schema import SECTIONS, Case

CATALOG = load_catalog(CATALOG_PATH)

# A bullet-point e-mail from a registrar (a style no earlier fixture uses), kept whole in one section.
EMAIL = """Hi all - one for Thursday's board please.
- 58M, biopsy 10 Feb 2026: metastatic gastric adenocarcinoma, HER2 0, liver mets.
- No systemic therapy yet, PS 1.
- Q: first-line FOLFOX with nivolumab?"""


def _case(text: str, board: str = "2026-03-05") -> Case:
    return Case.model_validate(
        {
            "case_id": "email-1", "cancer_type": "gastric", "sex": "M", "age": 58, "stage": "IV", "metastatic": True,
            "resected": False, "prior_lines": 0, "biomarkers": {"HER2": "negative"}, "board_date": board,
            "sections": {name: (text if name == "overview" else "") for name in SECTIONS},
            "consensus": [{"treatment": "FOLFOX with nivolumab", "label": "tacit"}],
        }
    )


def test_an_injected_first_line_that_would_start_before_the_packets_own_diagnosis_is_dropped_as_incoherent():
    expansion = expand_tuples([_case(EMAIL)], CATALOG, "regex", families=["B"])
    counts = expansion.counts["B1_first_line_progression"]
    assert counts.incoherent == 1 and counts.scored == 0
    assert "before the packet's diagnosis (2026-02-10)" in counts.incoherent_reasons[0]
    # Diagnosed long enough before the board, the same edit fits and is scored.
    later = expand_tuples([_case(EMAIL.replace("10 Feb 2026", "10 Feb 2025"))], CATALOG, "regex", families=["B"])
    assert later.counts["B1_first_line_progression"].scored == 1


def test_a_section_order_control_on_a_one_section_packet_is_a_no_op():
    expansion = expand_tuples([_case(EMAIL)], CATALOG, "regex", families=["N"])
    assert expansion.counts["N3_section_order"].noop == 1
    assert "N3_section_order" not in {t.intervention.id for t in expansion.tuples}


def test_a_later_scan_that_denies_distant_disease_goes_with_new_metastases():
    # Meeting minutes (a style no earlier fixture uses); the denial is wrapped over two lines.
    minutes = (
        "HEAD & NECK MDT - outcome record\n57 y.o. male. Staging: cT2 cN1 M0, stage II. PET-CT 2 March 2026: no distant\n"
        "disease.\nOutcome: curative chemoradiotherapy with weekly cisplatin."
    )
    case = _case(minutes, board="2026-03-11").model_copy(update={"cancer_type": "head_and_neck", "stage": "II", "metastatic": False})
    expansion = expand_tuples([case], CATALOG, "regex", families=["E"])
    (t,) = expansion.tuples
    assert "no distant" not in t.counterfactual.text and "curative" not in t.counterfactual.text
    assert "stage IV" in t.counterfactual.text and not t.residue
