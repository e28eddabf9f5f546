"""`clinical-cf cases import`: a clinician's packet text becomes a case, every inference listed."""

import io
import json
from pathlib import Path

import pytest

from clinical_cf.catalog.css import CATALOG_PATH
from clinical_cf.catalog.css.importer import answer_case, import_packet, pending_record, split_sections
from clinical_cf.catalog.css.interventions import load_catalog
from clinical_cf.catalog.css.schema import Case, case_json_schema, load_cases
from clinical_cf.cli import main
from tests.helpers import HANDWRITTEN_CASES

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


def test_import_writes_only_questions_and_answer_writes_the_confirmed_cases(tmp_path, capsys):
    out = tmp_path / "cases.jsonl"
    rc = main(["cases", "import", str(TEXT / "batch.jsonl"), str(TEXT / "mdt-gastric.txt"), "--out", str(out)])
    assert rc == 1
    printed = capsys.readouterr().out
    assert "cancer_type = ?" in printed and 'stage = "III"' in printed and "nothing is written to" in printed
    assert not out.exists()  # no unconfirmed inference reaches a cases file
    questions = tmp_path / "cases.questions.jsonl"
    records = [json.loads(line) for line in questions.read_text().splitlines()]
    assert [r["case_id"] for r in records] == ["crc-01", "unknown-1", "mdt-gastric"]
    gastric = records[2]["questions"]
    assert {"cancer_type", "stage", "stage_date", "metastatic", "resected", "operation", "prior_lines", "board_date"} <= set(gastric)
    assert gastric["stage"]["quote_verified"] and gastric["biomarkers.HER2"]["value"] == "positive"
    # Confirming one case writes it; the others stay open and are named.
    assert main(["cases", "answer", str(questions), "--out", str(out), "--confirm", "mdt-gastric"]) == 1
    printed = capsys.readouterr().out
    assert not out.exists() and "mdt-gastric: 1 open:\n    biomarkers.PD-L1: positive, negative" in printed  # a CPS: asked, in full
    assert main(["cases", "answer", str(questions), "--out", str(out), "--set", "mdt-gastric:biomarkers.PD-L1=positive"]) == 1
    assert [c.case_id for c in load_cases(out)] == ["mdt-gastric"]
    assert "unknown-1:" in capsys.readouterr().out
    # A correction is typed once, on the command line; the questions file records it as corrected.
    assert main(["cases", "answer", str(questions), "--out", str(out), "--set", "mdt-gastric:prior_lines=0",
                 "--set", "mdt-gastric:resected=maybe"]) == 2
    assert "resected: answer true or false" in capsys.readouterr().err


def test_an_unconfirmed_inference_is_never_used_and_a_correction_is(tmp_path):
    text = (
        "Urology MDM minutes 11/02/2026\nPatient 2: male, 66.\n"
        "TURBT 08/01/2026: complete resection of visible tumour, high-grade urothelial carcinoma invading muscle.\n"
        "Imaging: CT 20/01/2026 - cT2 N0 M0, stage II.\nOutcome: neoadjuvant chemotherapy then radical cystectomy."
    )
    report = import_packet(text, "b1", CATALOG)
    assert report.questions["resected"]["value"] is False  # the TURBT's "complete resection" is diagnostic
    record, case, open_ = answer_case(pending_record(report), {}, set())
    assert case is None and any(o.startswith("cancer_type") for o in open_)
    record, case, open_ = answer_case(record, {"stage": "IIIA", "metastatic": "false"}, {"*"})
    assert open_ == [] and case is not None and case.stage == "IIIA"
    assert record["questions"]["stage"]["answered"] == "corrected" and record["questions"]["resected"]["answered"] == "confirmed"
    with pytest.raises(ValueError, match="no question named"):
        answer_case(record, {"stagee": "II"}, set())
    # Correcting the tumour type asks the markers the new type's filters read (never a silent not_tested).
    record, case, open_ = answer_case(record, {"cancer_type": "breast"}, set(), CATALOG)
    assert case is None and {"biomarkers.HER2", "biomarkers.ER"} <= {o.split(":")[0] for o in open_}


@pytest.mark.parametrize(
    "text, field, want",
    [
        ("Renal MDT 06/02/2026. 63 y male. Comorbidities: CKD stage 2. Clear cell RCC, stage III (pT3a N0 M0) after "
         "radical nephrectomy on 18/11/2025.", "stage", "III"),
        ("Gynae MDT 20/03/2026. History: FIGO stage IB endometrial carcinoma, hysterectomy 14/06/2023. Recurrence "
         "October 2025 with biopsy-proven lung metastases. Carboplatin and paclitaxel from 20/11/2025, ongoing.", "metastatic", True),
        ("H&N MDT 24/02/2026. 58-year-old man, laryngeal squamous cell carcinoma, T3 N2b M0, no distant metastases. "
         "Stage IVA. PD-L1 CPS 35.", "metastatic", False),
        ("MSH|^~\\&|X|Y|MDT|URO|20260304101500\nOBX|1|TX|DX||bladder urothelial carcinoma, cT2 N0 M0, stage II", "board_date",
         "2026-03-04"),
    ],
)
def test_wordings_of_other_hands_are_pre_filled_right(text, field, want):
    report = import_packet(text, "x", CATALOG)
    assert report.questions[field]["value"] == want, report.questions[field]


