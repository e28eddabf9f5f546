"""`clinical-cf cases import`: a clinician's packet text becomes a case, every inference listed."""

import json
from pathlib import Path

import pytest

from clinical_cf.catalog.css import CATALOG_PATH
from clinical_cf.catalog.css.importer import import_packet, split_sections
from clinical_cf.catalog.css.interventions import load_catalog
from clinical_cf.catalog.css.schema import Case, case_json_schema, load_cases
from clinical_cf.cli import main

CATALOG = load_catalog(CATALOG_PATH)
TEXT = Path(__file__).parents[2] / "fixtures" / "packets" / "text"


def test_a_headed_letter_is_split_and_its_filter_fields_inferred():
    report = import_packet((TEXT / "mdt-gastric.txt").read_text(), "g1", CATALOG)
    case = report.case
    assert case is not None, report.missing
    assert (case.cancer_type, case.sex, case.age, case.stage) == ("gastric", "M", 73, "III")
    assert (case.metastatic, case.resected, case.prior_lines) == (False, False, 0)  # "Surgery: none yet"
    assert case.biomarkers["HER2"] == "positive" and case.biomarkers["MSI"] == "negative"
    assert str(case.board_date) == "2026-03-04"
    assert "bisoprolol" in case.sections["medications"] and "Hb 121" in case.sections["labs"]


def test_a_note_without_headings_stays_whole_and_says_so():
    report = import_packet((TEXT / "lung-note-no-headings.txt").read_text(), "l1", CATALOG)
    assert any("one section" in n for n in report.notes)
    case = report.case
    assert case is not None and case.sections["overview"].startswith("Seen today")
    assert case.stage == "IV" and case.metastatic and case.prior_lines == 1  # on first-line osimertinib
    assert case.biomarkers["EGFR"] == "positive" and case.biomarkers["PD-L1"] == "5%"


def test_what_cannot_be_inferred_is_listed_and_kept_out_of_the_cases_file(tmp_path, capsys):
    out = tmp_path / "cases.jsonl"
    rc = main(["cases", "import", str(TEXT / "batch.jsonl"), str(TEXT / "mdt-gastric.txt"), "--out", str(out)])
    assert rc == 1
    printed = capsys.readouterr().out
    assert "could not infer: cancer_type" in printed and "inferred stage" in printed
    cases = load_cases(out)  # what was written validates
    assert {c.case_id for c in cases} == {"crc-01", "mdt-gastric"}
    todo = [json.loads(line) for line in (tmp_path / "cases.todo.jsonl").read_text().splitlines()]
    assert [d["case_id"] for d in todo] == ["unknown-1"]


def test_percent_markers_and_user_consensus_without_driver_validate():
    case = Case.model_validate(
        {
            "case_id": "u1", "cancer_type": "nsclc", "sex": "F", "age": 60, "stage": "IVA", "metastatic": True,
            "resected": False, "prior_lines": 0, "biomarkers": {"PD-L1": "80%", "Ki-67": "30%", "EGFR": "negative"},
            "board_date": "2025-01-01", "sections": dict.fromkeys(split_sections("x")[0], ""),
            "consensus": [{"treatment": "pembrolizumab", "label": "strong"}],
        }
    )
    assert case.marker_status("PD-L1") == "positive" and case.marker_status("Ki-67") == "equivocal"
    assert CATALOG.by_id("A4_pdl1_high_to_negative").applies_to.matches(case)
    with pytest.raises(ValueError):
        Case.model_validate({**case.model_dump(mode="json"), "biomarkers": {"PD-L1": "lots"}})
    schema = case_json_schema()
    consensus = schema["$defs"]["ConsensusTreatment"]
    assert set(consensus["required"]) == {"treatment", "label"}
    assert "biomarkers" in schema["required"]


def test_cases_validate_lists_every_problem_of_every_line_in_one_run(tmp_path, capsys):
    from tests.helpers import HANDWRITTEN_CASES

    rows = [json.loads(line) for line in HANDWRITTEN_CASES.read_text().splitlines()]
    rows[0]["stage"] = "stage 2"
    rows[0]["consensus"][0]["label"] = "preferred"
    rows[1]["age"] = 7
    path = tmp_path / "mine.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n{not json\n")
    assert main(["cases", "validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert "stage 2" in err and "preferred" in err and "line 2" in err and "'age'" in err and "not JSON" in err
    assert "4 problem(s)" in err


def test_import_reads_other_styles_quotes_evidence_and_asks_instead_of_guessing():
    # A tumour-board minute in a style no earlier fixture uses: a planned cystectomy, a UK date order
    # settled by another date, sex and age as "male, 66", a cancer type outside the bundled eight.
    minutes = (
        "Urology MDM minutes 11/02/2026\nPatient 2: male, 66, ex-smoker.\n"
        "TURBT 08/01/2026: high-grade urothelial carcinoma invading muscularis propria.\n"
        "Imaging: CT 20/01/2026 - cT2 N0 M0, stage II.\n"
        "Outcome: neoadjuvant gemcitabine and cisplatin then radical cystectomy after neoadjuvant chemotherapy."
    )
    report = import_packet(minutes, "b1", CATALOG)
    assert report.draft["cancer_type"] == "bladder" and report.draft["sex"] == "M" and report.draft["age"] == 66
    assert report.draft["resected"] is False and "planned, not performed" in report.evidence["resected"]
    assert report.draft["board_date"] == "2026-02-11" and "MDM" in report.evidence["board_date"]
    assert report.draft["metastatic"] is False and report.draft["prior_lines"] == 0
    # A metastatic packet that says nothing of treatment: prior lines are asked for, not defaulted to 0.
    vague = "MDT 04/03/2026. 61 yo man with metastatic gastric adenocarcinoma, liver metastases, stage IV. Plan: discuss."
    report = import_packet(vague, "g2", CATALOG)
    assert report.case is None and any(m.startswith("prior_lines") for m in report.missing)
    assert any(m.startswith("resected") for m in report.missing) is False  # no operation named: weak, listed as such
    assert "resected" in report.weak
