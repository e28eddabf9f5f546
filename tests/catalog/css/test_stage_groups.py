"""Stage groups the AJCC/FIGO staging of each type allows (issue 35): a locoregional stage IV is accepted, a refusal
names the case, the field and the allowed values in one line, and the CLI prints the whole problem."""

from __future__ import annotations

import json

import pytest

from clinical_cf.catalog.css.schema import Case, load_cases, stage_metastatic
from clinical_cf.cli import main
from clinical_cf.core.errors import CatalogError


def _case(**over):
    base = {
        "case_id": "t1", "cancer_type": "thyroid", "sex": "M", "age": 73, "stage": "IVB", "metastatic": False,
        "resected": False, "prior_lines": 0, "biomarkers": {"BRAF": "positive"}, "board_date": "2026-03-09",
        "sections": {name: "" for name in ("demographics", "diagnoses", "biomarkers", "medications", "procedures", "encounters",
                                           "labs", "vitals", "allergies", "overview")},
        "consensus": [{"treatment": "dabrafenib plus trametinib", "label": "tacit"}],
    }
    return {**base, **over}


@pytest.mark.parametrize("cancer_type, stage, metastatic", [
    ("thyroid", "IVB", False),  # anaplastic: T4b N1b M0
    ("thyroid", "IVB", True),  # differentiated, 55 or older: M1
    ("thyroid", "II", True),  # differentiated, under 55: M1
    ("head_and_neck", "IVA", False),
    ("prostate", "IVA", False),  # N1 M0
    ("hepatocellular", "IVA", False),  # N1 M0
    ("bladder", "IVA", True),  # M1a
    ("colorectal", "IVA", True),
])
def test_every_stage_group_the_type_allows_is_accepted(cancer_type, stage, metastatic):
    sex = "F" if cancer_type in ("ovarian", "endometrial", "cervical") else "M"
    assert Case.model_validate(_case(cancer_type=cancer_type, stage=stage, metastatic=metastatic, sex=sex)).stage == stage


def test_a_stage_that_cannot_fit_is_refused_naming_case_field_and_allowed_values_in_one_line(tmp_path):
    path = tmp_path / "cases.jsonl"
    path.write_text(json.dumps(_case(cancer_type="colorectal", stage="IVA", metastatic=False)) + "\n")
    with pytest.raises(CatalogError) as ex:
        load_cases(path)
    message = str(ex.value)
    assert "\n" not in message and "case 't1'" in message and "field 'metastatic'" in message and "allowed: metastatic true" in message
    assert ex.value.field == "metastatic"
    assert stage_metastatic("thyroid", "IVB") is None and stage_metastatic("colorectal", "IVA") is True


def test_cases_answer_prints_the_whole_problem(tmp_path, capsys):
    packet = tmp_path / "p.txt"
    packet.write_text("Thyroid MDT 09/03/2026. Mr K, 73 years. Anaplastic thyroid carcinoma, T4b N1b M0, AJCC stage IVB.\n"
                      "Plan: dabrafenib and trametinib.\n")
    out = tmp_path / "cases.jsonl"
    main(["cases", "import", str(packet), "--out", str(out)])
    questions = tmp_path / "cases.questions.jsonl"
    answers = ["--set", "p:age=73", "--set", "p:board_date=2026-03-09", "--set", "p:cancer_type=colorectal", "--set", "p:stage=IVA"]
    code = main(["cases", "answer", str(questions), "--out", str(out), *answers, "--confirm", "p"])
    printed = capsys.readouterr().out
    assert code == 1
    # The whole problem, not "case" (the text before its first colon).
    assert "case 'p', field 'metastatic': false disagrees with stage IVA of colorectal" in printed and "allowed:" in printed
    assert "open: case" not in printed
