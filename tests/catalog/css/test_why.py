"""`catalog summary --why CASE`: each intervention's verdict with the conditions that decided it."""

import json

from clinical_cf.catalog.css import CASES_PATH, CATALOG_PATH
from clinical_cf.catalog.css.interventions import load_catalog
from clinical_cf.catalog.css.schema import load_cases
from clinical_cf.catalog.css.why import explain
from clinical_cf.cli import main

CATALOG = load_catalog(CATALOG_PATH)


def test_the_explanation_agrees_with_the_filter_on_every_bundled_pair_and_names_what_failed():
    cases = load_cases(CASES_PATH)[:60]
    for case in cases:
        for item in CATALOG.interventions:
            applies, reasons = explain(item, case)
            assert applies == item.applies_to.matches(case)
            assert reasons, (case.case_id, item.id)


def test_why_says_a_her2_positive_endometrial_case_gets_no_family_a_because_of_its_type(tmp_path, capsys):
    case = load_cases(CASES_PATH)[0].model_dump(mode="json")
    case.update(case_id="endo-1", cancer_type="endometrial", sex="F", biomarkers={"HER2": "positive"}, record=None)
    path = tmp_path / "cases.jsonl"

    path.write_text(json.dumps(case) + "\n")
    assert main(["catalog", "summary", "--cases", str(path), "--why", "endo-1"]) == 0
    out = capsys.readouterr().out
    why = out.split("why, for endo-1")[1]
    line = next(ln for ln in why.splitlines() if ln.strip().startswith("A1_her2_positive_to_negative"))
    assert " no " in line and "endometrial is not one of breast, gastric" in line
    assert main(["catalog", "summary", "--cases", str(path), "--why", "nope"]) == 2
    assert "no case 'nope'" in capsys.readouterr().err
