"""Clinical truth of the shipped MedPIC questions, checked class by class over every generated question.

Each test here is a class from the clinical review (reviews/clinical-review-1.md, section 4), checked
across the whole bundled file rather than at the named ids:

- a "rule does not apply" (deactivation) member is only right when the advice really stops applying
  outside the trigger; for advice that holds at every age or outside pregnancy its gold "None of the
  above" is wrong, so such a pair must not be shipped;
- a score a vignette states (CHA2DS2-VASc) is the one its own facts produce;
- vitals agree with the complaint (a raised blood pressure for "poorly controlled hypertension", a
  fever for "fever", a fast pulse for "a fast ventricular rate"; no fever or hypertensive reading
  that the presentation does not explain);
- a medicine the complaint says the patient takes ("above target on metformin") is in the medicine list.
"""

import re

from clinical_cf.catalog.medpic import QUESTIONS_PATH, RULES_PATH
from clinical_cf.catalog.medpic.questions import load_questions
from clinical_cf.catalog.medpic.rules import load_rules

RULES = {r.id: r for r in load_rules(RULES_PATH)}
QUESTIONS = load_questions(QUESTIONS_PATH)

# Advice that holds outside the rule's trigger, reviewed here independently of the rules file (the
# clinical reason and source for each; the rules file must record the same, see the second test).
ADVICE_HOLDS_OUTSIDE_TRIGGER = {
    # DOACs are preferred over warfarin for AF in eligible patients at any age (ACC/AHA/ACCP/HRS 2023 AF
    # guideline, class 1; ESC 2024 AF guideline, class I).
    "beers-t2-warfarin-first-line",
    # DOACs are preferred over a vitamin K antagonist for VTE treatment outside pregnancy (CHEST 2021
    # antithrombotic therapy for VTE; ASH 2020 VTE treatment guideline).
    "preg-warfarin",
    # Immediate-release nifedipine is not indicated for hypertension at any age (US label of nifedipine
    # capsules: angina only; ACC/AHA 2017 hypertension guideline).
    "beers-t2-nifedipine-ir",
    # Primary-prevention aspirin has no net benefit without raised risk under 65 either (ACC/AHA 2019
    # primary prevention guideline, aspirin IIb only at higher risk and low bleeding risk; USPSTF 2022).
    "beers-t2-aspirin-primary",
    # Meperidine (pethidine) is discouraged as an analgesic at any age: neurotoxic normeperidine, poor oral
    # efficacy (American Pain Society, Principles of Analgesic Use; ISMP high-alert guidance).
    "beers-t2-meperidine",
    # Antipsychotics are not a first-line treatment for insomnia or restlessness in adults of any age
    # (American Psychiatric Association, Choosing Wisely 2015; AASM 2017 insomnia pharmacotherapy guideline).
    "beers-t2-quetiapine",
    # Regular oral mineral oil for chronic constipation: lipoid pneumonia and fat-soluble vitamin loss at any
    # age; not among the laxatives recommended (ACG/AGA 2023 chronic idiopathic constipation guideline).
    "beers-t2-mineral-oil",
    # First-generation antihistamines are not preferred at any age for rhinitis, itch or insomnia (AASM 2017; ARIA).
    "beers-t2-diphenhydramine",
    # Benzodiazepines for insomnia or anxiety only short-term in crises at any age (NICE CG113 2011; AASM 2017).
    "beers-t2-lorazepam",
    # Megestrol is no appetite stimulant for unexplained weight loss at any age (label: AIDS only; ESPEN 2021).
    "beers-t2-megestrol",
    # Carisoprodol: abuse and impairment outweigh benefit at any age (EMA 2007 suspension).
    "beers-t2-carisoprodol",
    # Metoclopramide only short-term at any age, not for recurrent symptoms (EMA 2013; US boxed warning).
    "beers-t2-metoclopramide",
    # Oxybutynin in an older adult without dementia is still not preferred (NICE NG123 2019; Beers 2023 Table 7).
    "beers-t3-oxybutynin-dementia",
    # Misoprostol for NSAID-ulcer prevention in a woman of childbearing potential who is not pregnant: still not
    # to be used unless at high risk and using effective contraception; a PPI is the usual choice (US boxed
    # warning; clinical review 2).
    "preg-misoprostol",
}


def _trigger_pairs(rule_id: str) -> list[str]:
    return [q.id for q in QUESTIONS if q.rule_id == rule_id and q.operation == "deactivation" and q.pair_id.endswith(":pair-trigger")]


def test_no_rule_does_not_apply_question_where_the_advice_holds_outside_the_trigger():
    shipped = {rid: _trigger_pairs(rid) for rid in sorted(ADVICE_HOLDS_OUTSIDE_TRIGGER)}
    assert {rid: ids for rid, ids in shipped.items() if ids} == {}


def test_the_rules_file_records_where_the_advice_holds_outside_its_trigger():
    marked = {rid for rid, r in RULES.items() if getattr(r, "outside_trigger", None) is not None and r.outside_trigger.advice_holds}
    assert marked == ADVICE_HOLDS_OUTSIDE_TRIGGER
    for rid in marked:
        reason = RULES[rid].outside_trigger
        assert len(reason.rationale) >= 20 and reason.source.year >= 2000, rid
    # every rule so marked ships no trigger deactivation, whatever its id
    assert [q.id for q in QUESTIONS if q.operation == "deactivation" and q.pair_id.endswith(":pair-trigger") and q.rule_id in marked] == []


