"""Clinical assertions in imported packets (issue 35): a mention is read with its status, never as a finding by its words.

One packet per assertion type, each mentioning every deciding marker and procedure in that status, in several sections;
the importer must pre-fill none of them as a finding (0 wrong pre-fills), and show the status in the question.
"""

from __future__ import annotations

import pytest

from clinical_cf.catalog.css import CATALOG_PATH
from clinical_cf.catalog.css.assertions import marker_findings, pipeline, read_mentions
from clinical_cf.catalog.css.importer import import_packet
from clinical_cf.catalog.css.interventions import load_catalog

CATALOG = load_catalog(CATALOG_PATH)

HEAD = "LUNG MDT 10/03/2026\nPatient: 64-year-old man.\nDiagnosis: adenocarcinoma of the right upper lobe, stage IIIA (T2 N2 M0).\n"

NEGATED = HEAD + (
    "Molecular: No ALK fusion. EGFR exon 19 deletion not detected; BRAF V600E not detected; KRAS wild-type; ROS1 negative.\n"
    "Imaging: no evidence of thoracic or distant metastatic disease.\n"
    "Procedures: no surgery to date.\n"
    "Plan: concurrent chemoradiotherapy.\n"
)
UNCERTAIN = HEAD + (
    "Molecular: ALK fusion result pending; EGFR mutation awaited; KRAS G12C equivocal.\n"
    "Imaging: 5 mm liver lesion, ?metastases; adrenal metastasis cannot be excluded.\n"
    "Plan: concurrent chemoradiotherapy.\n"
)
HYPOTHETICAL = HEAD + (
    "Molecular: NGS sent.\n"
    "Plan: if ALK fusion is found, alectinib; if EGFR mutation is found, osimertinib; if KRAS G12C, sotorasib.\n"
    "If metastases are found on PET, systemic therapy.\n"
)
FAMILY = HEAD + (
    "Family history: sister with BRCA2 mutation; father with EGFR-mutant lung cancer; mother had breast cancer.\n"
    "Patient not tested for BRCA2.\n"
    "Plan: concurrent chemoradiotherapy.\n"
)
HISTORICAL = HEAD + (
    "PMH: cholecystectomy 2014 (gallstones); appendicectomy 1980.\n"
    "Previous ALK testing in 2019 on a different lesion was uninformative.\n"
    "Plan: concurrent chemoradiotherapy.\n"
)


def _prefilled(report, name):
    return report.questions.get(name, {}).get("value")


@pytest.mark.parametrize("text", [NEGATED, UNCERTAIN, HYPOTHETICAL, FAMILY, HISTORICAL],
                         ids=["negated", "uncertain", "hypothetical", "family", "historical"])
def test_no_mention_in_another_status_is_pre_filled_as_a_finding(text):
    report = import_packet(text, "x", CATALOG)
    for marker in ("ALK", "EGFR", "BRAF", "KRAS", "ROS1", "BRCA2"):
        assert _prefilled(report, f"biomarkers.{marker}") not in ("positive",), (marker, report.questions.get(f"biomarkers.{marker}"))
    assert _prefilled(report, "metastatic") is not True
    assert _prefilled(report, "resected") is not True
    assert _prefilled(report, "cancer_type") == "nsclc"


def test_negated_results_are_pre_filled_negative_with_their_quote_and_status():
    report = import_packet(NEGATED, "x", CATALOG)
    for marker in ("ALK", "EGFR", "BRAF", "KRAS", "ROS1"):
        q = report.questions[f"biomarkers.{marker}"]
        assert q["value"] == "negative", (marker, q)
        assert "(negated" in q["evidence"] and q["quote_verified"], q
    assert _prefilled(report, "metastatic") is False


def test_uncertain_hypothetical_and_family_mentions_are_asked_showing_their_status():
    for text, status in ((UNCERTAIN, "uncertain"), (HYPOTHETICAL, "hypothetical"), (FAMILY, "family")):
        report = import_packet(text, "x", CATALOG)
        marker = "EGFR" if text is FAMILY else "ALK"
        q = report.questions[f"biomarkers.{marker}"]
        assert q["value"] is None and status in q["evidence"], (status, q)


def test_not_tested_is_read_as_not_tested():
    report = import_packet(FAMILY, "x", CATALOG)
    assert report.questions["biomarkers.BRCA2"]["value"] == "not_tested"


def test_an_operation_on_another_organ_is_not_the_cancers_resection():
    report = import_packet(HISTORICAL, "x", CATALOG)
    assert _prefilled(report, "resected") is not True
    resected = import_packet(HEAD.replace("stage IIIA (T2 N2 M0)", "stage IB") + "Surgery: right upper lobectomy 02/02/2026.\n", "y", CATALOG)
    assert _prefilled(resected, "resected") is True


def test_the_primary_decides_the_type_not_a_site_of_spread_or_an_organ_word_of_a_histology_type():
    gist = import_packet("Gastric body mass. Histology: gastrointestinal stromal tumour (GIST), KIT exon 11 deletion detected.\n"
                         "CT: lung metastases.\n", "g", CATALOG)
    assert _prefilled(gist, "cancer_type") == "gist"
    cholangio = import_packet("Intrahepatic cholangiocarcinoma with lung metastases. 4 mm lung nodule, possibly inflammatory.\n"
                              "Board question: futibatinib for the FGFR2 fusion?\n", "c", CATALOG)
    assert _prefilled(cholangio, "cancer_type") == "cholangiocarcinoma"


def test_markers_the_board_turns_on_are_asked_even_without_a_schema_field():
    report = import_packet("Cholangiocarcinoma, stage IV. NGS: FGFR2-BICC1 fusion detected; IDH1 R132 not detected.\n"
                           "Registry: p53_ihc: aberrant; pole: not tested.\nBoard question: futibatinib?\n", "c", CATALOG)
    assert report.questions["biomarkers.FGFR2"]["value"] == "positive"
    assert report.questions["biomarkers.IDH1"]["value"] == "negative"
    assert report.questions["biomarkers.p53"]["value"] == "positive"
    assert report.questions["biomarkers.POLE"]["value"] == "not_tested"
    assert "biomarkers.BICC1" not in report.questions  # a fusion partner is not a marker of its own


def test_the_pipeline_is_built_once_and_long_text_is_bounded():
    assert pipeline() is pipeline()
    mentions, notes = read_mentions("No ALK fusion " * 20_000)  # one 280,000-character line, no full stop
    assert notes and all(m.status == "negated" for m in mentions if m.name == "ALK")
    assert marker_findings(mentions)["ALK"][0] == "negative"


def test_a_date_on_an_admin_line_is_not_the_board_date():
    report = import_packet("Cholangiocarcinoma, stage IV, FGFR2 fusion detected.\nSecond-line decision.\n"
                           "Admin: slides printed 15/04/2026 by MDT coordinator\nHPB MDT 2026-04-14: discussed.\n", "a", CATALOG)
    assert report.questions["board_date"]["value"] == "2026-04-14"
    assert import_packet("Seen 2026-04-10. NSCLC stage IV.\nPrinted 2026-04-20 by ward clerk.\n", "b",
                         CATALOG).questions["board_date"]["value"] == "2026-04-10"
