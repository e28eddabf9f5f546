"""Combinations the vignettes create, read from what a reader of the vignette sees (clinical review 2, section 6).

A vignette's medicine list comes from several places (the varied fact, the complaint's presupposed medicines,
background medicines), and an offered drug can interact with any of them. These tests read the rendered
vignette and the options, never the generator's facts, and check every shipped question against interaction
tables written here from the sources, independently of `rules.yaml`:

- Beers 2023 Table 5: a RAS inhibitor (ACE inhibitor, ARB, ARNI) or a potassium-sparing diuretic (amiloride,
  triamterene) with another of them raises potassium; avoid routine use in an older adult with CKD stage 3a or
  worse (GFR below 60 mL/min). An older adult on lisinopril with CrCl 49 offered amiloride: amiloride is in the
  gold (it was "None of the above": review 2, beers-t6-amiloride deactivation);
- the misoprostol boxed warning: not for NSAID-ulcer prevention in a woman of childbearing potential (unless at
  high risk and using effective contraception; a proton-pump inhibitor is the usual choice), so a "not pregnant"
  woman of childbearing age offered it for gastroprotection does not have the gold "None of the above".
"""

import re

from clinical_cf.catalog.medpic import QUESTIONS_PATH, RULES_PATH
from clinical_cf.catalog.medpic.questions import load_questions
from clinical_cf.catalog.medpic.rules import Condition, PatientFacts, load_rules

QUESTIONS = load_questions(QUESTIONS_PATH)
RULES = load_rules(RULES_PATH)

RAS_INHIBITORS = {
    "lisinopril", "enalapril", "ramipril", "perindopril", "captopril", "quinapril", "benazepril", "trandolapril", "fosinopril",
    "losartan", "valsartan", "candesartan", "irbesartan", "telmisartan", "olmesartan", "azilsartan", "sacubitril",
}
POTASSIUM_SPARING = {"amiloride", "triamterene"}
HYPERKALAEMIC = RAS_INHIBITORS | POTASSIUM_SPARING
KIDNEY = re.compile(r"(?:creatinine clearance[^.]*?|CrCl[^.]*?|eGFR[^.]*?)(\d+(?:\.\d+)?) mL/min", re.I)
AGE = re.compile(r"(\d+)-year-old")


def _named(text: str, names: set[str]) -> set[str]:
    return {n for n in names if re.search(rf"\b{n}\b", text, re.I)}


def _kidney_function(vignette: str) -> float | None:
    found = KIDNEY.search(vignette)
    return float(found.group(1)) if found else None


def test_a_second_hyperkalaemic_drug_in_an_older_adult_with_ckd_3a_or_worse_is_in_the_gold():
    missed = []
    for q in QUESTIONS:
        age, kidney = AGE.search(q.vignette), _kidney_function(q.vignette)
        if not age or int(age.group(1)) < 65 or kidney is None or kidney >= 60:
            continue
        taken = _named(q.vignette, HYPERKALAEMIC)
        for letter, drug in q.option_drugs.items():
            if drug and drug.lower() in HYPERKALAEMIC and taken - {drug.lower()} and letter not in q.answer:
                missed.append(f"{q.id}: {drug} offered beside {sorted(taken)} at {kidney:g} mL/min (gold {q.answer})")
    assert missed == []


def test_misoprostol_for_gastroprotection_is_never_fine_for_a_woman_of_childbearing_age():
    wrong = [
        f"{q.id} (gold {q.answer})"
        for q in QUESTIONS
        for letter, drug in q.option_drugs.items()
        if drug == "misoprostol" and q.patient.sex == "F" and 12 <= q.patient.age_years <= 50 and letter not in q.answer
    ]
    assert wrong == []


def test_the_rules_file_holds_the_beers_table_5_hyperkalaemia_interaction_with_its_source():
    rule = next((r for r in RULES if r.drug_category == "potassium_sparing_diuretic" and any(c.kind == "co_medication" for c in r.trigger)), None)
    assert rule is not None
    assert "Table 5" in rule.source.section and rule.source.year == 2023
    assert {"amiloride", "triamterene"} <= rule.names()
    co_medication = next(c for c in rule.trigger if c.kind == "co_medication")
    assert {"lisinopril", "losartan"} <= {m.lower() for m in co_medication.members}


def test_a_co_medication_condition_reads_a_medicine_line_by_its_drug_name_and_a_class_by_its_members():
    line = {"kind": "co_medication", "label": "warfarin 4 mg daily"}
    patient = PatientFacts(age_years=70, sex="M", co_medications=["warfarin 4 mg daily", "lisinopril 20 mg daily"])
    assert Condition(value="warfarin", **line).holds(patient)
    assert not Condition(value="warf", **line).holds(patient)  # a drug name, not a prefix of one
    ras = Condition(kind="co_medication", value="ras_inhibitor", label="lisinopril 20 mg daily", members=["lisinopril", "losartan"])
    assert ras.holds(patient)
    assert not ras.holds(PatientFacts(age_years=70, sex="M", co_medications=["amlodipine 10 mg daily"]))
    assert ras.holds(PatientFacts(age_years=70, sex="M", co_medications=["ras_inhibitor"]))  # the generator's own record