def test_exception_pairs_of_marked_rules_are_kept():
    # a mechanical valve makes warfarin right at any age; the exception, not age, withdraws the advice
    for rid in ("beers-t2-warfarin-first-line", "beers-t2-lorazepam", "beers-t2-metoclopramide", "beers-t2-quetiapine", "beers-t2-aspirin-primary"):
        assert [q.id for q in QUESTIONS if q.rule_id == rid and q.operation == "deactivation"] == [f"{rid}:pair-exception1:deactivation"]


def cha2ds2_vasc(q) -> int:
    """CHA2DS2-VASc from the question's structured facts (Lip et al., Chest 2010; ESC 2020 AF guideline Table 9)."""
    p = q.patient
    conditions = " ".join(p.conditions).lower()
    score = 2 if p.age_years >= 75 else 1 if p.age_years >= 65 else 0
    score += p.sex == "F"
    score += "hypertension" in conditions
    score += "diabet" in conditions
    score += any(w in conditions for w in ("heart_failure", "heart failure", "hfref"))
    score += 2 * any(w in conditions for w in ("stroke", "transient ischaemic"))
    score += any(w in conditions for w in ("established_ascvd", "myocardial infarction", "peripheral arterial"))
    return score


def test_every_stated_cha2ds2_vasc_is_the_one_the_vignettes_facts_give():
    wrong = []
    stated_count = 0
    for q in QUESTIONS:
        for stated in re.findall(r"CHA2DS2-VASc(?: score)?(?: of)? (\d+)", q.vignette):
            stated_count += 1
            if int(stated) != cha2ds2_vasc(q):
                wrong.append(f"{q.id}: states {stated}, facts give {cha2ds2_vasc(q)}")
    assert stated_count > 0
    assert wrong == []


HYPERTENSIVE_COMPLAINT = re.compile(
    r"poorly controlled hypertension|resistant hypertension|raised blood pressure|high blood pressure|blood pressure (?:of )?\d+/\d+"
    r"|blood pressure persistently|\(BP \d+/\d+|newly diagnosed hypertension|chronic hypertension|hypertension \(BP", re.I)


def _bp(text: str) -> tuple[int, int] | None:
    m = re.search(r"\bBP (\d+)/(\d+) mmHg, pulse", text)
    return (int(m.group(1)), int(m.group(2))) if m else None


def _complaint(q) -> str:
    return q.vignette.split(". ")[0]


def test_blood_pressure_fits_the_complaint_and_the_population():
    wrong = []
    for q in QUESTIONS:
        bp = _bp(q.vignette)
        if bp is None:
            continue
        stated = re.search(r"(?:blood pressure (?:of )?|BP )(\d+)/(\d+) mmHg", _complaint(q))
        if stated and (int(stated.group(1)), int(stated.group(2))) != bp:
            wrong.append(f"{q.id}: complaint says {stated.group(1)}/{stated.group(2)}, vitals {bp}")
        elif HYPERTENSIVE_COMPLAINT.search(_complaint(q)):
            if not (bp[0] >= 140 or bp[1] >= 90):
                wrong.append(f"{q.id}: hypertensive complaint with BP {bp}")
        elif q.patient.pregnant and (bp[0] >= 140 or bp[1] >= 90):
            wrong.append(f"{q.id}: pregnant, no hypertension stated, BP {bp}")  # would be gestational hypertension
        elif "hypertension" not in " ".join(q.patient.conditions) and bp[0] >= 140:
            wrong.append(f"{q.id}: no hypertension in the record, BP {bp}")
    assert wrong == []


FEBRILE_COMPLAINT = re.compile(r"fever|febrile|sepsis", re.I)
INFECTIVE = re.compile(r"fever|sepsis|gastroenteritis|cough|cold|diarrh|influenza|chickenpox|varicella|viral|infection|ulcers", re.I)


def test_temperature_fits_the_complaint():
    wrong = []
    for q in QUESTIONS:
        m = re.search(r"Temperature (\d+\.\d) °C", q.vignette)
        if not m:
            continue
        t = float(m.group(1))
        if FEBRILE_COMPLAINT.search(_complaint(q)) and t < 38.0:
            wrong.append(f"{q.id}: '{_complaint(q)}' with T {t}")
        elif not INFECTIVE.search(q.vignette) and t >= 38.0:
            wrong.append(f"{q.id}: febrile ({t}) with no infective presentation")
    assert wrong == []


def test_pulse_fits_a_fast_ventricular_rate():
    wrong = []
    for q in QUESTIONS:
        if "fast ventricular rate" in q.vignette:
            rate = int(re.search(r"pulse (\d+)/min", q.vignette).group(1))
            if rate < 110:
                wrong.append(f"{q.id}: fast ventricular rate with pulse {rate}")
    assert wrong == []


IMPLIED_MEDICINE = re.compile(r"\bon (?:metformin|a thiazide|diuretics|aspirin|three agents|long-term NSAIDs)|despite (?:metformin|paracetamol|a beta-blocker)"
                              r"|thiazide-induced", re.I)


def test_a_medicine_the_complaint_presupposes_is_in_the_medicine_list():
    wrong = [q.id for q in QUESTIONS if IMPLIED_MEDICINE.search(_complaint(q))
             and re.search(r"No regular medications|Takes no regular medicines|Meds: none", q.vignette)]
    assert wrong == []


def test_no_background_item_contradicts_the_complaint():
    assert [q.id for q in QUESTIONS if "gout in remission" in q.vignette and "gout" in _complaint(q).lower()] == []
