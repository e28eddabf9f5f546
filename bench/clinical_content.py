"""Clinical-content audit of the bundled MedPIC questions and sensitivity pairs, per review class.

    .venv/bin/python bench/clinical_content.py [--json] [--questions Q.jsonl] [--vignettes V.jsonl] [--perturbations P.yaml]

The files default to the bundled ones; pass older versions (`git show REV:catalog/medpic/questions.jsonl > q.jsonl`)
to count the same classes on them. The M1 row measures the scorer in this checkout, not a file.

Counts, over every shipped question / vignette / pair (not a sample), the classes the clinical review
(reviews/clinical-review-1.md, sections 4 and 6) found wrong. Each count is a number of items that are
clinically wrong as shipped, so the target is 0 everywhere. The before/after table in docs/changelog.md
was produced by this script on the commit before the fix and on the fix.
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter

from clinical_cf.catalog.medpic import QUESTIONS_PATH, RULES_PATH
from clinical_cf.catalog.medpic.questions import load_questions
from clinical_cf.catalog.medpic.rules import load_rules
from clinical_cf.catalog.sensitivity import PERTURBATIONS_PATH, VIGNETTES_PATH
from clinical_cf.catalog.sensitivity.perturbations import load_perturbations
from clinical_cf.catalog.sensitivity.vignettes import load_vignettes
from clinical_cf.scorers.sensitivity import consistent, measure

# Rules whose advice holds outside the trigger (reason and source in rules.yaml `outside_trigger`).
ALL_AGE_ADVICE = (
    "beers-t2-warfarin-first-line", "preg-warfarin", "beers-t2-nifedipine-ir", "beers-t2-aspirin-primary", "beers-t2-meperidine",
    "beers-t2-quetiapine", "beers-t2-mineral-oil", "beers-t2-diphenhydramine", "beers-t2-lorazepam", "beers-t2-megestrol",
    "beers-t2-carisoprodol", "beers-t2-metoclopramide", "beers-t3-oxybutynin-dementia", "preg-misoprostol",
)
# Beers 2023 Table 5: a RAS inhibitor or potassium-sparing diuretic with another of them, older adult, GFR below 60.
RAS_INHIBITORS = (
    "lisinopril", "enalapril", "ramipril", "perindopril", "captopril", "quinapril", "losartan", "valsartan", "candesartan",
    "irbesartan", "telmisartan", "olmesartan", "sacubitril",
)
HYPERKALAEMIC = (*RAS_INHIBITORS, "amiloride", "triamterene")
# Findings that settle a diagnosis by the criteria the vignettes cite (a background or a longer history owes no change).
SETTLED = (
    re.compile(r"troponin[^;]*\brising to\b.*\bST (?:depression|elevation)"
               r"|\bST (?:depression|elevation).*troponin[^;]*\brising to\b", re.I),
    re.compile(r"pH 7\.[0-2]\d with bicarbonate \d mmol/L.*ketones|ketones.*pH 7\.[0-2]\d with bicarbonate \d mmol/L", re.I),
    re.compile(r"CSF neutrophils [\d,]+ cells/uL with glucose [01]\.\d", re.I),
)
HYPERTENSIVE = re.compile(
    r"poorly controlled hypertension|resistant hypertension|raised blood pressure|high blood pressure"
    r"|blood pressure (?:of )?\d+/\d+|blood pressure persistently|\(BP \d+/\d+|newly diagnosed hypertension"
    r"|chronic hypertension|hypertension \(BP",
    re.I,
)
IMPLIED_MEDICINE = re.compile(
    r"\bon (?:metformin|a thiazide|diuretics|aspirin|three agents|long-term NSAIDs)|despite (?:metformin|paracetamol|a beta-blocker)"
    r"|thiazide-induced",
    re.I,
)
NO_MEDS = re.compile(r"No regular medications|Takes no regular medicines|Meds: none")
INFECTIVE_TEXT = re.compile(r"fever|sepsis|gastroenteritis|cough|cold|diarrh|influenza|chickenpox|varicella|viral|infection|ulcers", re.I)
DIAGNOSTIC_RESULTS = (
    "haemorrhage",
    "intrauterine gestational sac with yolk sac",
    "CT pulmonary angiogram with no filling defect",
    "HIDA scan with normal gallbladder filling",
    "normal compressible appendix",
)
MOVED_BY_ANTICOAGULATION = {"Intracerebral haemorrhage", "Subarachnoid haemorrhage", "Pulmonary embolism"}
INFECTIVE_PRESENTATIONS = {"cap", "appendicitis", "sepsis", "meningitis", "cholecystitis", "pyelo"}
FEMALE_ONLY = {"Pelvic inflammatory disease", "Ruptured ectopic pregnancy", "Ovarian torsion", "Ruptured ovarian cyst", "Miscarriage"}


def _cha2ds2_vasc(p) -> int:
    c = " ".join(p.conditions).lower()
    return (
        (2 if p.age_years >= 75 else 1 if p.age_years >= 65 else 0)
        + (p.sex == "F")
        + ("hypertension" in c)
        + ("diabet" in c)
        + any(w in c for w in ("heart_failure", "heart failure", "hfref"))
        + 2 * any(w in c for w in ("stroke", "transient ischaemic"))
        + any(w in c for w in ("established_ascvd", "myocardial infarction", "peripheral arterial"))
    )


def medpic_audit(questions_path=QUESTIONS_PATH) -> dict:
    rules = load_rules(RULES_PATH)
    questions = load_questions(questions_path)
    out: dict = {"rules": len(rules), "questions": len(questions), "pairs": len({q.pair_id for q in questions if q.pair_id})}
    removed = Counter(
        q.rule_id
        for q in questions
        if q.operation == "deactivation" and q.pair_id.endswith(":pair-trigger") and q.rule_id in ALL_AGE_ADVICE
    )
    out["deactivation_gold_none_but_advice_holds"] = sum(removed.values())
    out["deactivation_gold_none_but_advice_holds_by_rule"] = dict(sorted(removed.items()))
    score, bp, temp, pulse, meds = 0, 0, 0, 0, 0
    for q in questions:
        complaint = q.vignette.split(". ")[0]
        score += sum(int(s) != _cha2ds2_vasc(q.patient) for s in re.findall(r"CHA2DS2-VASc(?: score)?(?: of)? (\d+)", q.vignette))
        m = re.search(r"\bBP (\d+)/(\d+) mmHg, pulse", q.vignette)
        if m:
            s, d = int(m.group(1)), int(m.group(2))
            stated = re.search(r"(?:blood pressure (?:of )?|BP )(\d+)/(\d+) mmHg", complaint)
            high = s >= 140 or d >= 90
            bp += bool(
                (stated and (int(stated.group(1)), int(stated.group(2))) != (s, d))
                or (not stated and HYPERTENSIVE.search(complaint) and not high)
                or (not HYPERTENSIVE.search(complaint) and q.patient.pregnant and high)
                or (
                    not HYPERTENSIVE.search(complaint)
                    and not q.patient.pregnant
                    and "hypertension" not in " ".join(q.patient.conditions)
                    and s >= 140
                )
            )
        t = re.search(r"Temperature (\d+\.\d) °C", q.vignette)
        if t:
            febrile = float(t.group(1)) >= 38.0
            temp += bool(
                (re.search(r"fever|febrile|sepsis", complaint, re.I) and not febrile) or (febrile and not INFECTIVE_TEXT.search(q.vignette))
            )
        if "fast ventricular rate" in q.vignette:
            pulse += int(re.search(r"pulse (\d+)/min", q.vignette).group(1)) < 110
        meds += bool(IMPLIED_MEDICINE.search(complaint) and NO_MEDS.search(q.vignette))
    hyperkalaemic = 0
    for q in questions:
        age, kidney = re.search(r"(\d+)-year-old", q.vignette), re.search(r"(?:Creatinine clearance|CrCl)[^.]*?(\d+) mL/min", q.vignette)
        if age and int(age.group(1)) >= 65 and kidney and int(kidney.group(1)) < 60:
            taken = {d for d in HYPERKALAEMIC if re.search(rf"\b{d}\b", q.vignette, re.I)}
            hyperkalaemic += sum(
                bool(drug and drug.lower() in HYPERKALAEMIC and taken - {drug.lower()} and letter not in q.answer)
                for letter, drug in (q.option_drugs or {}).items()
            )
    out.update(
        beers_t5_hyperkalaemic_pair_missed=hyperkalaemic,
        misoprostol_fine_for_childbearing_age=sum(
            drug == "misoprostol" and q.patient.sex == "F" and 12 <= q.patient.age_years <= 50 and letter not in q.answer
            for q in questions for letter, drug in (q.option_drugs or {}).items()
        ),
        cha2ds2_vasc_not_from_facts=score,
        bp_contradicts_complaint=bp,
        temperature_contradicts_complaint=temp,
        pulse_contradicts_fast_af=pulse,
        presupposed_medicine_missing=meds,
    )
    return out


def sensitivity_audit(vignettes_path=VIGNETTES_PATH, perturbations_path=PERTURBATIONS_PATH) -> dict:
    vignettes = load_vignettes(vignettes_path)
    items, tolerance = load_perturbations(perturbations_path)
    pairs = [(v, p) for v in vignettes for p in items if p.skip_reason(v) is None]
    out: dict = {
        "vignettes": len(vignettes),
        "pairs": len(pairs),
        "expected": dict(sorted(Counter(f"{p.id}:{p.expected_for(v)}" for v, p in pairs).items())),
    }
    out["diagnostic_result_expects_no_flip"] = sum(
        p.op == "add_result" and p.expected_for(v) == "entropy_up_no_flip" and any(k in v.conflicting_result for k in DIAGNOSTIC_RESULTS)
        for v, p in pairs
    )
    out["anticoagulation_shift_out_of_scope"] = sum(
        p.id == "B3_anticoagulation" and not (MOVED_BY_ANTICOAGULATION & set(v.candidates)) for v, p in pairs
    )
    out["anticoagulation_shift_debatable_scope"] = sum(
        p.id == "B3_anticoagulation" and v.presentation not in ("stroke", "pe", "meningitis") for v, p in pairs
    )
    out["settled_diagnosis_expected_to_move"] = sum(
        p.op in ("add_background", "prolong") and p.expected_for(v) in ("shift", "down", "up")
        and any(r.search("; ".join(v.findings)) for r in SETTLED)
        for v, p in pairs
    )
    out["m1_up_inconsistent_when_kept_at"] = [
        p0 for p0 in (0.96, 0.98, 0.99, 1.0)
        if not consistent(measure([p0, *[(1 - p0) / 4] * 4], [p0, *[(1 - p0) / 4] * 4], 0), "up", tolerance)
    ]
    ceiling = [
        p0
        for p0 in (0.91, 0.95, 0.98, 0.995)
        if not consistent(measure([p0, *[(1 - p0) / 4] * 4], [p0 + (1 - p0) / 2, *[(1 - p0) / 8] * 4], 0), "up", tolerance)
    ]
    out["m1_up_unreachable_at_baselines"] = ceiling
    out["m1_pairs"] = sum(p.op == "add_sign" for _, p in pairs)

    def temp(v) -> float:
        return float(re.match(r"T (\d+\.\d) C", v.vitals).group(1))

    out["febrile_non_infective_vignettes"] = sum(v.presentation not in INFECTIVE_PRESENTATIONS and temp(v) >= 38.0 for v in vignettes)
    out["fever_complaint_afebrile_vignettes"] = sum(
        bool(re.search(r"fever|temperature", v.complaint)) and temp(v) < 38.0 for v in vignettes
    )
    out["findings_contradict_vitals"] = sum(
        any(
            (re.match(r"temperature (\d+\.\d) C", f) and float(f.split()[1]) != temp(v))
            or ("sinus tachycardia" in f and int(re.search(r"HR (\d+)", v.vitals).group(1)) < 100)
            for f in v.findings
        )
        for v in vignettes
    )
    out["female_only_candidate_in_a_man"] = sum(v.sex == "M" and bool(FEMALE_ONLY & set(v.candidates)) for v in vignettes)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of lines")
    parser.add_argument("--questions", default=QUESTIONS_PATH, help="MedPIC questions JSONL (default: bundled)")
    parser.add_argument("--vignettes", default=VIGNETTES_PATH, help="sensitivity vignettes JSONL (default: bundled)")
    parser.add_argument("--perturbations", default=PERTURBATIONS_PATH, help="sensitivity perturbations YAML (default: bundled)")
    args = parser.parse_args()
    report = {"medpic": medpic_audit(args.questions), "sensitivity": sensitivity_audit(args.vignettes, args.perturbations)}
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    for suite, counts in report.items():
        for key, value in counts.items():
            print(f"{suite:12s} {key:45s} {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
