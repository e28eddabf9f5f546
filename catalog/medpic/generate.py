"""MedRule2Pair (seed 002, §3.2): a deterministic generator from verified rules to GF and CF questions.

For every rule:
- three guideline-following (GF) questions, each from its own seeded base case in which the rule
  applies; the third adds, where the catalog has one, a second drug whose own rule also applies to
  this patient (a multi-answer question);
- unless the rule says `counterfactual: false`, one CF pair from a fresh base case: the two members
  differ only in the rule's varied condition (age, kidney function, pregnancy or lactation status,
  gestational week, a condition or a co-medication), with the stem and options fixed; the member
  inside the rule is labelled `activation`, the member outside it `deactivation`;
- one more CF pair per exception with a machine-checkable `when` (the exception is present in the
  deactivation member only).

Distractors come from the rule's own `context.distractors` or a pool of common drugs for the
population, and are kept only when no rule in the catalog flags them for any version of the
patient. Gold answers are computed from the structured facts, and `self_check` recomputes them.
Surface form varies on purpose (age, kidney function, pregnancy, history and medication wording).

    python -m clinical_cf.catalog.medpic.generate      # rewrites questions.jsonl
"""

from __future__ import annotations

import json
import random
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from clinical_cf.catalog.medpic import QUESTIONS_PATH, RULES_PATH
from clinical_cf.catalog.medpic.questions import (
    NONE_OF_THE_ABOVE,
    ChangedFact,
    Dimensions,
    Question,
    gold_from_facts,
    self_check,
)
from clinical_cf.catalog.medpic.rules import (
    AGE_FACTOR,
    INFO_TYPE,
    Condition,
    PatientFacts,
    Rule,
    drug_flagged,
    load_rules,
)

SEED = 20260002
GF_PER_RULE = 3