def test_invisible_characters_are_removed_first_and_said(tmp_path):
    text = "\ufeffBreast MDT 2026-01-15. 49 yo woman, IDC, stage\u200b IIA. HER\u200d2 1+; ER 95%, PR 40%. \u202ehealing\u202c"
    report = import_packet(text, "b", CATALOG)
    assert report.questions["stage"]["value"] == "IIA" and report.questions["biomarkers.HER2"]["value"] == "negative"
    assert report.questions["biomarkers.PR"]["value"] == "40%"
    assert any("invisible format character" in n and "ZERO WIDTH" in n for n in report.notes)
    assert "\ufeff" not in report.draft["sections"]["overview"] and "\u202e" not in report.draft["sections"]["overview"]
    # A CPS is not a percentage: asked, with the quote, never a status made up.
    report = import_packet("Larynx SCC, T3 N2b M0, stage IVA. PD-L1 CPS 35. H&N MDT 2026-02-24", "h", CATALOG)
    q = report.questions["biomarkers.PD-L1"]
    assert q["value"] is None and "CPS 35" in q["evidence"] and q["quote_verified"]


def test_import_refuses_empty_packets_an_out_equal_to_an_input_and_keeps_ids_unique(tmp_path, capsys):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    for folder in ("a", "b"):
        (tmp_path / folder / "note.txt").write_text("Breast MDT 2026-01-15. 49 yo woman, IDC, stage IIA, ER 95%.")
    empty = tmp_path / "empty.txt"
    empty.write_text("\ufeff\u200b  \n")
    assert main(["cases", "import", str(empty), "--out", str(tmp_path / "c.jsonl")]) == 2
    assert "empty" in capsys.readouterr().err and not (tmp_path / "c.questions.jsonl").exists()
    packet = tmp_path / "a" / "note.txt"
    assert main(["cases", "import", str(packet), "--out", str(packet)]) == 2
    assert "would overwrite the input" in capsys.readouterr().err and packet.read_text().startswith("Breast")
    assert main(["cases", "import", str(packet), str(tmp_path / "b" / "note.txt"), "--out", str(tmp_path / "c.jsonl")]) == 1
    ids = [json.loads(line)["case_id"] for line in (tmp_path / "c.questions.jsonl").read_text().splitlines()]
    assert ids == ["note", "note-2"]
    questions = tmp_path / "c.questions.jsonl"
    assert main(["cases", "answer", str(questions), "--out", str(questions)]) == 2


def test_import_help_names_the_files_it_writes(capsys):
    with pytest.raises(SystemExit):
        main(["cases", "import", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "writes ONLY the questions file OUT.questions.jsonl" in text and "todo" not in text


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


def test_answer_asks_each_open_question_in_turn_on_a_terminal(tmp_path, monkeypatch, capsys):
    packet = tmp_path / "p.txt"
    packet.write_text("Breast MDT 2026-01-15. 49 yo woman, IDC, stage IIA, ER 95%, PR 40%, HER2 0. Wide local excision "
                      "on 2025-12-08, margins clear. Plan: adjuvant letrozole.")
    out = tmp_path / "cases.jsonl"
    assert main(["cases", "import", str(packet), "--out", str(out)]) == 1
    record = json.loads((tmp_path / "cases.questions.jsonl").read_text())
    open_questions = [n for n, q in record["questions"].items() if not q.get("confirmed")]
    # Enter keeps every pre-filled value; the reviewer corrects the stage on its turn.
    replies = ["IIB" if name == "stage" else "" for name in open_questions]
    stdin = io.StringIO("\n".join(replies) + "\n")
    stdin.isatty = lambda: True  # type: ignore[method-assign]
    monkeypatch.setattr("sys.stdin", stdin)
    assert main(["cases", "answer", str(tmp_path / "cases.questions.jsonl"), "--out", str(out)]) == 0
    (case,) = load_cases(out)
    assert case.stage == "IIB" and case.resected is True and case.biomarkers["PR"] == "40%"
    answered = json.loads((tmp_path / "cases.questions.jsonl").read_text())["questions"]
    assert answered["stage"]["answered"] == "corrected" and answered["resected"]["answered"] == "confirmed"
