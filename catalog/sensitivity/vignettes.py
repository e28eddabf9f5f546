"""Synthetic diagnostic vignettes for the sensitivity suite: schema, presentations and a seeded generator.

Twelve common acute presentations, five vignettes each (age, sex, vitals and wording vary by a
seeded draw). Every vignette has a gold diagnosis, a fixed list of 4-6 candidates, its key
findings, and the material the perturbations use: a supporting sign that can be added, a key
finding that can be removed, a result that argues against the gold diagnosis, alternative
wordings of the complaint, and the expected effect of a much longer history. Synthetic;
findings follow standard textbook and guideline descriptions (sources per presentation).

What a result that argues against the gold does is set per presentation (`conflicting_expected`):
a result that conflicts with another finding of the same kind (two chest X-rays, two CSF samples) adds
uncertainty without a confident switch (`entropy_up_no_flip`); a reference-standard rule-out or a result
that establishes another diagnosis makes a confident move right, so the expectation is the gold falling
(`down`) or, where the result names the diagnosis, a confident move to it (`flip_to_target`, with
`conflicting_target`). Vitals are drawn from ranges that fit each presentation (`VITALS`), so no
non-infective vignette is febrile and a complaint of fever comes with one.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from clinical_cf.core.loading import load_jsonl

SEED = 20261129
PER_PRESENTATION = 5


class Vignette(BaseModel):
    model_config = ConfigDict(extra="forbid")

    vignette_id: str
    presentation: str
    age: int = Field(ge=16, le=95)
    sex: Literal["F", "M"]
    complaint: str
    complaint_synonym: str
    complaint_vague: str
    duration: str
    duration_long: str
    findings: list[str] = Field(min_length=2)
    vitals: str
    background: list[str] = Field(default_factory=list)
    gold: str
    candidates: list[str] = Field(min_length=4, max_length=6)
    key_findings: list[str] = Field(min_length=1)
    supporting_sign: str
    removable_finding: str
    conflicting_result: str
    timeline_expected: Literal["up", "down", "invariant"] | None = None
    conflicting_expected: Literal["entropy_up_no_flip", "down", "flip_to_target"] = "entropy_up_no_flip"
    conflicting_target: str | None = None
    settled_by: list[str] = Field(default_factory=list)
    """Findings that together establish the gold by the criteria `source` cites (a rising troponin with ischaemic
    ECG changes, DKA's pH, bicarbonate and ketones, a bacterial CSF). While they are all present, a background or a
    longer history owes no change: perturbations that require `unsettled` skip the vignette."""
    source: str

    @model_validator(mode="after")
    def _coherent(self) -> Vignette:
        if self.gold not in self.candidates:
            raise ValueError("gold diagnosis must be one of the candidates")
        if self.removable_finding not in self.findings:
            raise ValueError("removable_finding must be one of the findings")
        if any(f not in self.findings for f in self.settled_by):
            raise ValueError("settled_by names only findings of this vignette")
        if (self.conflicting_expected == "flip_to_target") != (self.conflicting_target is not None):
            raise ValueError("conflicting_target is given exactly when conflicting_expected is flip_to_target")
        if self.conflicting_target is not None and (self.conflicting_target not in self.candidates or self.conflicting_target == self.gold):
            raise ValueError("conflicting_target must be a candidate other than the gold")
        return self

    def settled(self) -> bool:
        """Whether the findings that settle the gold (`settled_by`) are all present."""
        return bool(self.settled_by) and all(f in self.findings for f in self.settled_by)

    def render(self) -> str:
        who = "woman" if self.sex == "F" else "man"
        parts = [f"A {self.age}-year-old {who} presents with {self.complaint} for {self.duration}."]
        parts.append("On evaluation: " + "; ".join(self.findings) + ".")
        parts.append(f"Vital signs: {self.vitals}.")
        if self.background:
            parts.append("History: " + "; ".join(self.background) + ".")
        return " ".join(parts)


@dataclass(frozen=True)
class Presentation:
    key: str
    gold: str
    candidates: tuple[str, ...]
    complaint: str
    synonym: str
    vague: str
    duration: str
    duration_long: str
    findings: tuple[str, ...]
    removable: str
    supporting: str
    conflicting: str
    timeline_expected: Literal["up", "down", "invariant"] | None
    sex: Literal["F", "M"] | None
    ages: tuple[int, int]
    vitals: str
    source: str
    conflicting_expected: Literal["entropy_up_no_flip", "down", "flip_to_target"] = "entropy_up_no_flip"
    conflicting_target: str | None = None
    settled_by: tuple[str, ...] = ()


PRESENTATIONS: tuple[Presentation, ...] = (
    Presentation("cap", "Community-acquired pneumonia", ("Community-acquired pneumonia", "Acute bronchitis", "Pulmonary embolism", "Acute decompensated heart failure", "Lung cancer"),
                 "productive cough and fever", "fever with a wet cough", "feeling unwell with some cough", "3 days", "4 months",
                 ("crackles over the right lower zone", "right lower lobe consolidation on chest X-ray", "WBC 15.2 K/uL"), "right lower lobe consolidation on chest X-ray",
                 "bronchial breathing and egophony over the right lower lobe", "repeat chest X-ray read as clear lungs without consolidation", "down", None, (30, 85),
                 "T {t} C, HR {hr}, BP {bp}, RR 24, SpO2 92% on room air", "IDSA/ATS CAP guideline 2019 (clinical and radiographic diagnosis)"),
    Presentation("appendicitis", "Acute appendicitis", ("Acute appendicitis", "Gastroenteritis", "Mesenteric adenitis", "Right ureteric colic", "Constipation"),
                 "abdominal pain that started around the umbilicus and moved to the right lower quadrant", "periumbilical pain migrating to the right iliac fossa", "tummy pain", "18 hours", "3 weeks",
                 ("tenderness at McBurney's point", "anorexia and one episode of vomiting", "WBC 13.8 K/uL"), "tenderness at McBurney's point",
                 "rebound tenderness and a positive Rovsing sign", "ultrasound showing a normal compressible appendix", "down", None, (16, 60),
                 "T {t} C, HR {hr}, BP {bp}", "Alvarado score; WSES Jerusalem guidelines 2020 (diagnosis of acute appendicitis)",
                 # a fully visualised normal compressible appendix rules appendicitis out (WSES 2020): gold down, a move is right
                 conflicting_expected="down"),
    Presentation("acs", "Acute coronary syndrome (NSTEMI)", ("Acute coronary syndrome (NSTEMI)", "Stable angina", "Pericarditis", "Gastro-oesophageal reflux", "Pulmonary embolism"),
                 "crushing central chest pain radiating to the left arm", "pressure-like retrosternal pain spreading to the left arm", "chest discomfort", "2 hours", "2 years",
                 ("diaphoresis", "ST depression in V4-V6", "high-sensitivity troponin T 85 ng/L rising to 140 ng/L"), "high-sensitivity troponin T 85 ng/L rising to 140 ng/L",
                 "new S4 gallop and a troponin rise on repeat sampling", "coronary CT angiography with no coronary stenosis", "down", None, (45, 85),
                 "T {t} C, HR {hr}, BP {bp}", "ESC 2023 ACS guideline (0/1 h hs-troponin algorithm; fourth universal definition of MI)",
                 # a rise of hs-troponin above the 99th centile with ischaemic ECG changes is an acute MI by the fourth
                 # universal definition, however long the history (clinical review 2)
                 settled_by=("ST depression in V4-V6", "high-sensitivity troponin T 85 ng/L rising to 140 ng/L")),
    Presentation("pe", "Pulmonary embolism", ("Pulmonary embolism", "Community-acquired pneumonia", "Acute coronary syndrome (NSTEMI)", "Pneumothorax", "Anxiety"),
                 "sudden shortness of breath and pleuritic chest pain", "abrupt breathlessness with sharp chest pain on inspiration", "feeling short of breath", "1 day", "6 months",
                 ("swollen tender left calf", "D-dimer 2,400 ng/mL", "sinus tachycardia on ECG"), "swollen tender left calf",
                 "right ventricular strain on bedside echocardiography", "CT pulmonary angiogram with no filling defect", "down", None, (25, 80),
                 "T {t} C, HR {hr}, BP {bp}, SpO2 90% on room air", "ESC 2019 acute PE guideline (Wells score, D-dimer, CTPA)",
                 # a negative CTPA excludes PE (ESC 2019, section 5): gold down, a confident move away is right
                 conflicting_expected="down"),
    Presentation("stroke", "Acute ischaemic stroke", ("Acute ischaemic stroke", "Intracerebral haemorrhage", "Hypoglycaemia", "Todd's paresis after seizure", "Migraine with aura"),
                 "sudden weakness of the right arm and leg with slurred speech", "abrupt right-sided hemiparesis with dysarthria", "feeling weak", "90 minutes", "3 months",
                 ("right facial droop", "NIHSS 9", "capillary glucose 6.1 mmol/L"), "right facial droop",
                 "CT angiography showing left middle cerebral artery occlusion", "non-contrast CT showing an acute left basal ganglia haemorrhage", "down", None, (50, 90),
                 "T {t} C, HR {hr}, BP 178/96", "AHA/ASA 2019 acute ischaemic stroke guideline",
                 # non-contrast CT showing acute blood is diagnostic of ICH (AHA/ASA 2022 ICH guideline, section 3): the right
                 # answer is a confident move to intracerebral haemorrhage
                 conflicting_expected="flip_to_target", conflicting_target="Intracerebral haemorrhage"),
    Presentation("dka", "Diabetic ketoacidosis", ("Diabetic ketoacidosis", "Hyperosmolar hyperglycaemic state", "Acute pancreatitis", "Gastroenteritis", "Alcoholic ketoacidosis"),
                 "vomiting, abdominal pain and excessive thirst", "nausea with vomiting, belly pain and polydipsia", "feeling sick", "2 days", "5 weeks",
                 ("glucose 28 mmol/L", "venous pH 7.12 with bicarbonate 9 mmol/L", "blood ketones 5.8 mmol/L"), "blood ketones 5.8 mmol/L",
                 "Kussmaul breathing and ketotic breath", "blood ketones 0.3 mmol/L on repeat testing", None, None, (16, 60),
                 "T {t} C, HR {hr}, BP {bp}, RR 28", "JBDS 2023 / ADA 2024 DKA consensus (diagnostic criteria)",
                 # glucose, pH below 7.3 with bicarbonate below 15 and ketones of 3 or more meet the diagnostic criteria
                 settled_by=("glucose 28 mmol/L", "venous pH 7.12 with bicarbonate 9 mmol/L", "blood ketones 5.8 mmol/L")),
    Presentation("sepsis", "Sepsis from a urinary source", ("Sepsis from a urinary source", "Viral illness", "Pneumonia", "Intra-abdominal sepsis", "Drug reaction"),
                 "fever, rigors and confusion", "high temperature with shaking chills and new confusion", "feeling off", "1 day", "2 months",
                 ("dysuria and suprapubic tenderness", "lactate 4.1 mmol/L", "urinalysis with nitrites and leukocyte esterase"), "urinalysis with nitrites and leukocyte esterase",
                 "blood cultures growing Gram-negative rods", "urinalysis and urine culture both negative", "down", None, (60, 92),
                 "T {t} C, HR {hr}, BP 88/50", "Surviving Sepsis Campaign 2021; Sepsis-3 definitions"),
    Presentation("meningitis", "Bacterial meningitis", ("Bacterial meningitis", "Viral meningitis", "Subarachnoid haemorrhage", "Migraine", "Influenza"),
                 "severe headache, fever and neck stiffness", "intense headache with high temperature and a stiff neck", "a bad headache", "12 hours", "3 weeks",
                 ("photophobia", "positive Kernig sign", "CSF neutrophils 1,800 cells/uL with glucose 1.2 mmol/L"), "CSF neutrophils 1,800 cells/uL with glucose 1.2 mmol/L",
                 "non-blanching petechial rash on the trunk", "CSF with 12 lymphocytes/uL and normal glucose and protein", "down", None, (18, 75),
                 "T {t} C, HR {hr}, BP {bp}", "ESCMID 2016 acute bacterial meningitis guideline",
                 # a neutrophilic CSF with a low glucose is bacterial meningitis among these candidates (ESCMID 2016)
                 settled_by=("CSF neutrophils 1,800 cells/uL with glucose 1.2 mmol/L",)),
    Presentation("ectopic", "Ruptured ectopic pregnancy", ("Ruptured ectopic pregnancy", "Miscarriage", "Ovarian torsion", "Acute appendicitis", "Ruptured ovarian cyst"),
                 "lower abdominal pain and vaginal spotting after a missed period", "pelvic pain with light bleeding and amenorrhoea", "some lower tummy pain", "6 hours", "2 months",
                 ("positive urine pregnancy test", "left adnexal tenderness", "free fluid in the pouch of Douglas on ultrasound"), "free fluid in the pouch of Douglas on ultrasound",
                 "serum beta-hCG 2,900 IU/L with an empty uterus on transvaginal ultrasound", "transvaginal ultrasound showing an intrauterine gestational sac with yolk sac", None, "F", (18, 42),
                 "T {t} C, HR {hr}, BP 96/60", "NICE NG126 (2019, updated 2023) ectopic pregnancy and miscarriage",
                 # an intrauterine pregnancy makes ectopic very unlikely (heterotopic about 1 in 30,000 without assisted
                 # conception): gold down, a confident move to another cause is right
                 conflicting_expected="down"),
    Presentation("hf", "Acute decompensated heart failure", ("Acute decompensated heart failure", "Community-acquired pneumonia", "COPD exacerbation", "Pulmonary embolism", "Nephrotic syndrome"),
                 "worsening breathlessness, orthopnoea and ankle swelling", "increasing shortness of breath lying flat with swollen ankles", "more tired and puffy", "1 week", "1 year",
                 ("bibasal crackles", "raised jugular venous pressure", "NT-proBNP 4,800 pg/mL"), "NT-proBNP 4,800 pg/mL",
                 "third heart sound and pulmonary oedema on chest X-ray", "NT-proBNP 60 pg/mL", "invariant", None, (55, 92),
                 "T {t} C, HR {hr}, BP {bp}, SpO2 91% on room air", "ESC 2021 heart failure guideline (natriuretic peptides, congestion)"),
    Presentation("cholecystitis", "Acute cholecystitis", ("Acute cholecystitis", "Biliary colic", "Acute pancreatitis", "Peptic ulcer disease", "Right lower lobe pneumonia"),
                 "constant right upper quadrant pain and fever", "persistent right subcostal pain with a temperature", "pain under the ribs", "1 day", "8 months",
                 ("positive Murphy sign", "WBC 14.1 K/uL", "ultrasound with gallstones and a thickened gallbladder wall"), "ultrasound with gallstones and a thickened gallbladder wall",
                 "pericholecystic fluid on ultrasound", "HIDA scan with normal gallbladder filling", "down", None, (30, 85),
                 "T {t} C, HR {hr}, BP {bp}", "Tokyo Guidelines 2018 (TG18) acute cholecystitis criteria",
                 # cholescintigraphy is the most accurate test; normal gallbladder filling excludes acute cholecystitis (TG18)
                 conflicting_expected="down"),
    Presentation("pyelo", "Acute pyelonephritis", ("Acute pyelonephritis", "Lower urinary tract infection", "Renal colic", "Acute appendicitis", "Pelvic inflammatory disease"),
                 "fever, flank pain and burning on passing urine", "temperature with loin pain and dysuria", "back ache", "2 days", "4 months",
                 ("left costovertebral angle tenderness", "urinalysis with nitrites and leukocytes", "temperature 38.8 C"), "left costovertebral angle tenderness",
                 "urine culture growing E. coli above 10^5 CFU/mL", "CT showing an obstructing 7 mm left ureteric stone with a normal renal parenchyma", "down", None, (18, 70),
                 "T {t} C, HR {hr}, BP {bp}", "IDSA 2011 / EAU 2024 urological infections guideline"),
)


# Vital-sign ranges per presentation: (temperature low, high in C; heart rate low, high per min). Infective
# presentations whose complaint says fever are febrile (>= 38.0 C); non-infective ones are afebrile (a fever
# would point elsewhere); tachycardia where the presentation causes it (PE with "sinus tachycardia" on the
# ECG, haemorrhagic shock in ruptured ectopic, dehydration in DKA, sepsis). Pyelonephritis lists
# "temperature 38.8 C" among its findings, so its vitals line says the same.
VITALS: dict[str, tuple[float, float, int, int]] = {
    "cap": (38.0, 39.4, 96, 120),
    "appendicitis": (37.3, 38.3, 84, 104),  # low-grade fever is typical (Alvarado: >= 37.3)
    "acs": (36.5, 37.3, 72, 104),
    "pe": (36.6, 37.6, 102, 124),
    "stroke": (36.4, 37.2, 64, 96),
    "dka": (36.2, 37.4, 104, 128),  # DKA is usually normothermic or hypothermic without infection
    "sepsis": (38.6, 39.8, 108, 132),
    "meningitis": (38.5, 39.8, 100, 124),
    "ectopic": (36.5, 37.3, 104, 128),
    "hf": (36.4, 37.2, 88, 118),
    "cholecystitis": (38.0, 38.9, 92, 112),  # fever is a TG18 systemic sign and the complaint says so
    "pyelo": (38.8, 38.8, 96, 118),
}
# Candidates that need a female pelvis are replaced for a man by the counterpart in that differential
# (EAU 2024: febrile urinary infection in a man involves the prostate).
MALE_CANDIDATE = {"Pelvic inflammatory disease": "Acute prostatitis"}


def _vitals(key: str, template: str, rng: random.Random) -> str:
    t_low, t_high, hr_low, hr_high = VITALS[key]
    return template.format(t=f"{rng.uniform(t_low, t_high):.1f}", hr=rng.randint(hr_low, hr_high),
                           bp=f"{rng.randint(100, 150)}/{rng.randint(60, 92)}")


def generate_vignettes(seed: int = SEED) -> list[Vignette]:
    out: list[Vignette] = []
    for p in PRESENTATIONS:
        for i in range(1, PER_PRESENTATION + 1):
            vid = f"sens-{p.key}-{i:02d}"
            rng = random.Random(int(hashlib.sha256(f"{seed}:{vid}".encode()).hexdigest()[:12], 16))
            findings = list(p.findings)
            rng.shuffle(findings)
            age, sex = rng.randint(*p.ages), p.sex or rng.choice(("F", "M"))
            candidates = [MALE_CANDIDATE.get(c, c) if sex == "M" else c for c in p.candidates]
            rng.shuffle(candidates)  # the gold is not always option A
            out.append(Vignette(
                vignette_id=vid, presentation=p.key, age=age, sex=sex,
                complaint=p.complaint, complaint_synonym=p.synonym, complaint_vague=p.vague,
                duration=p.duration, duration_long=p.duration_long, findings=findings, vitals=_vitals(p.key, p.vitals, rng),
                background=rng.sample(["hypertension", "type 2 diabetes", "hyperlipidaemia", "ex-smoker"], k=rng.randint(0, 2)),
                gold=p.gold, candidates=candidates, key_findings=[p.removable],
                supporting_sign=p.supporting, removable_finding=p.removable, conflicting_result=p.conflicting,
                timeline_expected=p.timeline_expected, conflicting_expected=p.conflicting_expected,
                conflicting_target=p.conflicting_target, settled_by=list(p.settled_by), source=p.source,
            ))
    return out


def write_vignettes(path: Path, seed: int = SEED) -> Path:
    temp = path.with_name(path.name + ".tmp")
    temp.write_text("".join(v.model_dump_json() + "\n" for v in generate_vignettes(seed)), encoding="utf-8")
    temp.replace(path)  # atomic: a reader never sees half a file
    return path


def load_vignettes(path: str | Path) -> list[Vignette]:
    """Load and validate a JSONL file of vignettes; errors name the file, vignette id and field."""
    return load_jsonl(path, Vignette, "vignette_id")


if __name__ == "__main__":
    from clinical_cf.catalog.sensitivity import VIGNETTES_PATH

    print(write_vignettes(VIGNETTES_PATH))