POOLS: dict[str, list[str]] = {
    "older_adult": ["acetaminophen (paracetamol)", "amlodipine", "atorvastatin", "levothyroxine", "polyethylene glycol",
                    "cholecalciferol (vitamin D3)", "latanoprost eye drops"],
    "renal": ["amlodipine", "atorvastatin", "levothyroxine", "metoprolol succinate", "ceftriaxone", "doxycycline",
              "linagliptin", "clindamycin"],
    "pregnancy": ["acetaminophen (paracetamol)", "labetalol", "amoxicillin", "cefalexin", "levothyroxine", "folic acid",
                  "ferrous sulfate"],
    "lactation": ["acetaminophen (paracetamol)", "ibuprofen", "amoxicillin", "cefalexin", "levothyroxine", "labetalol"],
    "paediatric": ["acetaminophen (paracetamol)", "amoxicillin", "oral rehydration solution", "zinc oxide barrier cream",
                   "salbutamol (albuterol) inhaler"],
    "general": ["acetaminophen (paracetamol)", "amoxicillin", "cetirizine", "levothyroxine", "cholecalciferol (vitamin D3)"],
}
BACKGROUND: dict[str, list[str]] = {
    "older_adult": ["hypertension", "osteoarthritis of both knees", "hyperlipidaemia", "subclinical hypothyroidism (monitoring only)",
                    "osteoporosis", "cataract surgery in 2019"],
    "renal": ["hypertension", "hyperlipidaemia", "osteoarthritis of the hips", "subclinical hypothyroidism (monitoring only)",
              "gout in remission"],
    "pregnancy": ["iron-deficiency anaemia", "eczema", "a previous appendicectomy", "one previous uncomplicated vaginal delivery"],
    "lactation": ["eczema", "a previous appendicectomy", "iron-deficiency anaemia in pregnancy"],
    "paediatric": ["eczema", "born at term, immunisations up to date"],
    "general": ["hay fever", "a previous appendicectomy", "eczema", "hyperlipidaemia"],
}
NEONATE_BACKGROUND = ["born at 39 weeks by uncomplicated vaginal delivery", "birth weight 3.4 kg"]
BACKGROUND_TOPIC = {"gout in remission": "gout"}
"""Background items and the word of a complaint that would contradict them."""
BACKGROUND_MEDS = ["cholecalciferol 1000 IU daily", "an emollient cream", "artificial tears as needed"]
# Which background items are plausible at which age (age groups as in `age_group`). A CF pair whose
# members fall in different age groups keeps only items plausible for both, so moving a member
# across an age threshold never leaves it with the other group's problem list. Rationale: a problem
# list is part of the age-appropriate setting (osteoporosis and cataract surgery read as older-adult
# history, "born at term, immunisations up to date" as a child's); an adult with a child's problem
# list and heart rate is an incoherent pair.
PLAUSIBLE_BACKGROUND: dict[str, set[str]] = {
    "neonate": set(NEONATE_BACKGROUND),
    "infant": {"eczema", "born at term, immunisations up to date"},
    "child": {"eczema", "born at term, immunisations up to date", "hay fever", "a previous appendicectomy"},
    "adult": {"hypertension", "hyperlipidaemia", "subclinical hypothyroidism (monitoring only)", "hay fever", "eczema",
              "a previous appendicectomy", "osteoarthritis of the hips", "osteoarthritis of both knees", "gout in remission",
              "iron-deficiency anaemia", "one previous uncomplicated vaginal delivery", "iron-deficiency anaemia in pregnancy"},
    "older_adult": {"hypertension", "hyperlipidaemia", "subclinical hypothyroidism (monitoring only)", "hay fever", "eczema",
                    "a previous appendicectomy", "osteoarthritis of the hips", "osteoarthritis of both knees", "gout in remission",
                    "osteoporosis", "cataract surgery in 2019", "iron-deficiency anaemia"},
}
# Resting heart-rate bands by age (awake, well child), paediatric early-warning charts (e.g. APLS/PEWS
# normal ranges, paraphrased); adults 60-100/min. A member's vitals are drawn at the same position in its
# own band, so a pair differs in heart rate only as much as the age change implies.
HEART_RATE_BANDS: list[tuple[float, tuple[int, int]]] = [
    (1, (110, 150)), (2, (100, 140)), (5, (90, 130)), (12, (80, 115)), (18, (60, 100)), (200, (60, 92)),
]
AGES = {
    "older_adult": (66, 89),
    "renal": (66, 88),
    "pregnancy": (22, 40),
    "lactation": (22, 40),
    "paediatric": (3, 11),
    "general": (25, 60),
}
# Vitals follow the presentation (clinical review 1, section 4: "poorly controlled hypertension" with BP
# 124/81). A blood pressure the complaint states is the one on the vitals line; a hypertensive complaint
# gets a raised reading (>= 150/92, ACC/AHA 2017 stage 2); a pregnancy without one stays below 140/90
# (NICE NG133: 140/90 defines gestational hypertension); a record with hypertension in its problem list
# reads as treated or borderline (124-138/72-88); anyone else is normotensive. A child's temperature is
# febrile (>= 38.0 C, NICE NG143) when the complaint says fever or sepsis, at most 38.2 with an infective
# complaint, and normal otherwise. Atrial fibrillation is an irregular pulse, fast (112-142/min) when the
# complaint says so.
STATED_BP = re.compile(r"(\d{2,3})/(\d{2,3}) mmHg")
HYPERTENSIVE_COMPLAINT = re.compile(
    r"poorly controlled hypertension|resistant hypertension|raised blood pressure|high blood pressure|blood pressure persistently"
    r"|newly diagnosed hypertension|chronic hypertension", re.I)
FEBRILE_COMPLAINT = re.compile(r"fever|febrile|sepsis", re.I)
INFECTIVE_COMPLAINT = re.compile(r"gastroenteritis|cough|\bcold\b|diarrh|influenza|chickenpox|varicella|viral|infection", re.I)


def draw_blood_pressure(rng: random.Random, indication: str, background: list[str], pregnant: bool) -> str:
    """A blood pressure that fits the complaint and the record (see the comment above)."""
    stated = STATED_BP.search(indication)
    if stated:
        return f"{stated.group(1)}/{stated.group(2)}"
    if HYPERTENSIVE_COMPLAINT.search(indication):
        return f"{rng.randint(150, 172)}/{rng.randint(92, 104)}"
    if pregnant:
        return f"{rng.randint(102, 128)}/{rng.randint(60, 80)}"
    if any("hypertension" in b for b in background):
        return f"{rng.randint(124, 138)}/{rng.randint(72, 88)}"
    return f"{rng.randint(106, 134)}/{rng.randint(62, 84)}"


