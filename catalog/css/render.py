"""Render a CSS case's structured record into the ten chart sections of a packet.

Why this module exists: `mutation_mode=structured` changes a case's key facts and
`record`, then re-renders. For the change to reach every sentence that states the fact,
every fact statement in the packet is *derived* here from structured fields, never copied
from free text:

* biomarker statements from `case.biomarkers` (which markers exist and their status) and
  `record.biomarkers` (result, method, date);
* stage from `case.stage`, `record.tnm` and `record.metastatic_sites`;
* surgery from `record.resection` (operative note and post-op visit are synthesised here);
* prior therapy and progression from `record.treatment_lines` (start, completion and
  progression visits are synthesised here);
* castration status from `record.castration_status`; ECOG from `record.ecog`.

`record.encounters[].note` is fact-neutral free text (symptoms, social history, exam,
logistics); the renderer appends the fact statements a note of that kind would carry.

Rendering is pure: every stylistic choice (phrasing variant, author, extra history at
`scale` > 1) comes from a `random.Random` seeded with sha256(case_id + a fixed key for that
choice), so changing one fact leaves all other text byte-identical.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Literal, TypeVar

from clinical_cf.catalog.css import staging
from clinical_cf.catalog.css.schema import SECTIONS, Biomarker, Case, Encounter, LabResult, PatientRecord, TreatmentLine, Vitals

DateFormat = Literal["iso", "us"]
T = TypeVar("T")

# ---------------------------------------------------------------------------------------
# Phrase tables. Each list is a set of surface forms; one is chosen per case (seeded) and
# used consistently everywhere the fact appears in that case.
# ---------------------------------------------------------------------------------------

CBC_TESTS: tuple[tuple[str, str, float, float], ...] = (
    ("WBC", "K/uL", 4.0, 11.0),
    ("Hgb", "g/dL", 12.0, 16.0),
    ("Hct", "%", 36.0, 46.0),
    ("Plt", "K/uL", 150.0, 400.0),
    ("ANC", "K/uL", 1.8, 7.7),
    ("ALC", "K/uL", 1.0, 4.0),
)
"""CBC analytes: name, unit, reference low, reference high."""

CMP_TESTS: tuple[tuple[str, str, float, float], ...] = (
    ("Na", "mmol/L", 135.0, 145.0),
    ("K", "mmol/L", 3.5, 5.1),
    ("Cl", "mmol/L", 98.0, 107.0),
    ("CO2", "mmol/L", 22.0, 29.0),
    ("BUN", "mg/dL", 7.0, 20.0),
    ("Cr", "mg/dL", 0.6, 1.2),
    ("Glucose", "mg/dL", 70.0, 99.0),
    ("Ca", "mg/dL", 8.6, 10.3),
    ("Albumin", "g/dL", 3.5, 5.0),
    ("T bili", "mg/dL", 0.2, 1.2),
    ("AST", "U/L", 10.0, 40.0),
    ("ALT", "U/L", 7.0, 56.0),
    ("ALP", "U/L", 44.0, 147.0),
)
"""CMP analytes. No 'eGFR' and no 'Alk phos': they would collide with the EGFR and ALK
marker names that a biomarker-deletion check must not find."""

REFERENCE_RANGES: dict[str, tuple[str, float, float]] = {n: (u, lo, hi) for n, u, lo, hi in CBC_TESTS + CMP_TESTS}

RESECTION_TEMPLATES = ("s/p {proc}", "status post {proc}", "underwent {proc}")
PROCEDURE_ALIASES: dict[str, tuple[str, ...]] = {
    "pancreaticoduodenectomy (Whipple)": ("Whipple", "pancreaticoduodenectomy (Whipple)", "pancreaticoduodenectomy"),
    "total abdominal hysterectomy, bilateral salpingo-oophorectomy and omentectomy (TAH/BSO)": (
        "TAH/BSO and omentectomy (optimal debulking)",
        "TAH/BSO, omentectomy and tumor debulking",
    ),
    "robotic-assisted radical prostatectomy with pelvic lymph node dissection": (
        "radical prostatectomy",
        "RALP with PLND",
        "robotic-assisted radical prostatectomy with pelvic LN dissection",
    ),
}
UNRESECTED_LOCALIZED = ("surgical evaluation pending", "no surgery to date", "not yet operated; surgical evaluation pending")
UNRESECTED_METASTATIC = ("no surgery to date", "no cancer-directed surgery to date")
PROGRESSION_WORDS = ("progressive disease", "progression on restaging", "PD on restaging imaging")
OUTCOME_WORDS: dict[str, str] = {
    "completed": "completed as planned",
    "toxicity": "discontinued for toxicity",
    "stopped": "discontinued",
    "ongoing": "ongoing",
}
CASTRATION_SENSITIVE = ("castration-sensitive", "hormone-sensitive")
CASTRATION_SENSITIVE_MET = ("castration-sensitive", "hormone-sensitive (mHSPC)", "mCSPC")
CASTRATION_RESISTANT = ("castration-resistant (CRPC; testosterone <50 ng/dL with rising PSA)", "castration-resistant", "CRPC")
CASTRATION_RESISTANT_MET = ("castration-resistant (CRPC; testosterone <50 ng/dL with rising PSA)", "mCRPC", "castration-resistant")
NO_MARKERS = "Receptor/biomarker testing not available in outside records."

ONCOLOGISTS = ("Dr. A. Whitcombe", "Dr. R. Okafor", "Dr. L. Marchetti", "Dr. S. Hadley", "Dr. P. Vasquez", "Dr. J. Lindqvist")
SURGEONS = ("Dr. M. Ferrante", "Dr. K. Abernathy", "Dr. T. Nakashima", "Dr. E. Brennan", "Dr. D. Sorensen")
NURSES = ("K. Doyle, RN", "M. Castillo, RN", "J. Pruitt, RN", "A. Ng, NP", "S. Kowalski, RN")
PCPS = ("Dr. H. Gallagher", "Dr. N. Patel", "Dr. C. Romero", "Dr. B. Oyelaran")

BIOPSY: dict[str, tuple[str, ...]] = {
    "breast": ("US-guided core needle biopsy", "stereotactic core biopsy"),
    "nsclc": ("CT-guided core needle biopsy", "EBUS-TBNA with bronchoscopic biopsy"),
    "colorectal": ("colonoscopy with biopsy",),
    "pancreatic": ("EUS-guided fine-needle biopsy (EUS-FNB)",),
    "gastric": ("EGD with biopsy",),
    "melanoma": ("full-thickness punch biopsy",),
    "ovarian": ("CT-guided omental core biopsy", "diagnostic laparoscopy with peritoneal biopsy"),
    "prostate": ("MRI-fusion transperineal prostate biopsy", "TRUS-guided 12-core prostate biopsy"),
}

CHEMO_KEYWORDS = (
    "folf", "capox", "platin", "taxel", "gemcitabine", "doxorubicin", "cyclophosphamide", "flot",
    "irinotecan", "fluorouracil", "5-fu", "tchp", "ac-t", "pemetrexed",
)
"""Regimen fragments that imply IV chemotherapy, hence a port placement in the procedures."""

FACT_NEUTRAL_PRE_DX = (
    ("Primary care", "Annual wellness visit. Pt reports feeling well overall; sleeping 6-7 h/night. Diet: mixed, trying to cut back on "
     "sugar. Exercise: walks {walk} min most days. Immunizations reviewed; influenza vaccine given today. Preventive: colonoscopy and "
     "dental care up to date per pt. ROS negative except occasional {minor}. Exam: Gen NAD. Lungs CTAB. CV RRR, no m/r/g. Abd soft, "
     "NT/ND. Ext: no edema. A/P: health maintenance; continue current meds; f/u 12 months or PRN."),
    ("Telephone encounter", "Pt called requesting refill of {med}. Denies new symptoms. Last visit reviewed; refill sent to preferred "
     "pharmacy x 90 days. Reminded pt to schedule routine f/u. Call back number confirmed."),
    ("Nurse visit", "BP check per PCP request. Pt seated 5 min before reading. Reports adherence to {med}; no dizziness, no headaches. "
     "Home readings reviewed from pt log. Will route to PCP for review. Pt instructed to continue home log."),
    ("Primary care", "Acute visit: c/o {minor} x {days} days. No fever, no chest pain, no SOB. Exam unremarkable apart from mild "
     "findings consistent with complaint. A/P: supportive care, fluids, acetaminophen PRN; return precautions reviewed. f/u PRN."),
    ("Ophthalmology", "Routine eye exam. VA 20/25 OU with correction. IOP normal OU. Dilated fundus exam without retinopathy. "
     "New glasses Rx provided. f/u 1-2 years."),
    ("Dermatology", "Skin check for {minor2}. Scattered seborrheic keratoses and cherry angiomas, benign-appearing. Sun-protection "
     "counseling provided. f/u PRN."),
)
"""Pre-diagnosis interval notes: free text that states no oncologic fact at all."""

FACT_NEUTRAL_POST_DX = (
    ("Medical oncology interval visit", "Interval hx: pt reports {sym}. Appetite {appetite}; weight stable per pt. Sleeping {sleep}. "
     "Social: lives with {lives}; {support} helps with transportation. Exam: Gen NAD, ambulatory without assistance. HEENT: anicteric, "
     "no mucositis. Lungs CTAB. CV RRR. Abd soft, NT/ND. Ext: no edema. Neuro: nonfocal. Labs reviewed with pt."),
    ("Telephone encounter", "Pt called the oncology nurse line re: {sym}. Triage per protocol: no fever, no bleeding, tolerating PO. "
     "Advised {advice}. Pt verbalized understanding; will call back if worse. Routed to primary oncologist."),
    ("Oncology nurse visit", "Nurse visit for education and symptom check. Reviewed medication list and calendar of upcoming "
     "appointments. Pt c/o {sym}; managed with {advice}. Distress thermometer {distress}/10. Referred to supportive care resources."),
    ("Social work", "Psychosocial f/u. Pt coping {coping}. Discussed transportation assistance, FMLA paperwork and financial counseling. "
     "Caregiver ({support}) present. Pt declines counseling referral at this time; SW will continue to follow."),
    ("Nutrition", "Dietitian f/u. Reports {appetite} appetite, eating 3 small meals + 2 snacks/day. Encouraged protein 1.2 g/kg/day "
     "and oral nutrition supplement BID. No dysphagia. Will reassess at next visit."),
)
"""Post-diagnosis interval notes. Kinds starting 'Medical oncology' get a derived oncologic
summary appended by the renderer; the stored text itself states no fact."""

NEUTRAL_FILL: dict[str, tuple[str, ...]] = {
    "walk": ("20", "30", "45"),
    "minor": ("low back pain", "seasonal allergies", "heartburn", "knee stiffness", "sinus congestion"),
    "minor2": ("a changing mole on the arm (pt concern)", "dry skin", "routine screening"),
    "med": ("lisinopril", "atorvastatin", "omeprazole", "levothyroxine", "metformin"),
    "days": ("3", "4", "5", "7"),
    "sym": (
        "mild fatigue",
        "intermittent nausea, controlled with PRN ondansetron",
        "constipation",
        "poor sleep",
        "mild neuropathy in fingertips",
        "no new complaints",
        "loose stools 2-3/day",
        "mild dyspnea on exertion",
    ),
    "appetite": ("good", "fair", "reduced"),
    "sleep": ("well", "poorly due to anxiety", "6 h/night"),
    "lives": ("spouse", "daughter", "partner", "alone"),
    "support": ("spouse", "son", "daughter", "friend", "neighbor"),
    "advice": (
        "PRN ondansetron and small frequent meals",
        "senna-docusate BID and fluids",
        "hydration and rest",
        "loperamide PRN and oral rehydration",
    ),
    "distress": ("2", "3", "4", "5"),
    "coping": ("well", "reasonably well", "with some anxiety"),
}

EXTRA_UNIT_CHARS = 660
"""Approximate characters one extra (lab panel, vitals, interval note) unit adds; `scale`
divides the wanted growth by it so scale=10 gives about ten times the packet."""


# ---------------------------------------------------------------------------------------
# Context
# ---------------------------------------------------------------------------------------


def seeded_rng(case_id: str, key: str) -> random.Random:
    """A Random seeded from sha256(case_id:key): independent per choice, stable across facts."""
    digest = hashlib.sha256(f"{case_id}:{key}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


@dataclass(frozen=True)
class MarkerStatement:
    """One biomarker statement as it is written in this case (possibly covering two markers)."""

    names: tuple[str, ...]
    date: date
    method: str | None
    phrase: str


@dataclass
class _Ctx:
    case: Case
    rec: PatientRecord
    date_format: DateFormat
    scale: float
    _cache: dict[str, object] = field(default_factory=dict)

    def d(self, value: date) -> str:
        return value.strftime("%m/%d/%Y") if self.date_format == "us" else value.isoformat()

    def pick(self, key: str, options: Sequence[T]) -> T:
        return options[seeded_rng(self.case.case_id, key).randrange(len(options))]

    def rng(self, key: str) -> random.Random:
        return seeded_rng(self.case.case_id, key)


# ---------------------------------------------------------------------------------------
# Biomarkers
# ---------------------------------------------------------------------------------------

DEFAULT_RESULTS: dict[tuple[str, str], str] = {
    ("HER2", "positive"): "IHC 3+", ("HER2", "negative"): "IHC 1+",
    ("ER", "positive"): "90%", ("ER", "negative"): "<1%",
    ("PR", "positive"): "40%", ("PR", "negative"): "<1%",
    ("PD-L1", "positive"): "TPS 60%", ("PD-L1", "negative"): "TPS <1%",
    ("EGFR", "positive"): "exon 19 deletion", ("EGFR", "negative"): "wild-type",
    ("ALK", "positive"): "EML4-ALK fusion", ("ALK", "negative"): "negative",
    ("KRAS", "positive"): "G12D", ("KRAS", "negative"): "wild-type",
    ("BRAF", "positive"): "V600E", ("BRAF", "negative"): "wild-type",
    ("MSI", "positive"): "MSI-H", ("MSI", "negative"): "MSS",
    ("BRCA1", "positive"): "germline pathogenic variant", ("BRCA2", "positive"): "germline pathogenic variant",
    ("HRD", "positive"): "GIS 52", ("HRD", "negative"): "GIS 21",
}
"""Result used when `case.biomarkers` gives a status the record does not carry."""


def effective_biomarkers(case: Case) -> list[Biomarker]:
    """The markers the packet states: `case.biomarkers` decides which exist and their status;
    the record supplies result, method and date when its status agrees."""
    rec = _record(case)
    by_name = {b.name: b for b in rec.biomarkers}
    names = [b.name for b in rec.biomarkers if b.name in case.biomarkers]
    names += sorted(n for n in case.biomarkers if n not in by_name)
    out: list[Biomarker] = []
    for name in dict.fromkeys(names):
        status = case.biomarkers[name]
        stored = by_name.get(name)
        if stored is not None and stored.status == status:
            out.append(stored)
            continue
        result = DEFAULT_RESULTS.get((name, status), status.replace("_", " "))
        when = stored.date if stored is not None else rec.diagnosis_date
        method = stored.method if stored is not None else None
        out.append(Biomarker(name=name, status=status, result=result, method=method, date=when))
    return out


def _num(text: str, pattern: str = r"(\d+(?:\.\d+)?)") -> str | None:
    m = re.search(pattern, text)
    return m.group(1) if m else None


def _her2(b: Biomarker, ctx: _Ctx) -> str:
    r = b.result
    ratio = _num(r, r"ratio\s*(\d+(?:\.\d+)?)")
    if b.status == "positive":
        if "3+" in r:
            opts = ["HER2 3+ by IHC", "HER2-positive (IHC 3+)", "c-erbB-2 overexpressed (IHC 3+)"]
        elif "2+" in r and ratio:
            opts = [f"HER2 IHC 2+, ISH amplified (ratio {ratio})", f"HER2-positive (IHC 2+, ISH ratio {ratio})"]
        elif ratio:
            opts = [f"HER-2/neu amplified by FISH (HER2/CEP17 ratio {ratio})", f"HER2-positive by FISH (ratio {ratio})"]
        else:
            opts = [f"HER2 positive ({r})"]
    elif b.status == "negative":
        if "1+" in r:
            opts = ["HER2 negative (IHC 1+)", "HER2 1+ by IHC, negative"]
        elif re.search(r"IHC 0\b", r):
            opts = ["HER2 0 by IHC", "HER2 negative (IHC 0)"]
        elif "2+" in r:
            opts = ["HER2 IHC 2+, FISH non-amplified"]
        elif ratio:
            opts = [f"HER-2/neu not amplified (ratio {ratio})", f"HER2 FISH negative (ratio {ratio})"]
        else:
            opts = [f"HER2 negative ({r})"]
    else:
        opts = [f"HER2 {b.status.replace('_', ' ')} ({r})"]
    return ctx.pick("bm:HER2", opts)


def _er(b: Biomarker, ctx: _Ctx) -> str:
    pct = _num(b.result, r"(<?\d+%)") or b.result
    if b.status == "positive":
        strength = "strongly positive" if int(re.sub(r"\D", "", pct) or 0) >= 70 else "positive"
        opts = [f"ER positive ({b.result})", f"ER+ ({pct})", f"estrogen receptor {strength} ({pct})"]
    elif b.status == "negative":
        opts = [f"ER negative ({b.result})", "ER-neg", f"estrogen receptor negative ({pct})"]
    else:
        opts = [f"ER {b.status.replace('_', ' ')} ({b.result})"]
    return ctx.pick("bm:ER", opts)


def _pr(b: Biomarker, ctx: _Ctx) -> str:
    pct = _num(b.result, r"(<?\d+%)") or b.result
    if b.status == "positive":
        opts = [f"PR positive ({pct})", f"PgR {pct}", f"progesterone receptor positive ({pct})"]
    elif b.status == "negative":
        opts = ["progesterone receptor negative", f"PR negative ({pct})", f"PgR {pct}"]
    else:
        opts = [f"PR {b.status.replace('_', ' ')} ({b.result})"]
    return ctx.pick("bm:PR", opts)


def _pdl1(b: Biomarker, ctx: _Ctx) -> str:
    r = b.result
    if "CPS" in r:
        v = _num(r, r"CPS\s*(<?\d+)") or r
        if b.status == "positive":
            opts = [f"PD-L1 CPS {v}", f"PD-L1 (22C3) combined positive score {v}", f"PD-L1 CPS {v} (22C3)"]
        else:
            opts = [f"PD-L1 CPS {v}", f"PD-L1 negative (CPS {v})"]
    else:
        v = _num(r, r"(<?\d+)%") or r
        if b.status == "positive":
            opts = [f"PD-L1 TPS {v}%", f"PD-L1 (22C3) tumor proportion score {v}%"]
            if v.isdigit() and int(v) >= 50:
                opts.append("PD-L1 high, TPS >=50%")
        elif b.status == "negative":
            opts = [f"PD-L1 TPS {v}%", f"PD-L1 negative (TPS {v}%)", f"PD-L1 not expressed (TPS {v}%)"]
        else:
            opts = [f"PD-L1 {b.status.replace('_', ' ')} ({r})"]
    return ctx.pick("bm:PD-L1", opts)


def _mutation(name: str, pos: Sequence[str], neg: Sequence[str]):
    """Phraser for a mutation-style marker; '{r}' is the reported variant."""

    def phrase(b: Biomarker, ctx: _Ctx) -> str:
        if b.status == "positive":
            opts = [p.format(r=b.result, n=name) for p in pos]
        elif b.status == "negative":
            opts = [p.format(r=b.result, n=name) for p in neg]
        else:
            opts = [f"{name} {b.status.replace('_', ' ')} ({b.result})"]
        return ctx.pick(f"bm:{name}", opts)

    return phrase


def _alk(b: Biomarker, ctx: _Ctx) -> str:
    if b.status == "positive":
        if "EML4" in b.result:
            opts = ["EML4-ALK fusion", "ALK fusion (EML4-ALK) detected by NGS"]
        elif "FISH" in b.result or "rearranged" in b.result:
            opts = ["ALK rearranged (FISH)", "ALK-positive by FISH (break-apart)"]
        else:
            opts = [f"ALK positive ({b.result})"]
    elif b.status == "negative":
        opts = ["ALK negative", "no ALK rearrangement", "ALK not rearranged (IHC D5F3 negative)"]
    else:
        opts = [f"ALK {b.status.replace('_', ' ')} ({b.result})"]
    return ctx.pick("bm:ALK", opts)


def _msi(b: Biomarker, ctx: _Ctx) -> str:
    if b.status == "positive":
        opts = ["MSI-H (dMMR, loss of MLH1/PMS2)", "MSI-high", "mismatch repair deficient (dMMR; MLH1/PMS2 loss)"]
    elif b.status == "negative":
        opts = ["MSS/pMMR", "microsatellite stable (MSS)", "MMR proficient (pMMR)"]
    else:
        opts = [f"MSI {b.status.replace('_', ' ')} ({b.result})"]
    return ctx.pick("bm:MSI", opts)


def _brca(name: str):
    def phrase(b: Biomarker, ctx: _Ctx) -> str:
        if b.status == "positive":
            if "somatic" in b.result:
                opts = [f"{name} mutation (somatic)", f"somatic {name} pathogenic variant"]
            else:
                opts = [f"germline {name} pathogenic variant", f"{name} mutation (germline)", f"deleterious germline {name} mutation"]
        elif b.status == "negative":
            opts = [f"{name} wild-type", f"no {name} pathogenic variant", f"{name} negative"]
        else:
            opts = [f"{name} {b.status.replace('_', ' ')} ({b.result})"]
        return ctx.pick(f"bm:{name}", opts)

    return phrase


def _hrd(b: Biomarker, ctx: _Ctx) -> str:
    v = _num(b.result, r"GIS\s*(\d+)")
    if b.status == "positive":
        opts = (
            [f"HRD positive (GIS {v})", f"homologous recombination deficient (GIS {v})", f"HRD+ (genomic instability score {v})"]
            if v
            else ["HRD positive"]
        )
    elif b.status == "negative":
        opts = [f"HRD negative (GIS {v})", f"homologous recombination proficient (GIS {v})"] if v else ["HRD negative"]
    else:
        opts = [f"HRD {b.status.replace('_', ' ')} ({b.result})"]
    return ctx.pick("bm:HRD", opts)


PHRASERS = {
    "HER2": _her2,
    "ER": _er,
    "PR": _pr,
    "PD-L1": _pdl1,
    "ALK": _alk,
    "MSI": _msi,
    "HRD": _hrd,
    "BRCA1": _brca("BRCA1"),
    "BRCA2": _brca("BRCA2"),
    "EGFR": _mutation("EGFR", ["EGFR {r}", "EGFR-mutant ({r})", "EGFR {r} detected by NGS"],
                      ["EGFR wild-type", "no EGFR mutation detected", "EGFR negative (NGS)"]),
    "ROS1": _mutation("ROS1", ["ROS1 fusion ({r})", "ROS1-rearranged ({r})"], ["ROS1 negative", "no ROS1 fusion"]),
    "KRAS": _mutation("KRAS", ["KRAS {r} mutated", "KRAS {r}", "KRAS-mutant ({r})"], ["KRAS wild-type", "no KRAS mutation detected"]),
    "NRAS": _mutation("NRAS", ["NRAS {r}", "NRAS-mutant ({r})"], ["NRAS wild-type", "no NRAS mutation"]),
    "BRAF": _mutation("BRAF", ["BRAF {r} mutation detected", "BRAF {r}", "BRAF {r}-mutant"],
                      ["BRAF wild-type", "no BRAF V600 mutation", "BRAF V600 negative"]),
    "ESR1": _mutation("ESR1", ["ESR1 {r} mutation (ctDNA)", "ESR1-mutant ({r})"], ["ESR1 wild-type (ctDNA)", "no ESR1 mutation"]),
    "PIK3CA": _mutation("PIK3CA", ["PIK3CA {r}", "PIK3CA-mutant ({r})"], ["PIK3CA wild-type", "no PIK3CA mutation"]),
    "CLDN18.2": _mutation("CLDN18.2", ["CLDN18.2 positive ({r})", "claudin 18.2 positive ({r})"],
                          ["CLDN18.2 negative ({r})", "claudin 18.2 negative ({r})"]),
}


def _generic_phrase(b: Biomarker, ctx: _Ctx) -> str:
    return f"{b.name} {b.status.replace('_', ' ')} ({b.result})"


COMBINED_NEGATIVES: tuple[tuple[tuple[str, str], str], ...] = (
    (("KRAS", "NRAS"), "RAS wild-type (KRAS/NRAS)"),
    (("BRCA1", "BRCA2"), "BRCA1/2 wild-type"),
)
"""Pairs that charts often state in one phrase when both are negative (chosen per case)."""


def marker_statements(ctx: _Ctx, as_of: date | None = None) -> list[MarkerStatement]:
    """All biomarker statements of the case, in record order, optionally only those reported by `as_of`."""
    key = "markers"
    if key not in ctx._cache:
        markers = effective_biomarkers(ctx.case)
        by_name = {b.name: b for b in markers}
        combined: dict[str, MarkerStatement] = {}
        for pair, phrase in COMBINED_NEGATIVES:
            bms = [by_name.get(n) for n in pair]
            if all(b is not None and b.status == "negative" for b in bms) and ctx.pick(f"combine:{pair[0]}", (True, False)):
                stmt = MarkerStatement(pair, max(b.date for b in bms if b), bms[0].method if bms[0] else None, phrase)
                for n in pair:
                    combined[n] = stmt
        out: list[MarkerStatement] = []
        for b in markers:
            if b.name in combined:
                if combined[b.name] not in out:
                    out.append(combined[b.name])
                continue
            phrase = PHRASERS.get(b.name, _generic_phrase)(b, ctx)
            out.append(MarkerStatement((b.name,), b.date, b.method, phrase))
        ctx._cache[key] = out
    stmts: list[MarkerStatement] = ctx._cache[key]  # type: ignore[assignment]
    return [s for s in stmts if as_of is None or s.date <= as_of]


def breast_subtype(ctx: _Ctx) -> str | None:
    """HR/HER2 subtype label, only when ER, PR and HER2 are all stated (else it would leak a deleted marker)."""
    if ctx.case.cancer_type != "breast":
        return None
    st = {b.name: b.status for b in effective_biomarkers(ctx.case)}
    if not all(st.get(n) in ("positive", "negative") for n in ("ER", "PR", "HER2")):
        return None
    hr = st["ER"] == "positive" or st["PR"] == "positive"
    her2 = st["HER2"] == "positive"
    if not hr and not her2:
        return ctx.pick("subtype", ("triple-negative", "TNBC"))
    words = ctx.pick("subtype", (True, False))
    if words:
        return f"HR-{'positive' if hr else 'negative'}, HER2-{'positive' if her2 else 'negative'}"
    return f"HR{'+' if hr else '-'}/HER2{'+' if her2 else '-'}"


def markers_sentence(ctx: _Ctx, as_of: date | None = None) -> str:
    stmts = marker_statements(ctx, as_of)
    if not stmts:
        return NO_MARKERS if as_of is None or not marker_statements(ctx) else ""
    return "; ".join(s.phrase for s in stmts) + "."


# ---------------------------------------------------------------------------------------
# Stage, surgery, treatment lines, castration
# ---------------------------------------------------------------------------------------

_ROMAN = {"0": "0", "I": "1", "II": "2", "III": "3", "IV": "4"}


def arabic_stage(stage: str) -> str:
    """'IIIA' -> '3A', 'IV' -> '4'."""
    m = re.match(r"^(IV|III|II|I|0)(.*)$", stage)
    return _ROMAN[m.group(1)] + m.group(2) if m else stage


def metastatic_on(ctx: _Ctx, as_of: date | None = None) -> bool:
    """Whether the disease was metastatic on `as_of` (None = now): a case whose metastases were found after the
    diagnosis (`record.metastasis_date`) was stage `record.initial_stage` before that date."""
    if not ctx.case.metastatic:
        return False
    found = ctx.rec.metastasis_date
    return found is None or as_of is None or as_of >= found


def current_tnm(ctx: _Ctx, as_of: date | None = None) -> str:
    """record.tnm with its M category made consistent with the disease on `as_of` (a stage mutation may
    flip metastatic without rewriting the TNM string)."""
    tnm = ctx.rec.tnm
    metastatic = metastatic_on(ctx, as_of)
    if metastatic and re.search(r"M0", tnm):
        tnm = tnm.replace("M0", "M1")
    if not metastatic:
        tnm = re.sub(r"M1[a-d]?", "M0", tnm)
    return tnm


def path_tnm(ctx: _Ctx) -> str | None:
    r = ctx.rec.resection
    if r is None or not r.pathology:
        return None
    # 'pT3N1', 'pT3 pN1' and 'ypT2 ypN0' alike: the N goes with the T (review 3: 'pT3 (Stage IIIB)' dropped the pN1).
    m = re.search(r"\by?pT(?:is|mi|[0-4x])[a-d]?\d?(?:\s?(?:y?p)?N[0-3x](?:mi|[a-c])?)?", r.pathology)
    return m.group(0) if m else None


def clinical_before_sentinel(cancer_type: str, tnm: str, stage: str) -> tuple[str, str]:
    """(TNM, stage) before a sentinel-node biopsy found the nodes: cN0 (the biopsy is done only in clinically
    node-negative disease), and the AJCC 8 stage group of that clinical TNM (`staging`; `stage` if it cannot be computed)."""
    tnm = re.sub(r"(?<![A-Za-z])y?p(?=[TN][0-4isx])", "c", tnm)
    tnm = re.sub(r"N[1-3x][a-c]?", "N0", tnm)
    try:
        return tnm, staging.stage_group(cancer_type, tnm)
    except staging.StagingError:
        return tnm, stage


def _computed(ctx: _Ctx, tnm: str, fallback: str) -> str:
    """The AJCC 8 stage group of `tnm` with the record's Grade Group and PSA; `fallback` (the case's key fact) when the
    record lacks a fact the edition needs (a user's case)."""
    try:
        return staging.stage_group(ctx.case.cancer_type, tnm, grade_group=staging.grade_group(ctx.rec.histology),
                                   psa=staging.pretreatment_psa(ctx.rec), site=ctx.rec.primary_site, histology=ctx.rec.histology)
    except staging.StagingError:
        return fallback


def staging_on(ctx: _Ctx, as_of: date | None = None) -> tuple[str, str]:
    """(TNM, stage group) as known on `as_of` (None = now), each computed from the record.

    Metastatic then: the M category of the metastatic sites. Before the operation there is no specimen: the staging
    is clinical (cT/cN, no pathologic N subcategory), and nodes a sentinel-node biopsy will find are not known yet
    (the biopsy is for clinically node-negative disease). A post-neoadjuvant (yp) TNM is never the stage."""
    metastatic = metastatic_on(ctx, as_of)
    stated = ctx.case.stage if metastatic or ctx.rec.initial_stage is None else ctx.rec.initial_stage
    tnm = current_tnm(ctx, as_of)
    if metastatic and ctx.rec.metastatic_sites:
        m = staging.m_category(ctx.case.cancer_type, list(ctx.rec.metastatic_sites))
        tnm = staging.with_m(tnm, m if m != "M0" else "M1")
    resection = ctx.rec.resection
    operated = resection is not None and (as_of is None or as_of >= resection.date)
    if not operated:
        pathologic = re.search(r"(?<![A-Za-z])y?p(?=[TN][0-4isx])", tnm) is not None
        tnm = re.sub(r"(?<![A-Za-z])y?p(?=[TN][0-4isx])", "c", tnm)
        tnm = re.sub(r"(N[1-3])[a-c]", r"\1", tnm)
        if pathologic and resection is not None and re.search(r"(?i)sentinel", resection.procedure) and not metastatic:
            tnm, _ = clinical_before_sentinel(ctx.case.cancer_type, tnm, stated)
    return tnm, _computed(ctx, tnm, stated)


def stage_phrase(ctx: _Ctx, as_of: date | None = None) -> str:
    """The stage on `as_of` (None = now) as this case writes it (one of four styles, chosen per case)."""
    metastatic = metastatic_on(ctx, as_of)
    style = ctx.pick("stage", (0, 1, 2, 3))
    tnm, stage = staging_on(ctx, as_of)
    resection = ctx.rec.resection
    operated = resection is not None and (as_of is None or as_of >= resection.date)
    if style == 0:
        return f"Stage {stage}"
    if style == 1:
        return f"stage {arabic_stage(stage)}"
    if style == 2:
        return f"{tnm}, stage {stage}"
    ptnm = path_tnm(ctx) if not metastatic and operated else None
    if ptnm is not None and ptnm.startswith("y"):
        ptnm = None  # the response to neoadjuvant therapy (ypTN) is stated by the pathology, not as the stage
    return f"{ptnm or tnm} (Stage {stage})"


def _join(items: Sequence[str]) -> str:
    items = list(items)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def mets_phrase(ctx: _Ctx, as_of: date | None = None) -> str:
    if not metastatic_on(ctx, as_of):
        return ""
    sites = ctx.rec.metastatic_sites
    if sites:
        return f" with metastases to {_join(sites)}"
    if ctx.case.metastatic:
        return " with distant metastatic disease"
    return ""


def disease_phrase(ctx: _Ctx, as_of: date | None = None) -> str:
    """'{Histology} of the {site}, {stage}{ with metastases to ...}' as known on `as_of` (None = now).

    Metastases found after the diagnosis are dated, and the stage at diagnosis stays stated: a
    recurrence after a resection reads as one, not as stage IV at diagnosis."""
    rec = ctx.rec
    text = f"{rec.histology} of the {rec.primary_site}, {stage_phrase(ctx, as_of)}{mets_phrase(ctx, as_of)}"
    found = rec.metastasis_date
    if found is not None and rec.initial_stage is not None and metastatic_on(ctx, as_of):
        initial = re.sub(r"M1[a-d]?", "M0", rec.tnm)
        try:  # the stage at diagnosis computed from the record (AJCC 8), the stored one for a record that lacks a fact
            initial_stage = staging.diagnostic_stage(ctx.case.cancer_type, rec)
        except staging.StagingError:
            initial_stage = rec.initial_stage
        # A recurrence is disease found after a disease-free interval (here: more than 90 days after the operation).
        recurrence = rec.resection is not None and (found - rec.resection.date).days > 90
        event = "metastatic recurrence" if recurrence else "distant metastases"
        # One clause, ending "at diagnosis": the stage then is history, not a statement of the stage now (residue).
        text += f" (stage {initial_stage} {initial} at diagnosis; {event} documented {ctx.d(found)})"
    return text


def procedure_name(ctx: _Ctx) -> str:
    r = ctx.rec.resection
    assert r is not None
    return ctx.pick("proc", PROCEDURE_ALIASES.get(r.procedure, (r.procedure,)))


def resection_phrase(ctx: _Ctx, with_date: bool = True) -> str:
    """'s/p {procedure} on {date} (R0 resection)' in this case's style; requires record.resection."""
    r = ctx.rec.resection
    assert r is not None
    text = ctx.pick("resection", RESECTION_TEMPLATES).format(proc=procedure_name(ctx))
    if with_date:
        text += f" on {ctx.d(r.date)}"
    if r.margin:
        text += f" ({r.margin} resection)"
    return text


def unresected_phrase(ctx: _Ctx) -> str:
    """What the chart says about surgery when there has been none (derived from stage/TNM)."""
    case = ctx.case
    if case.metastatic:
        return ctx.pick("unresected", UNRESECTED_METASTATIC)
    if case.cancer_type == "pancreatic":
        return "locally advanced, deemed unresectable (arterial involvement)" if "T4" in ctx.rec.tnm else "deemed borderline resectable"
    if case.cancer_type == "nsclc" and case.stage in ("IIIB", "IIIC"):
        return "deemed unresectable by thoracic surgery; no surgery to date"
    if case.cancer_type == "ovarian":
        return ctx.pick("unresected", ("not a candidate for optimal primary debulking per gyn onc; no surgery to date",
                                        "surgical evaluation pending (primary debulking not feasible per gyn onc)"))
    return ctx.pick("unresected", UNRESECTED_LOCALIZED)


def surgery_status(ctx: _Ctx, as_of: date | None = None) -> str:
    """Surgery sentence as of a date (None = now): done, planned, or not done."""
    r = ctx.rec.resection
    if r is not None and (as_of is None or r.date <= as_of):
        return resection_phrase(ctx)
    if r is not None:
        return f"planned {procedure_name(ctx)}"
    return unresected_phrase(ctx)


def lines(ctx: _Ctx) -> list[TreatmentLine]:
    return sorted(ctx.rec.treatment_lines, key=lambda ln: (ln.start, ln.regimen))


PROGRESSION_SCAN_WINDOW = (-3, 14)
"""Days from a line's end within which a stored radiology report is the scan that documented its progression."""


def progression_date(ctx: _Ctx, line: TreatmentLine) -> date:
    """The date of the scan that documented the progression ending `line`: the chart's radiology report nearest the line's
    end (within `PROGRESSION_SCAN_WINDOW`), else the line's end (a scan `_synthesised_encounters` then reports)."""
    end = line.end or (ctx.case.board_date - timedelta(days=14))
    lo, hi = PROGRESSION_SCAN_WINDOW
    scans = [e.date for e in ctx.rec.encounters if e.kind.lower().startswith("radiology") and lo <= (e.date - end).days <= hi]
    return min(scans, key=lambda d: (abs((d - end).days), d)) if scans else end


def line_phrase(ctx: _Ctx, line: TreatmentLine, as_of: date | None = None) -> str:
    """'{regimen} ({setting}) {start} to {end}, {outcome}' as known on `as_of`."""
    end = line.end if line.outcome != "progression" else progression_date(ctx, line)
    if as_of is not None and (end is None or end > as_of):
        return f"{line.regimen} ({line.setting}) since {ctx.d(line.start)}, ongoing"
    if line.outcome == "ongoing" or end is None:
        return f"{line.regimen} ({line.setting}) since {ctx.d(line.start)}, ongoing"
    outcome = ctx.pick("progression", PROGRESSION_WORDS) if line.outcome == "progression" else OUTCOME_WORDS[line.outcome]
    return f"{line.regimen} ({line.setting}) {ctx.d(line.start)} to {ctx.d(end)}, {outcome}"


def therapy_sentence(ctx: _Ctx, as_of: date | None = None) -> str:
    started = [ln for ln in lines(ctx) if as_of is None or ln.start <= as_of]
    if not started:
        return "No prior systemic therapy."
    return "Systemic therapy: " + "; ".join(line_phrase(ctx, ln, as_of) for ln in started) + "."


def castration_phrase(ctx: _Ctx) -> str | None:
    status = ctx.rec.castration_status
    if status is None:
        return None
    met = ctx.case.metastatic
    if status == "sensitive":
        return ctx.pick("castration", CASTRATION_SENSITIVE_MET if met else CASTRATION_SENSITIVE)
    return ctx.pick("castration", CASTRATION_RESISTANT_MET if met else CASTRATION_RESISTANT)


def oncologic_summary(ctx: _Ctx, as_of: date, current: bool) -> str:
    """The fact block a medical-oncology note carries, as known on `as_of`."""
    parts = [f"Dx: {disease_phrase(ctx, as_of)} (dx {ctx.d(ctx.rec.diagnosis_date)})."]
    subtype = breast_subtype(ctx)
    markers = markers_sentence(ctx, as_of)
    if markers:
        parts.append(f"Path: {markers}" if not subtype else f"Path: {subtype}; {markers}")
    parts.append(f"Surgery: {surgery_status(ctx, as_of)}.")
    parts.append(therapy_sentence(ctx, as_of))
    castration = castration_phrase(ctx)
    if castration and current:
        parts.append(f"Disease status: {castration}.")
    parts.append(f"ECOG {ctx.rec.ecog}.")
    return "Oncologic summary: " + " ".join(parts)


# ---------------------------------------------------------------------------------------
# Sections
# ---------------------------------------------------------------------------------------


def _record(case: Case) -> PatientRecord:
    if case.record is None:
        raise ValueError(f"case {case.case_id} has no structured record to render")
    return case.record


def _dob(ctx: _Ctx) -> date:
    """A birth date consistent with `case.age` on the board date."""
    board = ctx.case.board_date
    back = ctx.rng("dob").randint(1, 360)
    birthday_this_year = board - timedelta(days=back)
    try:
        return birthday_this_year.replace(year=birthday_this_year.year - ctx.case.age)
    except ValueError:  # Feb 29
        return (birthday_this_year - timedelta(days=1)).replace(year=birthday_this_year.year - ctx.case.age)


def render_demographics(ctx: _Ctx) -> str:
    case, rec = ctx.case, ctx.rec
    rows = [
        f"Name: {rec.name}",
        f"MRN: {rec.mrn}",
        f"DOB: {ctx.d(_dob(ctx))}    Age: {case.age}    Sex: {'Female' if case.sex == 'F' else 'Male'}",
        f"Preferred language: {ctx.pick('lang', ('English', 'English', 'English', 'Spanish (interpreter requested)'))}",
        f"Marital status: {ctx.pick('marital', ('Married', 'Single', 'Widowed', 'Divorced', 'Partnered'))}",
        f"Insurance: {ctx.pick('ins', ('Medicare', 'Commercial PPO', 'Medicaid', 'Medicare Advantage', 'Commercial HMO'))}",
        f"Primary oncologist: {ctx.pick('onc', ONCOLOGISTS)}",
        f"PCP: {ctx.pick('pcp', PCPS)}",
        f"Tumor board date: {ctx.d(case.board_date)}",
    ]
    return "\n".join(rows)


def render_diagnoses(ctx: _Ctx) -> str:
    rec = ctx.rec
    biopsy = ctx.pick("biopsy", BIOPSY[ctx.case.cancer_type])
    rows = ["ACTIVE PROBLEM LIST", f"1. {disease_phrase(ctx)}. Dx {ctx.d(rec.diagnosis_date)} by {biopsy}."]
    subtype = breast_subtype(ctx)
    if subtype:
        rows.append(f"   Subtype: {subtype}.")
    rows.append(f"   Markers: {markers_sentence(ctx)}")
    rows.append(f"   Surgery: {surgery_status(ctx)}.")
    rows.append(f"   {therapy_sentence(ctx)}")
    castration = castration_phrase(ctx)
    if castration:
        rows.append(f"   Castration status: {castration}.")
    if rec.menopausal_status:
        rows.append(f"   Menopausal status: {rec.menopausal_status}.")
    rows.append(f"   Performance status: ECOG {rec.ecog}.")
    for i, condition in enumerate(rec.comorbidities, start=2):
        rows.append(f"{i}. {condition}")
    return "\n".join(rows)


def render_biomarkers(ctx: _Ctx) -> str:
    stmts = marker_statements(ctx)
    if not stmts:
        return NO_MARKERS
    rows = ["MOLECULAR / IHC RESULTS (date reported, marker [method]: result)"]
    for s in stmts:
        method = f" [{s.method}]" if s.method else ""
        rows.append(f"- {ctx.d(s.date)}  {'/'.join(s.names)}{method}: {s.phrase}")
    rows.append(f"Specimen: {ctx.pick('biopsy', BIOPSY[ctx.case.cancer_type])} ({ctx.d(ctx.rec.diagnosis_date)}) unless noted.")
    return "\n".join(rows)


def render_medications(ctx: _Ctx) -> str:
    rows = ["ACTIVE MEDICATIONS"]
    for med in ctx.rec.medications:
        extra = []
        if med.indication:
            extra.append(med.indication)
        if med.start:
            extra.append(f"since {ctx.d(med.start)}")
        rows.append(f"- {med.name} {med.dose}" + (f" ({'; '.join(extra)})" if extra else ""))
    for ln in lines(ctx):
        if ln.outcome == "ongoing":
            rows.append(f"- {ln.regimen} ({ln.setting}; since {ctx.d(ln.start)})")
    rows += [f"- {m}" for m in continuing_therapy(ctx)]
    if len(rows) == 1:
        rows.append("- none")
    rows.append("")
    rows.append("ONCOLOGIC TREATMENT HISTORY")
    hist = lines(ctx)
    if not hist:
        rows.append("- No prior systemic anticancer therapy.")
    for ln in hist:
        note = f" Note: {ln.note}" if ln.note else ""
        rows.append(f"- {line_phrase(ctx, ln)}.{note}")
    return "\n".join(rows)


GNRH_DEFAULT = "leuprorelin"
GNRH_DOSE = "22.5 mg IM every 3 months"
"""The LHRH agonist of androgen deprivation when the regimen does not name one (NCCN Prostate v.2026: LHRH agonist or
antagonist; leuprorelin 22.5 mg every 3 months is the common depot)."""


def continuing_therapy(ctx: _Ctx) -> list[str]:
    """Active medications that a finished line leaves running: androgen deprivation continues after an agent added to
    it fails (castration resistance presupposes castrate testosterone, PCWG3), so its LHRH agonist stays listed."""
    out = []
    for ln in lines(ctx):
        adt = re.match(r"ADT(?: \(([^)]*)\))?", ln.regimen)
        running = ln.outcome == "ongoing" and adt and not adt.group(1)  # an ongoing line naming its agent lists it already
        if adt and (running or (ln.outcome != "ongoing" and "ADT continues" in (ln.note or ""))):
            agent = (adt.group(1) or GNRH_DEFAULT).capitalize()
            out.append(f"{agent} {GNRH_DOSE} (ADT; since {ctx.d(ln.start)})")
    if not out and ctx.rec.castration_status == "resistant" and not any(
            ln.outcome == "ongoing" and ln.regimen.startswith("ADT (") for ln in lines(ctx)):
        out.append(f"{GNRH_DEFAULT.capitalize()} {GNRH_DOSE} (ADT)")
    return out[-1:]


def _port_date(ctx: _Ctx) -> date | None:
    for ln in lines(ctx):
        if any(k in ln.regimen.lower() for k in CHEMO_KEYWORDS):
            return ln.start - timedelta(days=3)
    return None


def render_procedures(ctx: _Ctx) -> str:
    rec = ctx.rec
    biopsy = ctx.pick("biopsy", BIOPSY[ctx.case.cancer_type])
    items: list[tuple[date, str]] = [(rec.diagnosis_date, f"{biopsy} - pathology: {rec.histology}")]
    port = _port_date(ctx)
    if port is not None:
        items.append((port, "Right chest port-a-cath placement (IR), uncomplicated"))
    r = rec.resection
    if r is not None:
        text = resection_phrase(ctx, with_date=False)
        if r.pathology:
            text += f"; final path {r.pathology}"
        items.append((r.date, text[0].upper() + text[1:]))
    rows = [f"- {ctx.d(d)}  {t}" for d, t in sorted(items, key=lambda x: x[0])]
    if r is None:
        rows.append(f"Surgical history (oncologic): {unresected_phrase(ctx)}.")
    return "\n".join(rows)


def _radiology_impression(ctx: _Ctx, as_of: date) -> str:
    rec = ctx.rec
    r = rec.resection
    if r is not None and r.date <= as_of:
        primary = f"Post-surgical changes, {resection_phrase(ctx)}; no evidence of local recurrence."
    else:
        primary = f"Primary lesion, {rec.primary_site}, consistent with known malignancy."
    # The nodes the scan reports are the clinical N known on its date (a sentinel-node biopsy finds nodes a CT did not).
    n = re.search(r"N(\d)", staging_on(ctx, as_of)[0])
    operated = r is not None and r.date <= as_of
    if n and n.group(1) != "0" and not operated:
        nodes = "Enlarged regional LN suspicious for nodal involvement."
    else:
        nodes = "No pathologically enlarged regional LN."
    metastatic = metastatic_on(ctx, as_of)
    progressed = [ln for ln in lines(ctx) if ln.outcome == "progression" and -3 <= (as_of - progression_date(ctx, ln)).days <= 14]
    if metastatic and rec.metastatic_sites and progressed:
        # Progression is documented on imaging against the prior scan (RECIST 1.1).
        distant = (f"Progressive disease compared with the prior CT (new and enlarging lesions, RECIST 1.1): metastatic disease "
                   f"involving {_join(rec.metastatic_sites)}.")
    elif metastatic and rec.metastatic_sites:
        distant = f"Findings consistent with metastatic disease involving {_join(rec.metastatic_sites)}."
    elif metastatic:
        distant = "Findings consistent with distant metastatic disease."
    else:
        distant = "No evidence of distant metastatic disease."
    return f"IMPRESSION: 1. {primary} 2. {nodes} 3. {distant} Radiographic staging: {stage_phrase(ctx, as_of)}."


def _compose(ctx: _Ctx, enc: Encounter) -> str:
    """A stored encounter's text: its fact-neutral note plus the facts a note of its kind carries."""
    text = enc.note.strip()
    kind = enc.kind.lower()
    current = (ctx.case.board_date - enc.date).days <= 60
    if kind.startswith("radiology"):
        text += "\n" + _radiology_impression(ctx, enc.date)
    elif kind.startswith("medical oncology"):
        text += "\n" + oncologic_summary(ctx, enc.date, current)
    elif kind.startswith(("surgical", "thoracic surgery", "gyn onc", "urology")) and enc.date >= ctx.rec.diagnosis_date:
        text += f"\nSurgical status: {surgery_status(ctx, enc.date)}."
    return text


def _synthesised_encounters(ctx: _Ctx) -> list[tuple[date, str, str, str]]:
    """Encounters that document a fact (surgery, treatment start/end, progression): built from the record."""
    out: list[tuple[date, str, str, str]] = []
    onc = ctx.pick("onc", ONCOLOGISTS)
    surgeon = ctx.pick("surgeon", SURGEONS)
    board = ctx.case.board_date
    r = ctx.rec.resection
    if r is not None:
        ebl = ctx.rng("ebl").choice((50, 100, 150, 200, 250, 350))
        out.append((r.date, "Operative note", surgeon,
                    f"Procedure: {procedure_name(ctx)}. Anesthesia: general endotracheal. Findings as dictated; specimen oriented and "
                    f"sent to pathology. EBL {ebl} mL. No intraoperative complications. Counts correct x2. Disposition: PACU, then floor."))
        postop = r.date + timedelta(days=14)
        if postop >= board:
            postop = r.date + timedelta(days=1)
        path = f" Final pathology: {r.pathology}." if r.pathology else ""
        margin = f" Margins: {r.margin}." if r.margin else ""
        out.append((postop, "Surgical oncology post-op visit", surgeon,
                    f"Post-op f/u, {resection_phrase(ctx)}.{path}{margin} Incision(s) healing well, no erythema or drainage. "
                    f"Tolerating diet, ambulating. Pain controlled with acetaminophen. Plan: refer/return to medical oncology."))
    for ln in lines(ctx):
        out.append((ln.start, "Medical oncology treatment visit", onc,
                     f"C1D1 {ln.regimen} ({ln.setting}). Consent signed; treatment teaching completed; premeds and supportive meds "
                     f"per protocol. Labs reviewed and adequate. Pt tolerated first dose without acute reaction."))
        if ln.outcome == "progression":
            scan = progression_date(ctx, ln)
            if not any(e.date == scan and e.kind.lower().startswith("radiology") for e in ctx.rec.encounters):
                # The progression is documented on imaging: the report exists on the date the notes cite.
                out.append((scan, "Radiology - restaging CT chest/abdomen/pelvis", "Radiology",
                            "Technique: CT C/A/P with IV contrast. Comparison: prior CT.\n" + _radiology_impression(ctx, scan)))
            visit = scan + timedelta(days=2)
            if visit >= board:
                visit = scan
            # Androgen deprivation continues in castration-resistant disease: only the agent added to it stops.
            adt = re.match(r"ADT(?: \([^)]*\))? \+ (.+)$", ln.regimen) if ln.note and "ADT continues" in ln.note else None
            stop = f"discontinue {adt.group(1)}; ADT continues" if adt else f"discontinue {ln.regimen}"
            out.append((visit, "Medical oncology f/u (restaging)", onc,
                        f"Restaging CT C/A/P ({ctx.d(scan)}): {ctx.pick('progression', PROGRESSION_WORDS)} on {ln.regimen} "
                        f"({ln.setting}). Reviewed images with pt and family. Plan: {stop}; present at "
                        f"multidisciplinary tumor board for next-line options."))
        elif ln.end is not None and ln.outcome in ("completed", "toxicity", "stopped"):
            out.append((ln.end, "Medical oncology f/u", onc,
                        f"{ln.regimen} ({ln.setting}) {OUTCOME_WORDS[ln.outcome]}. "
                        + (f"{ln.note} " if ln.note else "") + "Symptoms reviewed; supportive meds adjusted."))
    return out


def _extra_dates(ctx: _Ctx, n: int, taken: set[date]) -> list[date]:
    """n distinct dates spread over the ~18 months before diagnosis up to the day before the board."""
    if n <= 0:
        return []
    start = ctx.rec.diagnosis_date - timedelta(days=540)
    end = ctx.case.board_date - timedelta(days=2)
    span = max((end - start).days, 1)
    rng = ctx.rng("extra-dates")
    out: list[date] = []
    used = set(taken)
    for i in range(n):
        d = start + timedelta(days=int((i + 0.5) * span / n) + rng.randint(-1, 1))
        while d in used:
            d += timedelta(days=1)
        used.add(d)
        out.append(d)
    return out


def _n_extra(ctx: _Ctx) -> int:
    if ctx.scale <= 1.0:
        return 0
    # Grow toward scale x the case's own length: one extra unit (lab panel, vitals row and
    # interval note) adds about EXTRA_UNIT_CHARS characters.
    base = len("".join(render_case_sections(ctx.case, date_format=ctx.date_format).values()))
    return max(1, round((ctx.scale - 1.0) * base / EXTRA_UNIT_CHARS))


def _extra_units(ctx: _Ctx) -> list[date]:
    key = "extra-units"
    if key not in ctx._cache:
        taken = {lab.date for lab in ctx.rec.labs} | {v.date for v in ctx.rec.vitals}
        ctx._cache[key] = _extra_dates(ctx, _n_extra(ctx), taken)
    return ctx._cache[key]  # type: ignore[return-value]


def _fill(template: str, rng: random.Random) -> str:
    return re.sub(r"\{(\w+)\}", lambda m: rng.choice(NEUTRAL_FILL[m.group(1)]), template)


def _extra_encounters(ctx: _Ctx) -> list[tuple[date, str, str, str]]:
    out = []
    for d in _extra_units(ctx):
        rng = ctx.rng(f"extra-note:{d.isoformat()}")
        if d < ctx.rec.diagnosis_date:
            kind, template = rng.choice(FACT_NEUTRAL_PRE_DX)
            author = ctx.pick("pcp", PCPS) if kind == "Primary care" else rng.choice(NURSES + PCPS)
        else:
            kind, template = rng.choice(FACT_NEUTRAL_POST_DX)
            author = ctx.pick("onc", ONCOLOGISTS) if kind.startswith("Medical oncology") else rng.choice(NURSES)
        text = _compose(ctx, Encounter(date=d, kind=kind, author=author, note=_fill(template, rng)))
        out.append((d, kind, author, text))
    return out


def render_encounters(ctx: _Ctx) -> str:
    entries = [(e.date, e.kind, e.author, _compose(ctx, e)) for e in ctx.rec.encounters]
    entries += _synthesised_encounters(ctx)
    entries += _extra_encounters(ctx)
    entries.sort(key=lambda x: x[0])  # stable: same-day entries keep stored-then-synthesised order
    blocks = [f"[{ctx.d(d)}] {kind} - {author}\n{text}" for d, kind, author, text in entries]
    return "\n\n".join(blocks)


def _flag(name: str, value: float) -> Literal["H", "L", ""]:
    ref = REFERENCE_RANGES.get(name)
    if ref is None:
        return ""
    return "H" if value > ref[2] else "L" if value < ref[1] else ""


NEUTROPHIL_SHARE = (0.45, 0.70)
LYMPHOCYTE_SHARE = (0.20, 0.38)
"""Shares of the white count (adult reference differential: neutrophils 40-75 %, lymphocytes 20-40 %); the rest are
monocytes, eosinophils and basophils, which the panel does not show. The parts are rounded down, so they never sum
above the WBC (`invariants.DIFFERENTIAL_PARTS`)."""
HCT_PER_HGB_DRAWN = (2.85, 3.05)
"""Hct (%) per Hgb (g/dL) drawn within MCHC 33-35 g/dL, inside `invariants.HCT_PER_HGB`."""
HGB_DRIFT = (0.5, 1.0)
"""The haemoglobin course moves at most 0.5 g/dL plus 1.0 g/dL per 28 days between counts toward its target (inside
`invariants.HGB_CHANGE`): an anaemia recovers over weeks, chemotherapy lowers it over cycles."""
MYELOSUPPRESSIVE_HGB_DROP = 1.2
"""How far the haemoglobin target falls during cytotoxic chemotherapy (chemotherapy-induced anaemia, grade 1)."""


def _drawn(rng: random.Random, name: str, spread: float = 0.55) -> float:
    _, lo, hi = REFERENCE_RANGES[name]
    mid, half = (lo + hi) / 2, (hi - lo) / 2
    return max(mid + rng.gauss(0, half * spread), lo * 0.5)


def _lab(when: date, name: str, value: float) -> LabResult:
    return LabResult(date=when, name=name, value=value, unit=REFERENCE_RANGES[name][0], flag=_flag(name, value))


def blood_count(case_id: str, when: date, hgb: float, key: str = "lab", on_chemo: bool = False) -> list[LabResult]:
    """One CBC with differential: the differential's parts are shares of the white count and the haematocrit follows
    the haemoglobin, so the count is one count, not six independent draws (review 3)."""
    rng = seeded_rng(case_id, f"{key}:cbc:{when.isoformat()}")
    wbc = round(rng.uniform(3.2, 7.0) if on_chemo else min(max(_drawn(rng, "WBC", 0.45), 4.2), 10.8), 1)
    neutrophils = rng.uniform(0.40, 0.60) if on_chemo else rng.uniform(*NEUTROPHIL_SHARE)
    lymphocytes = rng.uniform(LYMPHOCYTE_SHARE[0], min(LYMPHOCYTE_SHARE[1], 0.95 - neutrophils))
    anc, alc = (int(wbc * share * 10) / 10 for share in (neutrophils, lymphocytes))
    hct = round(hgb * rng.uniform(*HCT_PER_HGB_DRAWN), 1)
    plt = round(_drawn(rng, "Plt", 0.5))
    return [_lab(when, "WBC", wbc), _lab(when, "Hgb", hgb), _lab(when, "Hct", hct), _lab(when, "Plt", plt),
            _lab(when, "ANC", anc), _lab(when, "ALC", alc)]


def haemoglobin_course(case_id: str, dates: Sequence[date], start: float | None = None,
                       on_chemo: Callable[[date], bool] = lambda _d: False, key: str = "lab") -> list[float]:
    """Haemoglobin at each of `dates` (sorted): from `start` (an anaemia the history names) or a drawn value, toward the
    patient's own normal level, lowered during chemotherapy, moving at most `HGB_DRIFT` between counts."""
    rng = seeded_rng(case_id, f"{key}:hgb")
    normal = round(min(max(rng.gauss(13.6, 0.9), 12.2), 15.6), 1)
    out: list[float] = []
    for i, d in enumerate(dates):
        target = normal - (MYELOSUPPRESSIVE_HGB_DROP if on_chemo(d) else 0.0)
        if i == 0:
            value = start if start is not None else target + rng.gauss(0, 0.3)
        else:
            step = HGB_DRIFT[0] + HGB_DRIFT[1] * (d - dates[i - 1]).days / 28
            value = out[-1] + min(max(target - out[-1] + rng.gauss(0, 0.25), -step), step)
        out.append(round(value, 1))
    return out


ANION_GAP_DRAWN = (8, 14)
BUN_PER_CR_DRAWN = (10.0, 20.0)
"""The chemistry's dependent values: chloride from sodium, bicarbonate and an anion gap of 8-14 mmol/L; urea nitrogen
from creatinine at a ratio of 10-20 (inside `invariants.ANION_GAP` and `invariants.BUN_PER_CREATININE`)."""


def chemistry_panel(case_id: str, when: date, key: str = "lab") -> list[LabResult]:
    """A fact-neutral CMP whose electrolytes and renal values agree with each other (one patient, not 13 draws)."""
    rng = seeded_rng(case_id, f"{key}:{when.isoformat()}")
    values = {name: round(_drawn(rng, name), 1 if hi < 50 else 0) for name, _, _, hi in CMP_TESTS}
    gap = min(max(values["Na"] - values["CO2"] - values["Cl"], ANION_GAP_DRAWN[0]), ANION_GAP_DRAWN[1])
    values["Cl"] = round(values["Na"] - values["CO2"] - gap)
    values["BUN"] = round(values["Cr"] * rng.uniform(*BUN_PER_CR_DRAWN))
    return [_lab(when, name, values[name]) for name, _, _, _ in CMP_TESTS]


def synthetic_panel(case_id: str, when: date, key: str = "lab", hgb: float | None = None, on_chemo: bool = False) -> list[LabResult]:
    """A CBC (one model of the count, `blood_count`) and a fact-neutral CMP on `when` (shared with the cohort). Without
    `hgb` the haemoglobin is the patient's drawn normal level."""
    level = hgb if hgb is not None else haemoglobin_course(case_id, [when], key=key)[0]
    return blood_count(case_id, when, level, key, on_chemo) + chemistry_panel(case_id, when, key)


def lab_panels(case_id: str, dates: Sequence[date], start_hgb: float | None = None,
               on_chemo: Callable[[date], bool] = lambda _d: False, key: str = "lab") -> list[LabResult]:
    """CBC + CMP on every date, the haemoglobin one course over them (`haemoglobin_course`)."""
    ordered = sorted(set(dates))
    hgbs = haemoglobin_course(case_id, ordered, start_hgb, on_chemo, key)
    return [lab for d, h in zip(ordered, hgbs, strict=True) for lab in synthetic_panel(case_id, d, key, h, on_chemo(d))]


def _interpolated_hgb(rec: PatientRecord, when: date) -> float | None:
    """The stored haemoglobin course at `when` (linear between the counts around it): an extra panel joins the course."""
    series = sorted((lab.date, lab.value) for lab in rec.labs if lab.name == "Hgb")
    if not series:
        return None
    before = [p for p in series if p[0] <= when] or series[:1]
    after = [p for p in series if p[0] >= when] or series[-1:]
    (d0, v0), (d1, v1) = before[-1], after[0]
    if d1 == d0:
        return v0
    return round(v0 + (v1 - v0) * (when - d0).days / (d1 - d0).days, 1)


def _fmt_value(v: float) -> str:
    return f"{v:g}" if abs(v) < 1e6 else f"{v:.0f}"


def render_labs(ctx: _Ctx) -> str:
    labs = list(ctx.rec.labs)
    for d in _extra_units(ctx):
        labs += synthetic_panel(ctx.case.case_id, d, key="extra-lab", hgb=_interpolated_hgb(ctx.rec, d))
    by_date: dict[date, list[LabResult]] = {}
    for lab in labs:
        by_date.setdefault(lab.date, []).append(lab)
    cbc = {t[0] for t in CBC_TESTS}
    cmp_ = {t[0] for t in CMP_TESTS}
    blocks = []
    for d in sorted(by_date):
        groups: dict[str, list[str]] = {"CBC w/ diff": [], "CMP": [], "Tumor markers / other": []}
        for lab in by_date[d]:
            flag = f" ({lab.flag})" if lab.flag else ""
            item = f"{lab.name} {_fmt_value(lab.value)} {lab.unit}{flag}"
            group = "CBC w/ diff" if lab.name in cbc else "CMP" if lab.name in cmp_ else "Tumor markers / other"
            groups[group].append(item)
        rows = [f"Collected {ctx.d(d)}"]
        rows += [f"  {g}: {', '.join(items)}" for g, items in groups.items() if items]
        blocks.append("\n".join(rows))
    return "\n".join(blocks) if blocks else "No labs on file."


def synthetic_vitals(case_id: str, when: date, base: Vitals | None, key: str = "vitals") -> Vitals:
    """Fact-neutral vitals near a baseline (shared with the cohort)."""
    rng = seeded_rng(case_id, f"{key}:{when.isoformat()}")
    weight = base.weight_kg if base else 72.0
    return Vitals(
        date=when,
        systolic=rng.randint(108, 146),
        diastolic=rng.randint(62, 90),
        heart_rate=rng.randint(60, 98),
        temperature_c=round(rng.uniform(36.3, 37.2), 1),
        weight_kg=round(weight + rng.uniform(-2.5, 2.5), 1),
        spo2=rng.randint(94, 100),
    )


def render_vitals(ctx: _Ctx) -> str:
    vitals = list(ctx.rec.vitals)
    base = vitals[0] if vitals else None
    vitals += [synthetic_vitals(ctx.case.case_id, d, base, key="extra-vitals") for d in _extra_units(ctx)]
    rows = ["Date        BP (mmHg)  HR   Temp (C)  Wt (kg)  SpO2"]
    for v in sorted(vitals, key=lambda x: x.date):
        rows.append(f"{ctx.d(v.date):<11} {v.systolic}/{v.diastolic:<6} {v.heart_rate:<4} {v.temperature_c:<9} {v.weight_kg:<8} {v.spo2}%")
    return "\n".join(rows)


def render_allergies(ctx: _Ctx) -> str:
    if not ctx.rec.allergies:
        return "NKDA (no known drug allergies)."
    return "\n".join(f"- {a}" for a in ctx.rec.allergies)


def _latest_markers_lab(ctx: _Ctx) -> str | None:
    known = set(REFERENCE_RANGES)
    others = [lab for lab in ctx.rec.labs if lab.name not in known]
    if not others:
        return None
    last: dict[str, LabResult] = {}
    for lab in sorted(others, key=lambda x: x.date):
        last[lab.name] = lab
    return "; ".join(f"{lab.name} {_fmt_value(lab.value)} {lab.unit} ({ctx.d(lab.date)})" for lab in last.values())


def render_overview(ctx: _Ctx) -> str:
    case, rec = ctx.case, ctx.rec
    who = "woman" if case.sex == "F" else "man"
    lines_ = [f"TUMOR BOARD SUMMARY - {ctx.d(case.board_date)}",
              f"{case.age}-year-old {who} with {disease_phrase(ctx)}, diagnosed {ctx.d(rec.diagnosis_date)}. ECOG {rec.ecog}."]
    subtype = breast_subtype(ctx)
    lines_.append(f"Biomarkers: {subtype + '; ' if subtype else ''}{markers_sentence(ctx)}")
    if rec.menopausal_status:
        lines_.append(f"Menopausal status: {rec.menopausal_status}.")
    lines_.append(f"Surgery: {surgery_status(ctx)}.")
    lines_.append(therapy_sentence(ctx))
    last = [ln for ln in lines(ctx) if ln.outcome == "progression"]
    if last:
        ln = last[-1]
        lines_.append(f"Most recent event: {ctx.pick('progression', PROGRESSION_WORDS)} on {ln.regimen} "
                      f"(restaging {ctx.d(progression_date(ctx, ln))}).")
    castration = castration_phrase(ctx)
    if castration:
        lines_.append(f"Disease is {castration}.")
    markers_lab = _latest_markers_lab(ctx)
    if markers_lab:
        lines_.append(f"Latest tumor markers/other labs: {markers_lab}.")
    lines_.append(f"PMH: {', '.join(rec.comorbidities) if rec.comorbidities else 'none significant'}. "
                  f"Allergies: {', '.join(rec.allergies) if rec.allergies else 'NKDA'}.")
    return "\n".join(lines_)


RENDERERS = {
    "demographics": render_demographics,
    "diagnoses": render_diagnoses,
    "biomarkers": render_biomarkers,
    "medications": render_medications,
    "procedures": render_procedures,
    "encounters": render_encounters,
    "labs": render_labs,
    "vitals": render_vitals,
    "allergies": render_allergies,
    "overview": render_overview,
}


def render_section(case: Case, name: str) -> str:
    """One section of `case`'s packet at scale 1 with ISO dates (what the invariants read)."""
    return RENDERERS[name](_Ctx(case=case, rec=_record(case), date_format="iso", scale=1.0))


def render_case_sections(case: Case, *, scale: float = 1.0, date_format: DateFormat = "iso") -> dict[str, str]:
    """The ten chart sections of `case`, rendered from its key facts and structured record.

    `scale` > 1 adds dated historical lab panels,
    vitals and fact-neutral interval notes; `date_format="us"` writes every date MM/DD/YYYY.
    """
    ctx = _Ctx(case=case, rec=_record(case), date_format=date_format, scale=scale)
    return {name: RENDERERS[name](ctx) for name in SECTIONS}