def draw_child_temperature(rng: random.Random, rule: Rule, indication: str) -> str:
    """Febrile with a fever or sepsis complaint, at most 38.2 with another infective one, normal otherwise."""
    text = " ".join([indication, *(label for c in rule.trigger for label in c.surface())])
    if FEBRILE_COMPLAINT.search(indication):
        return rng.choice(["38.3", "38.6", "38.9", "39.2"])
    if INFECTIVE_COMPLAINT.search(text):
        return rng.choice(["37.2", "37.6", "37.9", "38.2"])
    return rng.choice(["36.7", "36.9", "37.1", "37.3"])


def cha2ds2_vasc(facts: PatientFacts, labels: dict[str, str]) -> int:
    """CHA2DS2-VASc from the member's own facts (Lip et al., Chest 2010; ESC 2020 AF guideline, Table 9):
    age 65-74 one point, 75 or more two; female sex; hypertension; diabetes; heart failure; stroke or TIA two;
    vascular disease (myocardial infarction, peripheral arterial disease, established ASCVD)."""
    text = " ".join([*facts.conditions, *(labels.get(c, "") for c in facts.conditions)]).lower()
    score = 2 if facts.age_years >= 75 else 1 if facts.age_years >= 65 else 0
    score += facts.sex == "F"
    score += "hypertension" in text
    score += "diabet" in text
    score += any(w in text for w in ("heart_failure", "heart failure", "hfref"))
    stroke = any(w in text for w in ("stroke", "transient ischaemic"))
    score += 2 * stroke
    score += any(w in text for w in ("established_ascvd", "myocardial infarction", "peripheral arterial")) and not stroke
    return score


STEMS = [
    ("Assume each medication below would be given at a usual dose for an appropriate indication. Based on this patient's "
    "information, which of them should be avoided, replaced by a safer alternative, or given only at a reduced dose? "
    "Select all that apply."),
    ("A medication review is under way. Taking the patient's characteristics into account, which of the following drugs "
    "is potentially inappropriate for this patient (avoid, choose an alternative, or adjust the dose)? More than one "
    "option may be correct."),
    ("Which of the following medications would be a medication-safety concern for this particular patient, meaning it "
    "should be avoided, swapped for an alternative, or dose-adjusted? Choose every option that applies."),
]


@dataclass
class Base:
    """Everything drawn once for a base case; both members of a pair share it."""

    style: int
    sex: str
    age: float
    indication: str
    background: list[str]
    meds: list[str]
    vitals: str
    labels: dict[str, str] = field(default_factory=dict)
    week: int | None = None
    infant_weeks: int = 6
    carer: str = "mother"
    vitals_position: float = 0.5
    """Where in its age band the heart rate sits (shared by both members of a pair)."""
    temperature: str = "37.0"
    blood_pressure: str = "124/76"


def age_group(age: float) -> str:
    if age < 28 / 365.25:
        return "neonate"
    if age < 2:
        return "infant"
    if age < 18:
        return "child"
    return "older_adult" if age >= 65 else "adult"


def heart_rate_band(age: float) -> tuple[int, int]:
    return next(band for upper, band in HEART_RATE_BANDS if age < upper)


def member_vitals(base: Base, age: float) -> str:
    """The vitals line for a member of `age`: the base's own line when the member is in its age band."""
    if heart_rate_band(age) == heart_rate_band(base.age) and (age < 18) == (base.age < 18):
        return base.vitals
    low, high = heart_rate_band(age)
    rate = round(low + base.vitals_position * (high - low))
    if age < 18:
        return f"Temperature {base.temperature} °C, heart rate {rate}/min."
    return f"BP {base.blood_pressure} mmHg, pulse {rate}/min."


def _coherent_background(base: Base, rule: Rule, ages: list[float], rng_key: str) -> None:
    """Keep only background items plausible at every member's age; redraw from those if none is left."""
    groups = {age_group(a) for a in ages}
    if len(groups) == 1:
        return
    allowed = set.intersection(*(PLAUSIBLE_BACKGROUND[g] for g in groups))
    kept = [b for b in base.background if b in allowed]
    if not kept:
        pool = sorted(allowed)
        kept = random.Random(rng_key).sample(pool, k=min(len(pool), 1)) if pool else []
    base.background = kept
    if any(a < 18 for a in ages):
        base.meds = []  # the adult background medicines are not a child's


def age_coherence_problems(questions: list[Question]) -> list[str]:
    """CF members whose background or heart rate belongs to another age group than their own."""
    background_items = set().union(*PLAUSIBLE_BACKGROUND.values())
    problems = []
    for q in questions:
        if q.kind != "cf" or q.patient is None:
            continue
        age = q.patient.age_years
        wrong = [c for c in q.patient.conditions if c in background_items and c not in PLAUSIBLE_BACKGROUND[age_group(age)]]
        if wrong:
            problems.append(f"{q.id}: age {age:g} with background of another age group: {', '.join(wrong)}")
        # an irregular (atrial fibrillation) pulse follows the arrhythmia, not the age band
        rate = re.search(r"(?:heart rate|pulse) (\d+)/min(?!, irregular)", q.vignette)
        low, high = heart_rate_band(age)
        if rate and not low <= int(rate.group(1)) <= high:
            problems.append(f"{q.id}: age {age:g} with heart rate {rate.group(1)}/min (expected {low}-{high})")
    return problems


def _draw_number(rng: random.Random, cond: Condition, which: str) -> float:
    low, high = getattr(cond, which) or _default_range(cond, which)
    if cond.kind == "age":
        factor = AGE_FACTOR[cond.unit or "years"]
        low_y, high_y = low * factor, high * factor
        if high_y < 0.1:  # neonates: whole days
            return round(rng.randint(round(low_y * 365.25), round(high_y * 365.25)) / 365.25, 4)
        if high_y < 2:  # infants: whole months
            return round(rng.randint(max(1, round(low_y * 12)), round(high_y * 12)) / 12, 4)
        return float(rng.randint(int(low_y + 0.999), int(high_y)))
    return float(rng.randint(int(low), int(high)))


def _default_range(cond: Condition, which: str) -> tuple[float, float]:
    t = float(cond.value)  # type: ignore[arg-type]
    below = cond.op in ("lt", "le")
    gap = max(1.0, abs(t) * 0.1)
    if (which == "active") == below:
        return (max(0.0, t * 0.5), t - gap)
    return (t + gap, t * 1.5 + gap)


def _population_age(rule: Rule, rng: random.Random) -> float:
    age_cond = next((c for c in rule.trigger if c.kind == "age"), None)
    if age_cond is not None:
        return _draw_number(rng, age_cond, "active")
    low, high = rule.context.age or AGES[rule.population]
    return float(rng.randint(int(low), int(high)))


def draw_base(rule: Rule, rng: random.Random) -> Base:
    sex = rule.context.sex if rule.context.sex != "any" else rng.choice("FM")
    if rule.population in ("pregnancy", "lactation"):
        sex = "F"
    pop = rule.population
    age = _population_age(rule, rng)
    indication = rng.choice(rule.context.indication)
    pool = NEONATE_BACKGROUND if age < 0.1 else BACKGROUND[pop]
    # no background item that the complaint contradicts ("gout in remission" beside "an acute gout flare")
    pool = [b for b in pool if not (BACKGROUND_TOPIC.get(b) and BACKGROUND_TOPIC[b] in indication.lower())]
    background = rng.sample(pool, k=min(len(pool), rng.randint(1, 2)))
    meds = [] if pop == "paediatric" else rng.sample(BACKGROUND_MEDS, k=rng.randint(0, 1))
    if pop == "paediatric":
        temperature, rate = draw_child_temperature(rng, rule, indication), rng.randint(90, 130)
        vitals = f"Temperature {temperature} °C, heart rate {rate}/min."
        blood_pressure = "104/64"
        position = (rate - 90) / (130 - 90)  # the base's heart rate as a position in the band it was drawn from
    else:
        blood_pressure = draw_blood_pressure(rng, indication, background, pop == "pregnancy")
        temperature = "37.0"
        if "atrial fibrillation" in indication:
            rate = rng.randint(112, 142) if "fast ventricular rate" in indication else rng.randint(68, 96)
            vitals = f"BP {blood_pressure} mmHg, pulse {rate}/min, irregularly irregular."
            position = 0.5
        else:
            rate = rng.randint(62, 92)
            vitals = f"BP {blood_pressure} mmHg, pulse {rate}/min."
            position = (rate - 62) / (92 - 62)
    labels = {}
    for cond in [*rule.trigger, *(e.when for e in rule.exceptions if e.when)]:
        if cond.kind in ("condition", "co_medication"):
            labels[str(cond.value).lower()] = rng.choice(cond.surface())
    return Base(
        style=rng.randrange(3), sex=sex, age=age, indication=indication,
        background=background, meds=meds, vitals=vitals, labels=labels, week=rng.randint(9, 34),
        infant_weeks=rng.randint(2, 14), carer=rng.choice(["mother", "father"]),
        vitals_position=position, temperature=temperature, blood_pressure=blood_pressure,
    )


def build_facts(rule: Rule, base: Base, rng: random.Random, inactive: Condition | None = None,
                draws: dict[tuple[int, str], float] | None = None, extra: Condition | None = None) -> PatientFacts:
    """Facts in which every trigger condition holds except `inactive` (moved outside the rule); `extra` is added."""
    draws = draws if draws is not None else {}
    facts: dict = {"age_years": base.age, "sex": base.sex, "conditions": list(base.background), "co_medications": []}
    if rule.population == "pregnancy":
        facts.update(pregnant=True, gestational_week=base.week)
    if rule.population == "lactation":
        facts["lactating"] = True
    for i, cond in enumerate(rule.trigger):
        which = "inactive" if cond is inactive else "active"
        if cond.kind in ("age", "crcl", "egfr", "weight", "gestational_week"):
            key = (i, which)
            if key not in draws:
                draws[key] = _draw_number(rng, cond, which)
            value = draws[key]
            field_name = {"age": "age_years", "weight": "weight_kg", "gestational_week": "gestational_week"}.get(cond.kind, cond.kind)
            facts[field_name] = int(value) if cond.kind == "gestational_week" else value
        elif cond.kind in ("pregnant", "lactating"):
            facts[cond.kind] = cond.value if which == "active" else not cond.value
        elif which == "active":
            facts["conditions" if cond.kind == "condition" else "co_medications"].append(str(cond.value).lower())
    if extra is not None:
        facts["conditions" if extra.kind == "condition" else "co_medications"].append(str(extra.value).lower())
    if not facts.get("pregnant"):
        facts["gestational_week"] = None
    facts["co_medications"] += rule.context.presupposes.get(base.indication, [])  # "above target on metformin"
    facts["co_medications"] += [m for m in base.meds]
    return PatientFacts(**facts)


# ---------------------------------------------------------------- rendering (surface form varies by base.style)
def _age_text(facts: PatientFacts, base: Base, pop: str) -> str:
    age = facts.age_years
    child = age < 18
    noun = ("girl" if base.sex == "F" else "boy") if child else ("woman" if base.sex == "F" else "man")
    if age < 0.1:
        days = round(age * 365.25)
        return [f"A {days}-day-old {noun}", f"A neonate ({noun}) aged {days} days", f"A {noun}, day {days} of life,"][base.style]
    if age < 2:
        months = round(age * 12)
        article = "An" if str(months)[0] == "8" or months in (11, 18) else "A"
        return [f"{article} {months}-month-old {noun}", f"A {noun} aged {months} months", f"{article} {months}-month-old infant {noun}"][
            base.style
        ]
    years = int(age)
    if child:
        article = "An" if years in (8, 11, 18) else "A"
        return [f"{article} {years}-year-old {noun}", f"A {noun} aged {years}", f"{article} {years}-year-old {noun}"][base.style]
    article = "An" if str(years).startswith("8") or years in (11, 18) else "A"
    return [
        f"{article} {years}-year-old {noun}",
        f"{noun.capitalize()}, {years} years old,",
        f"{years} y/o {'F' if base.sex == 'F' else 'M'}",
    ][base.style]


def _pregnancy_text(facts: PatientFacts, base: Base) -> str:
    if facts.pregnant:
        w = facts.gestational_week
        return [f"She is {w} weeks pregnant.", f"Obstetric history: G2P1, currently at {w}/40.",
                f"She is pregnant, gestational age {w} weeks by dating scan."][base.style]
    return ["She is not pregnant (negative urine hCG today).", "A pregnancy test today is negative.",
            "She is not pregnant."][base.style]


def _lactation_text(facts: PatientFacts, base: Base) -> str:
    w = base.infant_weeks
    if facts.lactating:
        return [f"She is exclusively breastfeeding her {w}-week-old baby.", f"She gave birth {w} weeks ago and is breastfeeding.",
                f"Postpartum week {w}; breastfeeding on demand."][base.style]
    return [f"She is formula-feeding her {w}-week-old baby and is not breastfeeding.",
            f"She gave birth {w} weeks ago and is bottle-feeding with formula (not breastfeeding).",
            f"Postpartum week {w}; not breastfeeding (formula feeds)."][base.style]


def _renal_text(facts: PatientFacts, base: Base) -> list[str]:
    out = []
    if facts.crcl is not None:
        v = int(facts.crcl)
        out.append([f"Creatinine clearance (Cockcroft-Gault) is {v} mL/min.", f"CrCl {v} mL/min.",
                    f"Estimated creatinine clearance: {v} mL/min."][base.style])
    if facts.egfr is not None:
        v = int(facts.egfr)
        out.append([f"eGFR {v} mL/min/1.73 m².", f"Estimated GFR is {v} mL/min/1.73 m².", f"Latest eGFR: {v}."][base.style])
    return out


def render_vignette(rule: Rule, facts: PatientFacts, base: Base, negated: list[str]) -> str:
    pop = rule.population
    intro = _age_text(facts, base, pop)
    if facts.age_years < 0.1:
        verb = ["is assessed on the neonatal unit for", "is reviewed on the neonatal unit with", "presents with"][base.style]
    elif facts.age_years < 18:
        verb = [f"is brought in by {'her' if base.sex == 'F' else 'his'} {base.carer} with", "is seen in the paediatric clinic for",
                "presents with"][base.style]
    else:
        verb = ["presents with", "is seen in clinic for", "attends for review of"][base.style]
    indication = base.indication.replace("{cha2ds2_vasc}", str(cha2ds2_vasc(facts, base.labels)))
    parts = [f"{intro} {verb} {indication}."]
    if pop == "pregnancy":
        parts.append(_pregnancy_text(facts, base))
    if pop == "lactation":
        parts.append(_lactation_text(facts, base))
    history = [base.labels.get(c, c) for c in facts.conditions]
    history += negated
    lead = ["History and current problems: ", "Background: ", "Problem list: "][base.style]
    parts.append(lead + "; ".join(history) + ".")
    meds = [base.labels.get(m, m) for m in facts.co_medications]
    if meds:
        parts.append(["Current medications: ", "Regular medicines: ", "Meds: "][base.style] + "; ".join(meds) + ".")
    else:
        parts.append(["No regular medications.", "Takes no regular medicines.", "Meds: none."][base.style])
    parts.extend(_renal_text(facts, base))
    if facts.weight_kg is not None:
        w = f"{facts.weight_kg:g}"
        parts.append([f"Weight {w} kg.", f"Body weight: {w} kg.", f"Wt {w} kg."][base.style])
    parts.append(member_vitals(base, facts.age_years))
    return " ".join(parts)


# ---------------------------------------------------------------- options and questions
def choose_options(rule: Rule, versions: list[PatientFacts], rules: list[Rule], rng: random.Random, multi: bool) -> dict[str, str | None]:
    """Letter -> drug (None for "None of the above"): the rule's drug, distractors that no rule flags for any version,
    and, when `multi`, one more drug flagged by another rule in every version."""
    taken = set(rule.names()) | {m.lower() for v in versions for m in v.co_medications}

    def already_taken(drug: str) -> bool:  # "amlodipine" is taken by "amlodipine 10 mg daily"
        return any(drug.lower() == t or t.startswith(drug.lower() + " ") for t in taken)

    pool = [d for d in (rule.context.distractors or POOLS[rule.population])
            if not already_taken(d) and not any(drug_flagged(d, v, rules) for v in versions)]
    drugs = [rule.medication]
    if multi:
        others = sorted({r.medication for r in rules
                         if not already_taken(r.medication) and r.drug_class != rule.drug_class
                         and all(r.applies(v) for v in versions)})
        if others:
            drugs.append(rng.choice(others))
    drugs += rng.sample(pool, k=min(len(pool), 4 - len(drugs)))
    rng.shuffle(drugs)
    letters = [chr(ord("A") + i) for i in range(len(drugs) + 1)]
    return dict(zip(letters, [*drugs, None], strict=False))


def _question(rule: Rule, qid: str, kind: str, facts: PatientFacts, base: Base, option_drugs: dict[str, str | None],
              rules: list[Rule], stem: str, negated: list[str], operation: str | None = None, pair_id: str | None = None,
              changed: ChangedFact | None = None, info_type: str | None = None) -> Question:
    options = {k: (d if d is not None else NONE_OF_THE_ABOVE) for k, d in option_drugs.items()}
    q = Question(
        id=qid, rule_id=rule.id, kind=kind, operation=operation, pair_id=pair_id,  # type: ignore[arg-type]
        vignette=render_vignette(rule, facts, base, negated), question=stem, options=options, answer=["A"],
        multi_select=True,
        dimensions=Dimensions(
            organ_system=rule.organ_system, department=rule.department, drug_category=rule.drug_category,
            special_population=rule.population, patient_info_type=info_type or _gf_info_type(rule),
            reasoning_operation=operation or "application",
        ),
        changed_fact=changed, source=rule.source.cite(), patient=facts, option_drugs=option_drugs,
    )
    q.answer = gold_from_facts(q, rules)
    return q


def _gf_info_type(rule: Rule) -> str:
    if any(c.kind == "gestational_week" for c in rule.trigger):
        return INFO_TYPE["gestational_week"]
    return INFO_TYPE[rule.varied.kind]


def _describe(cond: Condition, facts: PatientFacts, base: Base) -> str:
    if cond.kind == "age":
        age = facts.age_years
        return f"age {round(age * 365.25)} days" if age < 0.1 else f"age {round(age * 12)} months" if age < 2 else f"age {int(age)} years"
    if cond.kind == "crcl":
        return f"CrCl {int(facts.crcl or 0)} mL/min"
    if cond.kind == "egfr":
        return f"eGFR {int(facts.egfr or 0)} mL/min/1.73 m²"
    if cond.kind == "weight":
        return f"weight {facts.weight_kg} kg"
    if cond.kind == "gestational_week":
        return f"{facts.gestational_week} weeks pregnant"
    if cond.kind == "pregnant":
        return f"pregnant ({facts.gestational_week} weeks)" if facts.pregnant else "not pregnant"
    if cond.kind == "lactating":
        return "breastfeeding" if facts.lactating else "not breastfeeding"
    key = str(cond.value).lower()
    present = key in (facts.conditions if cond.kind == "condition" else facts.co_medications)
    if present:
        return base.labels.get(key, key)
    if cond.kind == "condition":
        return cond.negated or f"no {cond.label}"
    return f"not taking {cond.value}"


def _pair(rule: Rule, rules: list[Rule], rng: random.Random, tag: str, cond: Condition, exception: bool) -> list[Question]:
    base = draw_base(rule, rng)
    draws: dict[tuple[int, str], float] = {}
    if cond.kind == "age" and not exception:
        # Draw both ages first (cached in `draws`), then make the shared background fit both.
        ages = [build_facts(rule, base, rng, draws=draws).age_years,
                build_facts(rule, base, rng, inactive=cond, draws=draws).age_years]
        _coherent_background(base, rule, ages, f"{SEED}:{rule.id}:{tag}:background")
    if exception:
        active = build_facts(rule, base, rng, draws=draws)
        inactive = build_facts(rule, base, rng, draws=draws, extra=cond)
        negated_active, negated_inactive = [cond.negated] if cond.negated else [], []
        kind = "exception"
    else:
        active = build_facts(rule, base, rng, draws=draws)
        inactive = build_facts(rule, base, rng, inactive=cond, draws=draws)
        negated_active = []
        negated_inactive = [cond.negated] if cond.kind == "condition" and cond.negated else []
        kind = cond.kind
    option_drugs = choose_options(rule, [active, inactive], rules, rng, multi=False)
    stem = STEMS[base.style]
    pair_id = f"{rule.id}:{tag}"
    a_text, d_text = _describe(cond, active, base), _describe(cond, inactive, base)
    info = "exception" if exception else INFO_TYPE[cond.kind]
    act = _question(rule, f"{pair_id}:activation", "cf", active, base, option_drugs, rules, stem, negated_active, "activation",
                    pair_id, ChangedFact(kind=kind, before=d_text, after=a_text, description=f"{d_text} -> {a_text}"), info)
    deact = _question(
        rule,
        f"{pair_id}:deactivation",
        "cf",
        inactive,
        base,
        option_drugs,
        rules,
        stem,
        negated_inactive,
        "deactivation",
        pair_id,
        ChangedFact(kind=kind, before=a_text, after=d_text, description=f"{a_text} -> {d_text}"),
        info,
    )
    return [act, deact]


def generate(rules: list[Rule], seed: int = SEED) -> list[Question]:
    return generate_with_summary(rules, seed)[0]


def generate_with_summary(rules: list[Rule], seed: int = SEED) -> tuple[list[Question], dict[str, list[str]]]:
    """The questions, and the pairs not generated by reason (rule ids)."""
    questions: list[Question] = []
    not_generated: dict[str, list[str]] = {"advice_holds_outside_trigger": []}
    for rule in rules:
        rng = random.Random(f"{seed}:{rule.id}")
        for k in range(GF_PER_RULE):
            base = draw_base(rule, rng)
            facts = build_facts(rule, base, rng)
            option_drugs = choose_options(rule, [facts], rules, rng, multi=k == GF_PER_RULE - 1)
            questions.append(_question(rule, f"{rule.id}:gf{k + 1}", "gf", facts, base, option_drugs, rules, STEMS[base.style], []))
        if not rule.counterfactual:
            continue
        if rule.trigger_pair_valid:
            questions += _pair(rule, rules, rng, "pair-trigger", rule.varied, exception=False)
        else:
            # Outside the trigger the advice still holds (rule.outside_trigger says why), so a deactivation
            # member with the answer "None of the above" would be wrong: the pair is not written, and counted.
            not_generated["advice_holds_outside_trigger"].append(rule.id)
        for i, exc in enumerate(e for e in rule.exceptions if e.when is not None):
            questions += _pair(rule, rules, rng, f"pair-exception{i + 1}", exc.when, exception=True)  # type: ignore[arg-type]
    return questions, not_generated


def summary_lines(questions: list[Question], not_generated: dict[str, list[str]]) -> list[str]:
    """What the generator wrote and what it left out (printed by `main`, quoted in docs/medpic.md)."""
    gf = sum(q.kind == "gf" for q in questions)
    pairs = len({q.pair_id for q in questions if q.pair_id})
    skipped = not_generated.get("advice_holds_outside_trigger", [])
    return [f"{len(questions)} questions: {gf} GF, {len(questions) - gf} CF in {pairs} pairs",
            f"trigger pairs not generated (the advice also holds outside the trigger): {len(skipped)}"
            + (f" ({', '.join(skipped)})" if skipped else "")]


def to_jsonl(questions: list[Question]) -> str:
    return "".join(json.dumps(q.model_dump(mode="json"), ensure_ascii=False) + "\n" for q in questions)


def write_questions(path: str | Path = QUESTIONS_PATH, rules_path: str | Path = RULES_PATH) -> Path:
    """Generate from the rules, refuse to write anything that fails the self-check, and write the JSONL."""
    rules = load_rules(rules_path)
    questions = generate(rules)
    problems = self_check(questions, rules) + age_coherence_problems(questions)
    if problems:
        raise ValueError("MedRule2Pair self-check failed:\n" + "\n".join(problems[:30]))
    path = Path(path)
    temp = path.with_name(path.name + ".tmp")
    temp.write_text(to_jsonl(questions), encoding="utf-8")
    temp.replace(path)  # atomic: a reader never sees half a file
    return path


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    out = write_questions(argv[0] if argv else QUESTIONS_PATH)
    print(f"wrote {out}")
    for line in summary_lines(*generate_with_summary(load_rules(RULES_PATH))):
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
