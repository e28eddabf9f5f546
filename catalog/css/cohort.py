"""Deterministic generator of the synthetic CSS tumor-board cohort (`cases.jsonl`).

Everything here is synthetic: names, MRNs, dates and values are drawn from a
`random.Random` seeded with `seed` and the case id, so `write_cohort()` produces the same
bytes on every run (a test checks this). No real patient data is used or represented.

The cohort has 30 cases for each of eight cancer types (breast, NSCLC, colorectal,
pancreatic, gastric, melanoma, ovarian, prostate) in four scenarios per type: resected
stage I-III (adjuvant decisions), unresected stage I-III (neoadjuvant, definitive or
surgical decisions), treatment-naive stage IV (first-line) and previously treated stage
IV (next-line). Each case's decision drivers are the real ones for its tumour (breast
HER2/ER/PR, NSCLC EGFR/ALK/PD-L1, colorectal RAS/BRAF/MSI, pancreatic resection status and
germline BRCA, gastric HER2/PD-L1 CPS/CLDN18.2, melanoma BRAF, ovarian BRCA/HRD, prostate
castration status), and its consensus treatments are labelled strong / tacit / mixed /
refusal with a one-line rationale citing the guideline logic (NCCN 2025-2026 versions,
ESMO, and the pivotal trials they rest on), paraphrased.

Regimen and drug names used in consensus treatments (the CMS lexicon covers them):
letrozole, tamoxifen, aromatase inhibitor, CDK4/6 inhibitor (palbociclib/ribociclib/
abemaciclib), abemaciclib, fulvestrant, capivasertib, everolimus, elacestrant, T-DM1,
T-DXd, trastuzumab, pertuzumab, TCHP, THP, paclitaxel, capecitabine, olaparib,
pembrolizumab, carboplatin, sacituzumab govitecan, osimertinib, alectinib, atezolizumab,
durvalumab, nivolumab, cisplatin, pemetrexed, vinorelbine, amivantamab, docetaxel,
ramucirumab, chemoradiation, CAPOX, FOLFOX, FOLFIRI, bevacizumab, panitumumab, cetuximab,
encorafenib, FOLFIRINOX, gemcitabine, nab-paclitaxel, liposomal irinotecan, FLOT,
zolbetuximab, ipilimumab, relatlimab, dabrafenib, trametinib, niraparib, pegylated
liposomal doxorubicin, ADT, abiraterone, enzalutamide, apalutamide, darolutamide,
lutetium-177 PSMA-617, radiotherapy, surgery, surveillance, clinical trial, biomarker
testing, genomic assay (21-gene recurrence score).

    python -m clinical_cf.catalog.css.cohort      # or: clinical-cf generate css
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

from clinical_cf.catalog.css import CASES_PATH, staging
from clinical_cf.catalog.css.render import CHEMO_KEYWORDS, lab_panels, render_case_sections, synthetic_vitals
from clinical_cf.catalog.css.schema import (
    Biomarker,
    Case,
    ConsensusTreatment,
    Encounter,
    LabResult,
    Medication,
    PatientRecord,
    Resection,
    TreatmentLine,
)

COHORT_VERSION = 4
"""Version of the generated cohort. 2 (issue 27): metastatic recurrences are stage I-III at diagnosis with the
metastases dated at recurrence; no curative goals while metastatic; persistent PSA after prostatectomy restaged
first; HER2-low / HER2-0 TNBC labels by their criteria; colectomy by segment; melanoma T from the Breslow depth;
clinical stage at diagnosis for neoadjuvant cases; tumour markers normal after an R0 resection. 3 (issue 34): stage
groups, N categories and M1 subcategories computed by `staging` (AJCC 8) from T, node counts, sites, Grade Group and
PSA; tumour markers follow the disease; adjuvant endocrine therapy after HER2 blockade in HR+/HER2+ disease;
ovarian suppression with an aromatase inhibitor before menopause; presentations that fit the primary site. 4 (issue 42):
one blood count over time (the differential a share of the white count, haematocrit from haemoglobin, an anaemia
that recovers at a bounded rate, chemotherapy lowering the counts), one chemistry panel (chloride from the anion gap,
BUN from creatinine), the tumour marker drawn with the scan that found a recurrence, junction primaries staged with the
oesophageal tables (AJCC 8 2 cm rule)."""
SEED = 20261129
CASES_PER_TYPE = 30
SCENARIOS: tuple[tuple[str, int], ...] = (("resected", 12), ("unresected", 6), ("met_naive", 6), ("met_pretreated", 6))
"""Scenario and number of cases per cancer type (NSCLC shifts some to met_naive, below)."""

FIRST_NAMES_F = ("Maria", "Linda", "Aisha", "Grace", "Elena", "Joanne", "Priya", "Hannah", "Rosa", "Mei", "Claire", "Fatima", "Ingrid", "Nora", "Beatriz")
FIRST_NAMES_M = ("James", "Omar", "Daniel", "Kenji", "Robert", "Luis", "Ahmed", "Peter", "Samuel", "Viktor", "Andre", "Thomas", "Hugo", "Ravi", "Walter")
LAST_NAMES = ("Alvarez", "Brennan", "Chowdhury", "Dubois", "Eriksen", "Fischer", "Gallo", "Haddad", "Ivanova", "Jensen", "Kowalczyk", "Lindgren",
              "Moreau", "Nakamura", "Okonkwo", "Petrov", "Quinn", "Rossi", "Santos", "Tanaka", "Umarov", "Varga", "Whitaker", "Yilmaz", "Zhou")

COMORBIDITIES: tuple[tuple[str, Medication], ...] = (
    ("Hypertension", Medication(name="Lisinopril", dose="10 mg PO daily", indication="HTN")),
    ("Type 2 diabetes mellitus", Medication(name="Metformin", dose="1000 mg PO BID", indication="T2DM")),
    ("Hyperlipidemia", Medication(name="Atorvastatin", dose="40 mg PO nightly", indication="HLD")),
    ("Hypothyroidism", Medication(name="Levothyroxine", dose="75 mcg PO daily", indication="hypothyroidism")),
    ("GERD", Medication(name="Omeprazole", dose="20 mg PO daily", indication="GERD")),
    ("Osteoarthritis of the knees", Medication(name="Acetaminophen", dose="650 mg PO q6h PRN", indication="OA pain")),
    ("Depression, well controlled", Medication(name="Sertraline", dose="50 mg PO daily", indication="depression")),
    ("Atrial fibrillation", Medication(name="Apixaban", dose="5 mg PO BID", indication="AF")),
)
ALLERGIES = ((), (), (), ("Penicillin (rash)",), ("Sulfa drugs (hives)",), ("Iodinated contrast (urticaria; premedicate)",), ("Codeine (nausea)",))

TUMOR_MARKERS: dict[str, tuple[str, str, float, float]] = {
    "breast": ("CA 15-3", "U/mL", 18.0, 95.0),
    "nsclc": ("CEA", "ng/mL", 2.5, 38.0),
    "colorectal": ("CEA", "ng/mL", 2.0, 160.0),
    "pancreatic": ("CA 19-9", "U/mL", 20.0, 1800.0),
    "gastric": ("CEA", "ng/mL", 2.0, 45.0),
    "melanoma": ("LDH", "U/L", 160.0, 420.0),
    "ovarian": ("CA-125", "U/mL", 25.0, 1400.0),
    "prostate": ("PSA", "ng/mL", 0.1, 85.0),
}

PRESENTATION_UNFIT: dict[str, tuple[tuple[str, str], ...]] = {
    "pancreatic": ((r"body|tail", r"jaundice"),),
    "colorectal": ((r"cecum|ascending|transverse", r"bright red blood"), (r"sigmoid|descending", r"no overt bleeding")),
    "gastric": ((r"antrum|body", r"dysphagia"),),
}
"""(primary sites, presentation) pairs that do not go together: jaundice is a symptom of a pancreatic-head tumour (the
bile duct); bright red rectal bleeding comes from the left colon, occult bleeding with anaemia from the right; dysphagia
from the cardia and the junction (review 2)."""


def _presentation(cancer_type: str, site: str, metastatic_at_dx: bool, rng: random.Random) -> str:
    """A presentation that fits the primary site; a patient metastatic at diagnosis (on an opioid for cancer pain) is not
    presented as asymptomatic."""
    options = [p for p in PRESENTATIONS[cancer_type]
               if not any(re.search(where, site) and re.search(what, p) for where, what in PRESENTATION_UNFIT.get(cancer_type, ()))
               and not (metastatic_at_dx and re.search(r"(?i)asymptomatic|no bone pain", p))]
    return rng.choice(options)


PRESENTATIONS: dict[str, tuple[str, ...]] = {
    "breast": ("Pt reports a painless lump in the {side} breast noticed in the shower ~3 weeks ago. No nipple discharge, no skin dimpling. "
               "Menarche age 12; G2P2. Mother had breast cancer in her 60s. Referred for diagnostic mammogram and ultrasound.",
               "Screening mammogram callback for a new irregular density in the {side} breast. Pt asymptomatic. No prior breast biopsies. "
               "Uses no hormone therapy. Referred to breast imaging for diagnostic work-up."),
    "nsclc": ("Pt c/o persistent cough x 2 months and 4 kg unintentional weight loss. {smoke}. No hemoptysis. CXR ordered, followed by CT chest.",
              "Incidental pulmonary nodule on CT obtained for abdominal pain in the ED. {smoke}. Mild exertional dyspnea, baseline. Pulmonology referral placed."),
    "colorectal": ("Pt reports intermittent bright red blood per rectum and change in bowel habits x 6 weeks; fatigue. Hgb low on screening labs. "
                   "Referred to GI for colonoscopy.",
                   "Positive FIT on routine screening. Pt reports mild abdominal discomfort. No prior colonoscopy. GI referral placed.",
                   "Pt c/o fatigue and exertional dyspnea x 2 months; no overt bleeding. Iron-deficiency anemia on labs. Referred to GI for "
                   "colonoscopy."),
    "pancreatic": ("Pt presents with painless jaundice, dark urine and pruritus x 10 days; 6 kg weight loss over 2 months. New-onset hyperglycemia. "
                   "CT abdomen (pancreas protocol) ordered.",
                   "Pt c/o epigastric pain radiating to the back, early satiety and weight loss. Lipase normal. CT abdomen ordered."),
    "gastric": ("Pt c/o early satiety, epigastric discomfort and 5 kg weight loss over 3 months; iron-deficiency anemia on labs. Referred for EGD.",
                "Progressive dysphagia to solids x 6 weeks with intermittent regurgitation. Referred to GI for urgent EGD."),
    "melanoma": ("Pt noticed a changing pigmented lesion on the {skin} (darker, raised, occasionally bleeds). No prior skin cancers. "
                 "Fair skin, hx of blistering sunburns. Dermatology referral placed.",
                 "Partner noticed an irregular dark lesion on the {skin}. Pt unsure how long present. Dermatology saw pt same week."),
    "ovarian": ("Pt c/o abdominal bloating, increasing girth and early satiety x 2 months; pelvic pressure. Pelvic US ordered, then CT A/P.",
                "Pt reports pelvic pain and urinary frequency; exam notable for a pelvic mass. Transvaginal US ordered."),
    "prostate": ("PSA elevated on routine screening. Pt reports nocturia x2, no hematuria, no bone pain. DRE: firm nodule, left lobe. Urology referral.",
                 "Pt c/o urinary hesitancy and weak stream. PSA elevated on repeat testing. Urology referral for MRI prostate and biopsy."),
}

SOCIAL = ("Lives with {who}; retired {job}. {smoke}. Alcohol: {etoh}. Independent in ADLs and IADLs; drives.",
          "Lives with {who}. Works part-time as a {job}. {smoke}. Alcohol: {etoh}. Active; walks daily.")
JOBS = ("teacher", "electrician", "accountant", "nurse", "bus driver", "engineer", "store manager", "farmer", "librarian", "chef")


@dataclass
class Draft:
    """What a cancer-type planner decides for one case; the timeline is assembled afterwards."""

    histology: str
    site: str
    tnm: str
    """T, N and M at diagnosis; the M category is replaced by the one of `sites` (`staging.m_category`) and the
    stage group is computed from it (`staging`), never written here."""
    markers: list[tuple[str, str, str, str | None]]
    consensus: list[tuple[str, str, str, str]]
    question: str
    sites: list[str] = field(default_factory=list)
    resection: tuple[str, str] | None = None
    nodes: tuple[int, int] | None = None
    """Regional nodes of the resection specimen: (positive, examined); the pathology's N is computed from it."""
    neoadjuvant: list[str] = field(default_factory=list)
    prior_lines: list[str] = field(default_factory=list)
    castration: str | None = None
    ecog: int = 1
    adjuvant: list[tuple[str, int]] = field(default_factory=list)
    """Completed adjuvant regimens, in order, and their durations in days (metachronous recurrences)."""
    current_line: str | None = None
    """A line of therapy still running at the board (restaging on treatment)."""
    margin: str = "R0"
    """Resection margin; it agrees with the pathology text."""
    persistent_psa: bool = False
    """Prostate after radical prostatectomy: the PSA stays detectable (residual disease)."""
    recurrence: bool = False
    """Metachronous recurrence: the TNM is the one at the first diagnosis (M0); metastases are dated at recurrence."""


def _pn(cancer_type: str, positive: int, method: staging.Method = "pathologic", station: str | None = None) -> str:
    """The pN (or ypN) category of `positive` nodes, from the staging module."""
    return staging.n_category(cancer_type, positive, method, station)


# --------------------------------------------------------------------------------------
# Cancer-type planners: (scenario, rng) -> Draft. Rationale strings cite the guideline
# logic in our own words.
# --------------------------------------------------------------------------------------


def _breast(scenario: str, rng: random.Random, age: int) -> Draft:
    subtype = rng.choices(("hr_pos", "her2_pos", "tnbc"), weights=(5, 3, 2))[0]
    hr_pos = subtype == "hr_pos" or (subtype == "her2_pos" and rng.random() < 0.5)
    er = ("ER", "positive", f"{rng.choice((70, 80, 90, 95, 100))}%", "IHC") if hr_pos else ("ER", "negative", "<1%", "IHC")
    pr = ("PR", "positive", f"{rng.choice((10, 20, 40, 60, 80))}%", "IHC") if hr_pos and rng.random() < 0.85 else ("PR", "negative", "<1%", "IHC")
    if subtype == "her2_pos":
        her2 = ("HER2", "positive", rng.choice(("IHC 3+", "IHC 2+, ISH ratio 2.6", "FISH ratio 4.1")), "IHC/ISH")
    else:
        her2 = ("HER2", "negative", rng.choice(("IHC 1+", "IHC 0", "IHC 2+, FISH ratio 1.3")), "IHC")
    markers = [er, pr, her2]
    side = rng.choice(("left", "right"))
    histology = "Invasive lobular carcinoma, grade 2" if hr_pos and subtype == "hr_pos" and rng.random() < 0.2 else f"Invasive ductal carcinoma, grade {rng.choice((2, 3))}"
    site = f"{side} breast"
    premenopausal = age < 50  # the record states it (`menopausal_status`, set in `_case` by the same rule)
    endocrine = "tamoxifen" if premenopausal else "letrozole"
    endocrine_why = ("NCCN Breast v.2026: premenopausal HR+ disease -> tamoxifen (or OFS + AI for higher risk)" if premenopausal
                     else "NCCN Breast v.2026: postmenopausal HR+ disease -> adjuvant aromatase inhibitor for 5+ years")
    ofs_why = "SOFT/TEXT (Francis, NEJM 2018) / NCCN Breast v.2026: premenopausal node-positive HR+ disease -> OFS + endocrine therapy"
    # Before menopause an aromatase inhibitor is given only with ovarian function suppression (NCCN Breast v.2026).
    ai = "ovarian function suppression + letrozole" if premenopausal else "letrozole"
    no_her2 = ("trastuzumab", "refusal", "biomarker", "HER2-directed therapy has no indication in HER2-negative disease (ASCO/CAP HER2 2023; NCCN Breast)")
    no_endocrine = ("tamoxifen", "refusal", "biomarker", "Endocrine therapy is ineffective in ER/PR-negative disease (ASCO/CAP ER/PgR 2020)")

    if scenario == "resected":
        lumpectomy = rng.random() < 0.6
        procedure = "lumpectomy with sentinel lymph node biopsy" if lumpectomy else f"{side} total mastectomy with sentinel lymph node biopsy"
        rt = [("whole-breast radiotherapy", "strong", "resection_status", "NCCN Breast v.2026: breast-conserving surgery is followed by whole-breast RT")] if lumpectomy else []
        if subtype == "her2_pos":
            examined = rng.randint(3, 6)
            path = f"ypT1c yp{_pn('breast', 1, 'sentinel')} (1/{examined} SLN), residual invasive disease after neoadjuvant therapy, margins negative"
            cons = [("T-DM1 (trastuzumab emtansine)", "strong", "biomarker", "NCCN Breast / KATHERINE: residual invasive HER2+ disease after neoadjuvant TCHP -> adjuvant T-DM1 x 14 cycles")]
            cons += rt
            if hr_pos and premenopausal:
                # Residual node-positive disease before menopause: OFS with endocrine therapy (review 2, css-breast-005).
                cons += [("ovarian function suppression + aromatase inhibitor (or tamoxifen)", "strong", "biomarker", ofs_why),
                         ("tamoxifen", "mixed", "biomarker", "Tamoxifen alone is for lower-risk premenopausal disease; residual node-positive disease favours OFS")]
            else:
                cons.append((endocrine, "strong", "biomarker", endocrine_why) if hr_pos else no_endocrine)
            cons.append(("trastuzumab + pertuzumab", "mixed", "biomarker", "Continuing dual HER2 blockade instead of T-DM1 is reserved for pCR; contested with residual disease"))
            # Stage and TNM are the clinical ones at diagnosis (cT2N1, stage IIB: why neoadjuvant therapy was given);
            # the ypT/ypN staging after treatment is the pathology's.
            return Draft(histology, site, "cT2N1M0", markers, cons, "Adjuvant therapy after neoadjuvant TCHP and surgery with residual disease?",
                         resection=(procedure, path), nodes=(1, examined), neoadjuvant=["TCHP (docetaxel, carboplatin, trastuzumab, pertuzumab)"], ecog=0)
        if subtype == "tnbc":
            brca = rng.random() < 0.35
            markers.append(("BRCA1", "positive" if brca else "negative", "germline pathogenic variant" if brca else "no pathogenic variant", "germline panel"))
            examined = rng.randint(2, 4)
            path = f"ypT1b ypN0 (0/{examined} SLN), residual invasive carcinoma (RCB-II), margins negative"
            cons = [("pembrolizumab (complete 1 year)", "strong", "prior_line", "KEYNOTE-522 / NCCN Breast: continue adjuvant pembrolizumab after neoadjuvant chemo-immunotherapy")]
            if brca:
                cons.append(("olaparib", "strong", "biomarker", "OlympiA / NCCN Breast: gBRCA carriers with residual disease -> adjuvant olaparib x 1 year"))
                cons.append(("capecitabine", "mixed", "biomarker", "CREATE-X capecitabine is an alternative to olaparib in gBRCA carriers; sequencing debated"))
            else:
                cons.append(("capecitabine", "strong", "stage", "CREATE-X / NCCN Breast: residual TNBC after neoadjuvant chemotherapy -> adjuvant capecitabine"))
            cons += rt
            cons.append(no_endocrine)
            return Draft(histology, site, "cT2N1M0", markers, cons, "Adjuvant therapy for residual triple-negative disease after neoadjuvant therapy?",
                         resection=(procedure, path), nodes=(0, examined), neoadjuvant=["pembrolizumab + carboplatin + paclitaxel, then AC (KEYNOTE-522)"], ecog=0)
        nodes = rng.random() < 0.4
        t = rng.choice(("1c", "2"))
        positive, examined = (rng.randint(1, 2) if nodes else 0), 3
        n = _pn("breast", positive, "sentinel")
        path = f"pT{t} p{n} ({positive}/{examined} SLN), margins negative"
        tnm = f"pT{t}{n}M0"
        if premenopausal and nodes:
            # Node-positive premenopausal HR+ disease: ovarian function suppression with endocrine therapy (SOFT/TEXT).
            cons = [("ovarian function suppression + aromatase inhibitor (or tamoxifen)", "strong", "biomarker", ofs_why),
                    ("tamoxifen", "mixed", "biomarker", "Tamoxifen alone is for lower-risk premenopausal disease; node involvement favours OFS")]
        else:
            cons = [(endocrine, "strong", "biomarker", endocrine_why)]
        if lumpectomy and age >= 70 and not nodes and t == "1c":
            # CALGB 9343 (Hughes, JCO 2013) / PRIME II (Kunkler, Lancet Oncol 2015): omitting RT with endocrine therapy is an
            # NCCN category 1 option at >= 70 with pT1 pN0 HR+ disease.
            rt = [("whole-breast radiotherapy", "mixed", "resection_status",
                   "NCCN Breast v.2026: at >= 70 with pT1 pN0 HR+ disease on endocrine therapy RT may be omitted (CALGB 9343, PRIME II)")]
        cons += rt
        if nodes:
            cons.append(("abemaciclib + endocrine therapy", "mixed", "stage", "monarchE / NCCN: adjuvant abemaciclib for high-risk node-positive HR+ disease; benefit in 1-3 nodes without other risk debated"))
        else:
            cons.append(("21-gene recurrence score (Oncotype DX) testing", "tacit", "biomarker", "NCCN Breast v.2026 / TAILORx: genomic assay guides adjuvant chemotherapy in HR+ HER2- pN0 disease"))
        cons.append(no_her2)
        return Draft(histology, site, tnm, markers, cons, "Adjuvant systemic therapy recommendation after surgery?", resection=(procedure, path),
                     nodes=(positive, examined), ecog=0)

    if scenario == "unresected":
        if subtype == "her2_pos":
            cons = [("neoadjuvant TCHP (docetaxel, carboplatin, trastuzumab, pertuzumab)", "strong", "biomarker", "NCCN Breast / ESMO: cT2N1 HER2+ disease -> neoadjuvant chemo + dual HER2 blockade, then surgery"),
                    ("surgery after neoadjuvant therapy", "strong", "stage", "Definitive surgery follows neoadjuvant systemic therapy"),
                    (("tamoxifen" if not hr_pos else "trastuzumab emtansine (T-DM1) upfront"), "refusal" if not hr_pos else "mixed", "biomarker",
                     "No endocrine therapy for HR-negative disease" if not hr_pos else "T-DM1 is a post-neoadjuvant option for residual disease, not first therapy")]
            return Draft(histology, site, "cT2N1M0", markers, cons, "Initial management of newly diagnosed HER2-positive breast cancer?", ecog=0)
        if subtype == "tnbc":
            cons = [("neoadjuvant pembrolizumab + carboplatin + paclitaxel (KEYNOTE-522)", "strong", "biomarker", "NCCN Breast / KEYNOTE-522: stage II-III TNBC -> neoadjuvant chemo-immunotherapy"),
                    ("surgery after neoadjuvant therapy", "strong", "stage", "Definitive surgery follows neoadjuvant systemic therapy"), no_endocrine, no_her2]
            return Draft(histology, site, "cT2N1M0", markers, cons, "Initial management of newly diagnosed triple-negative breast cancer?", ecog=0)
        cons = [("surgery (lumpectomy with sentinel lymph node biopsy)", "strong", "stage", "NCCN Breast: cT1-2N0 HR+ HER2- disease -> primary surgery, adjuvant therapy by pathology"),
                ("neoadjuvant endocrine therapy", "mixed", "biomarker", "Neoadjuvant endocrine therapy is an option mainly for postmenopausal pts who are poor surgical candidates"),
                no_her2]
        return Draft(histology, site, "cT1cN0M0", markers, cons, "Initial management of newly diagnosed early breast cancer?", ecog=0)

    sites = rng.choice((["bone"], ["liver", "bone"], ["lung", "bone"], ["liver"]))
    bone = ("zoledronic acid or denosumab", "tacit", "stage", "NCCN Breast: bone metastases -> bone-modifying agent to reduce skeletal events")
    if scenario == "met_naive":
        if subtype == "hr_pos":
            cons = [(f"{ai} + CDK4/6 inhibitor (palbociclib/ribociclib/abemaciclib)", "strong", "biomarker",
                     "NCCN Breast / PALOMA-2, MONALEESA-2, MONARCH-3 (MONALEESA-7 before menopause, with OFS): first-line AI + CDK4/6i for HR+ HER2- MBC"), no_her2]
        elif subtype == "her2_pos":
            cons = [("docetaxel + trastuzumab + pertuzumab (THP)", "strong", "biomarker", "NCCN Breast / CLEOPATRA: first-line THP for HER2+ MBC"),
                    (no_endocrine if not hr_pos else ("endocrine therapy after THP induction", "tacit", "biomarker", "Maintenance endocrine therapy with HER2 blockade in HR+ HER2+ MBC"))]
        else:
            cps = rng.choice((1, 5, 15, 30))
            markers.append(("PD-L1", "positive" if cps >= 10 else "negative", f"CPS {cps}", "IHC 22C3"))
            if cps >= 10:
                cons = [("pembrolizumab + paclitaxel (or nab-paclitaxel or gemcitabine/carboplatin)", "strong", "biomarker", "KEYNOTE-355 / NCCN: PD-L1 CPS >=10 TNBC -> first-line pembrolizumab + chemotherapy")]
            else:
                cons = [("paclitaxel", "strong", "biomarker", "NCCN Breast: PD-L1 CPS <10 TNBC -> single-agent taxane or other chemotherapy first line"),
                        ("pembrolizumab + chemotherapy", "refusal", "biomarker", "Pembrolizumab benefit in MBC is limited to PD-L1 CPS >=10 (KEYNOTE-355)")]
            cons.append(no_endocrine)
        if "bone" in sites:
            cons.append(bone)
        return Draft(histology, site, "cT2N1M1", markers, cons, "First-line treatment for newly diagnosed metastatic breast cancer?", sites=sites, ecog=rng.choice((0, 1)))

    # met_pretreated
    if subtype == "hr_pos":
        pik3ca = rng.random() < 0.45
        markers.append(("PIK3CA", "positive" if pik3ca else "negative", "H1047R" if pik3ca else "wild-type", "NGS (ctDNA)"))
        first = f"{ai} + palbociclib"
        # Before menopause fulvestrant-based therapy, too, is given with ovarian function suppression (NCCN Breast v.2026).
        with_ofs = " (with ovarian function suppression)" if premenopausal else ""
        cons = [((f"fulvestrant + capivasertib{with_ofs}", "strong", "biomarker", "CAPItello-291 / NCCN: PIK3CA/AKT1/PTEN-altered HR+ MBC after AI + CDK4/6i -> fulvestrant + capivasertib") if pik3ca
                 else (f"fulvestrant + everolimus{with_ofs}", "tacit", "prior_line", "NCCN Breast: after AI + CDK4/6i without actionable alteration -> fulvestrant-based therapy (e.g. + everolimus)")),
                (first, "refusal", "prior_line", "Progression on AI + CDK4/6i: do not repeat the failed regimen"),
                ("capecitabine", "mixed", "prior_line", "Chemotherapy is an option when endocrine resistance or visceral crisis is suspected"), no_her2]
    elif subtype == "her2_pos":
        first = "docetaxel + trastuzumab + pertuzumab"
        cons = [("trastuzumab deruxtecan (T-DXd)", "strong", "prior_line", "DESTINY-Breast03 / NCCN: second-line HER2+ MBC after taxane + trastuzumab -> T-DXd"),
                ("docetaxel + trastuzumab + pertuzumab", "refusal", "prior_line", "Progression on THP: do not repeat the failed regimen"),
                ("tucatinib + trastuzumab + capecitabine", "tacit", "prior_line", "HER2CLIMB: later-line option, preferred with brain metastases")]
    else:
        first = "carboplatin + paclitaxel"
        her2_low = re.search(r"IHC [12]\+", her2[2]) is not None
        prior = [first] if her2_low else [first, "capecitabine"]
        if her2_low:
            cons = [("trastuzumab deruxtecan (T-DXd)", "strong", "biomarker",
                     "DESTINY-Breast04 (Modi, NEJM 2022) / NCCN Breast v.2026: HER2-low (IHC 1+ or 2+/ISH-) MBC after >=1 prior chemotherapy for metastatic disease -> T-DXd"),
                    ("sacituzumab govitecan", "mixed", "prior_line",
                     "ASCENT / FDA label 2023: TNBC after >=2 prior systemic therapies (>=1 metastatic); one prior line here, so it follows T-DXd")]
        else:
            cons = [("sacituzumab govitecan", "strong", "prior_line",
                     "ASCENT (Bardia, NEJM 2021) / NCCN Breast v.2026: TNBC after >=2 prior systemic therapies, >=1 for metastatic disease -> sacituzumab govitecan")]
        cons += [("carboplatin + paclitaxel", "refusal", "prior_line", "Progression on platinum-taxane: do not repeat the failed regimen"), no_endocrine]
        if "bone" in sites:
            cons.append(bone)
        return Draft(histology, site, "cT2N1M1", markers, cons, "Next line of therapy after progression?", sites=sites, prior_lines=prior, ecog=1)
    if "bone" in sites:
        cons.append(bone)
    return Draft(histology, site, "cT2N1M1", markers, cons, "Next line of therapy after progression?", sites=sites, prior_lines=[first], ecog=1)


def _nsclc(scenario: str, rng: random.Random, age: int, variant: int) -> Draft:
    site = rng.choice(("right upper lobe", "left upper lobe", "right lower lobe", "left lower lobe"))
    histology = "Adenocarcinoma, acinar predominant"

    def panel(egfr: str | None = None, alk: bool = False, tps: int = 5) -> list[tuple[str, str, str, str | None]]:
        rows = [("EGFR", "positive" if egfr else "negative", egfr or "wild-type", "NGS"),
                ("ALK", "positive" if alk else "negative", "EML4-ALK fusion" if alk else "negative", "NGS/IHC"),
                ("PD-L1", "positive" if tps >= 1 else "negative", f"TPS {tps}%" if tps >= 1 else "TPS <1%", "IHC 22C3")]
        if not egfr and not alk:
            rows.append(("KRAS", rng.choice(("positive", "negative")), rng.choice(("G12V", "G12D", "G13C")), "NGS"))
        return rows

    no_egfr_tki = ("osimertinib", "refusal", "biomarker", "EGFR TKIs have no role in EGFR wild-type NSCLC")
    if scenario == "resected":
        kind = rng.choices(("egfr", "alk", "neg"), weights=(4, 1, 5))[0]
        egfr = rng.choice(("exon 19 deletion", "L858R")) if kind == "egfr" else None
        tps = rng.choice((0, 5, 30, 60))
        markers = panel(egfr, kind == "alk", tps)
        # N is the nodal station (N1 hilar, N2 mediastinal); N0 means no positive node (AJCC 8).
        t, station = rng.choice((("T2b", "hilar"), ("T2a", "mediastinal"), ("T2b", None)))
        positive, examined = (rng.randint(1, 3) if station else 0), rng.randint(12, 20)
        tnm = f"p{t}{_pn('nsclc', positive, station=station)}M0"
        path = f"{tnm[:-2]} ({positive}/{examined} LN), margins negative"
        chemo = ("cisplatin + pemetrexed (adjuvant, 4 cycles)", "strong" if kind == "neg" and age < 75 else "tacit" if age < 75 else "mixed", "stage",
                 "NCCN NSCLC v.2026 / LACE: resected stage II-IIIA -> adjuvant cisplatin-based chemotherapy" if age < 75 else
                 "LACE: cisplatin benefit at >= 75 years is uncertain (few patients); carboplatin substitution or no chemotherapy is debated")
        if kind == "egfr":
            cons = [("osimertinib (adjuvant, 3 years)", "strong", "biomarker", "ADAURA / NCCN NSCLC: resected stage IB-IIIA EGFR ex19del/L858R -> adjuvant osimertinib"), chemo,
                    ("atezolizumab (adjuvant)", "refusal", "biomarker", "Adjuvant checkpoint inhibitors are not used in EGFR-mutant NSCLC (IMpower010 subgroup, NCCN)")]
        elif kind == "alk":
            cons = [("alectinib (adjuvant, 2 years)", "strong", "biomarker", "ALINA / NCCN NSCLC: resected stage IB-IIIA ALK+ -> adjuvant alectinib"),
                    ("atezolizumab (adjuvant)", "refusal", "biomarker", "Adjuvant checkpoint inhibitors are not used in ALK-rearranged NSCLC")]
        else:
            io = ("atezolizumab or pembrolizumab (adjuvant, after chemotherapy)", "tacit", "biomarker",
                  "IMpower010 (atezolizumab: PD-L1 >=1%) / PEARLS (pembrolizumab, any PD-L1): adjuvant IO after chemotherapy") if tps >= 1 else (
                  "pembrolizumab (adjuvant, after chemotherapy)", "tacit", "biomarker",
                  "PEARLS/KEYNOTE-091: adjuvant pembrolizumab regardless of PD-L1; atezolizumab (IMpower010) is approved only for PD-L1 >=1%")
            cons = [chemo, io, no_egfr_tki]
        return Draft(histology, site, tnm, markers, cons, "Adjuvant therapy after lobectomy?", resection=("VATS lobectomy with mediastinal lymph node dissection", path),
                     nodes=(positive, examined), ecog=rng.choice((0, 1)))

    if scenario == "unresected":
        markers = panel(None, False, rng.choice((5, 20, 60)))
        if variant % 2 == 0:
            cons = [("neoadjuvant nivolumab + platinum-doublet chemotherapy, then lobectomy", "strong", "stage", "CheckMate 816 / NCCN NSCLC: resectable stage II-IIIA driver-negative -> neoadjuvant chemo-IO then surgery"),
                    ("surgery (lobectomy)", "strong", "stage", "Resectable disease: anatomic lobectomy with nodal dissection"), no_egfr_tki]
            return Draft(histology, site, "cT3N0M0", markers, cons, "Initial management of resectable non-small cell lung cancer?", ecog=0)
        cons = [("concurrent chemoradiation (carboplatin + paclitaxel with thoracic radiotherapy)", "strong", "stage", "NCCN NSCLC / PACIFIC: unresectable stage III -> definitive concurrent chemoradiation"),
                ("durvalumab consolidation", "strong", "stage", "PACIFIC: durvalumab for 12 months after chemoradiation without progression"), no_egfr_tki]
        return Draft(histology, site, "cT3N2M0", markers, cons, "Management of unresectable stage III NSCLC?", ecog=1)

    sites = rng.choice((["liver", "bone"], ["contralateral lung", "adrenal gland"], ["brain", "bone"], ["bone"]))
    if scenario == "met_naive":
        # variant 0-1 EGFR, 2 ALK, 3-6 PD-L1 >= 50%, 7-8 PD-L1 1-49%
        if variant < 2:
            markers = panel(rng.choice(("exon 19 deletion", "L858R")), False, rng.choice((0, 10)))
            cons = [("osimertinib", "strong", "biomarker", "FLAURA / NCCN NSCLC: first-line osimertinib for EGFR ex19del/L858R metastatic NSCLC"),
                    ("osimertinib + carboplatin + pemetrexed", "tacit", "biomarker", "FLAURA2: chemotherapy added to osimertinib, preferred with high disease burden"),
                    ("pembrolizumab", "refusal", "biomarker", "Checkpoint-inhibitor monotherapy is ineffective first line in EGFR-mutant NSCLC")]
        elif variant == 2:
            markers = panel(None, True, 10)
            cons = [("alectinib", "strong", "biomarker", "ALEX / NCCN NSCLC: first-line alectinib (or lorlatinib) for ALK+ metastatic NSCLC"),
                    ("lorlatinib", "tacit", "biomarker", "CROWN: first-line lorlatinib, especially with brain metastases"),
                    ("pembrolizumab", "refusal", "biomarker", "Checkpoint inhibitors are not used first line in ALK-rearranged NSCLC")]
        elif variant < 7:
            markers = panel(None, False, rng.choice((50, 60, 75, 90)))
            cons = [("pembrolizumab", "strong", "biomarker", "KEYNOTE-024 / NCCN NSCLC: PD-L1 TPS >=50%, no driver -> first-line pembrolizumab monotherapy"),
                    ("carboplatin + pemetrexed + pembrolizumab", "tacit", "biomarker", "KEYNOTE-189: chemo-IO is also acceptable at TPS >=50%"), no_egfr_tki]
        else:
            markers = panel(None, False, rng.choice((5, 20, 40)))
            cons = [("carboplatin + pemetrexed + pembrolizumab", "strong", "biomarker", "KEYNOTE-189 / NCCN NSCLC: PD-L1 1-49%, no driver -> platinum doublet + pembrolizumab"),
                    ("pembrolizumab", "mixed", "biomarker", "Single-agent pembrolizumab at TPS 1-49% (KEYNOTE-042) is inferior to chemo-IO for fit patients"), no_egfr_tki]
        return Draft(histology, site, "cT2bN2M1", markers, cons,
                     "First-line treatment for metastatic NSCLC?", sites=sites, ecog=rng.choice((0, 1)))

    if variant % 2 == 0:
        markers = panel(rng.choice(("exon 19 deletion", "L858R")), False, 5)
        cons = [("amivantamab + carboplatin + pemetrexed", "strong", "prior_line", "MARIPOSA-2 / NCCN NSCLC: progression on osimertinib -> amivantamab + platinum-pemetrexed"),
                ("carboplatin + pemetrexed", "tacit", "prior_line", "Platinum-pemetrexed after osimertinib when amivantamab is unavailable"),
                ("osimertinib", "refusal", "prior_line", "Do not continue the TKI alone after systemic progression"),
                ("biomarker testing (tissue or plasma NGS for resistance mechanisms)", "tacit", "biomarker", "NCCN: re-biopsy/plasma NGS at progression on osimertinib (MET, histologic transformation)")]
        first = "osimertinib"
    else:
        markers = panel(None, False, rng.choice((5, 30)))
        cons = [("docetaxel + ramucirumab", "strong", "prior_line", "REVEL / NCCN NSCLC: second line after platinum-IO -> docetaxel +/- ramucirumab"),
                ("pembrolizumab", "refusal", "prior_line", "Do not rechallenge the checkpoint inhibitor on which disease progressed"),
                ("clinical trial", "tacit", "prior_line", "Trial enrolment is preferred after progression on chemo-IO")]
        first = "carboplatin + pemetrexed + pembrolizumab"
    return Draft(histology, site, "cT2bN2M1", markers, cons, "Next line of therapy after progression?", sites=sites, prior_lines=[first], ecog=1)


COLECTOMY: dict[str, str] = {
    "sigmoid colon": "laparoscopic sigmoid colectomy",
    "descending colon": "laparoscopic left hemicolectomy",
    "ascending colon": "laparoscopic right hemicolectomy",
    "cecum": "laparoscopic right hemicolectomy",
    "transverse colon": "laparoscopic extended right hemicolectomy",
}
"""The segmental resection for each primary site (NCCN Colon v.2026, principles of surgery: colectomy with en bloc
removal of the regional lymph nodes of the segment's blood supply)."""


def _colorectal(scenario: str, rng: random.Random, age: int) -> Draft:
    site = rng.choice(("sigmoid colon", "descending colon", "ascending colon", "cecum", "transverse colon"))
    left = site in ("sigmoid colon", "descending colon")
    msi = rng.random() < (0.15 if scenario.startswith("met") else 0.2)
    kras = not msi and rng.random() < 0.45
    braf = not kras and not msi and rng.random() < 0.15
    markers = [("KRAS", "positive" if kras else "negative", rng.choice(("G12D", "G12V", "G13D")) if kras else "wild-type", "NGS"),
               ("NRAS", "negative", "wild-type", "NGS"),
               ("BRAF", "positive" if braf else "negative", "V600E" if braf else "wild-type", "NGS"),
               ("MSI", "positive" if msi else "negative", "MSI-H" if msi else "MSS", "IHC/PCR")]
    histology = "Adenocarcinoma, moderately differentiated"
    no_anti_egfr = ("cetuximab", "refusal", "biomarker", "Anti-EGFR antibodies are ineffective in RAS-mutant CRC (NCCN Colon)")

    if scenario == "resected":
        procedure = COLECTOMY[site]
        if msi and rng.random() < 0.5:
            examined = rng.randint(14, 24)
            path = f"pT3 pN0 (0/{examined} LN), margins negative, no LVI"
            cons = [("surveillance", "strong", "biomarker", "NCCN Colon: stage II dMMR/MSI-H -> observation; fluoropyrimidine alone gives no benefit"),
                    ("capecitabine", "refusal", "biomarker", "Single-agent fluoropyrimidine is not used for stage II MSI-H colon cancer")]
            return Draft(histology, site, "pT3N0M0", markers, cons, "Adjuvant therapy after colectomy?", resection=(procedure, path), nodes=(0, examined), ecog=0)
        high_risk = rng.random() < 0.5
        positive, examined = (rng.randint(4, 6) if high_risk else rng.randint(1, 3)), rng.randint(14, 24)
        t, n = ("T4a" if high_risk else "T3"), _pn("colorectal", positive)
        path = f"p{t} p{n} ({positive}/{examined} LN), margins negative"
        tnm = f"p{t}{n}M0"
        cons = [("CAPOX (adjuvant)" if not high_risk else "FOLFOX or CAPOX (adjuvant, 6 months)", "strong", "stage",
                 "IDEA / NCCN Colon: low-risk stage III -> 3 months CAPOX" if not high_risk else "IDEA / NCCN Colon: high-risk stage III (T4 or N2) -> 6 months oxaliplatin doublet"),
                ("FOLFOX (adjuvant)" if not high_risk else "capecitabine alone", "tacit" if not high_risk else "mixed", "comorbidity",
                 "FOLFOX is the infusional alternative" if not high_risk else "Fluoropyrimidine alone only if oxaliplatin is contraindicated"),
                ("bevacizumab (adjuvant)", "refusal", "stage", "NSABP C-08 / AVANT: no role for bevacizumab in the adjuvant setting")]
        return Draft(histology, site, tnm, markers, cons, "Adjuvant therapy after colectomy?", resection=(procedure, path), nodes=(positive, examined), ecog=0)

    if scenario == "unresected":
        cons = [("surgery (colectomy with en bloc lymphadenectomy)", "strong", "stage", "NCCN Colon: resectable non-metastatic colon cancer -> colectomy with en bloc lymphadenectomy"),
                ("CAPOX or FOLFOX (adjuvant) if node-positive at surgery", "tacit", "stage", "NCCN Colon: adjuvant oxaliplatin doublet for pathologic stage III after colectomy")]
        if msi:
            cons.append(("neoadjuvant immunotherapy (pembrolizumab or nivolumab + ipilimumab)", "mixed", "biomarker", "NICHE-2: neoadjuvant IO in dMMR colon cancer; not yet standard outside trials"))
        else:
            cons.append(("neoadjuvant FOLFOX", "mixed", "stage", "FOxTROT: neoadjuvant chemotherapy for radiologic T4 colon cancer; contested"))
        return Draft(histology, site, "cT3N1M0", markers, cons, "Initial management of newly diagnosed colon cancer?", ecog=0)

    sites = rng.choice((["liver"], ["liver", "lung"], ["peritoneum"], ["liver", "peritoneum"]))
    tnm = "cT3N1M1"
    if scenario == "met_naive":
        if msi:
            cons = [("pembrolizumab", "strong", "biomarker", "KEYNOTE-177 / NCCN Colon: MSI-H/dMMR mCRC -> first-line pembrolizumab"),
                    ("nivolumab + ipilimumab", "tacit", "biomarker", "CheckMate 8HW: first-line nivolumab + ipilimumab for MSI-H mCRC"),
                    ("FOLFOX + bevacizumab", "mixed", "biomarker", "Chemotherapy first line is inferior to IO in MSI-H disease")]
        elif braf:
            cons = [("encorafenib + cetuximab + FOLFOX", "strong", "biomarker", "BREAKWATER / NCCN Colon 2025: BRAF V600E mCRC -> first-line encorafenib + cetuximab + mFOLFOX6"),
                    ("FOLFOXIRI + bevacizumab", "mixed", "biomarker", "Triplet + bevacizumab was the prior standard for fit BRAF-mutant pts")]
        elif kras:
            cons = [("FOLFOX + bevacizumab", "strong", "biomarker", "NCCN Colon: RAS-mutant mCRC -> oxaliplatin or irinotecan doublet + bevacizumab"),
                    ("FOLFIRI + bevacizumab", "tacit", "biomarker", "Irinotecan-based doublet is an equivalent first-line backbone"), no_anti_egfr]
        elif left:
            cons = [("FOLFOX + panitumumab", "strong", "biomarker", "PARADIGM / NCCN Colon: left-sided RAS/BRAF wild-type mCRC -> doublet + anti-EGFR antibody"),
                    ("FOLFOX + bevacizumab", "tacit", "biomarker", "Bevacizumab is an acceptable alternative biologic")]
        else:
            cons = [("FOLFOX + bevacizumab", "strong", "histology", "NCCN Colon: right-sided primary -> bevacizumab preferred over anti-EGFR even if RAS wild-type"),
                    ("FOLFOX + cetuximab", "mixed", "histology", "Anti-EGFR benefit is limited in right-sided primaries")]
        return Draft(histology, site, tnm, markers, cons, "First-line treatment for metastatic colorectal cancer?", sites=sites, ecog=rng.choice((0, 1)))

    if braf:
        first = "FOLFOX + bevacizumab"
        cons = [("encorafenib + cetuximab", "strong", "biomarker", "BEACON / NCCN Colon: BRAF V600E mCRC after prior therapy -> encorafenib + cetuximab"),
                ("FOLFOX + bevacizumab", "refusal", "prior_line", "Progression on FOLFOX-bevacizumab: do not repeat")]
    else:
        first = "FOLFOX + bevacizumab"
        cons = [("FOLFIRI + bevacizumab", "strong", "prior_line", "NCCN Colon / ML18147: after oxaliplatin-based first line -> FOLFIRI with continued VEGF blockade"),
                ("FOLFOX + bevacizumab", "refusal", "prior_line", "Progression on FOLFOX-bevacizumab: do not repeat")]
        if kras:
            cons.append(no_anti_egfr)
        else:
            cons.append(("FOLFIRI + panitumumab", "tacit", "biomarker", "RAS wild-type: anti-EGFR may be added in second line if not used before"))
    if msi:
        cons = [("pembrolizumab", "strong", "biomarker", "NCCN Colon: IO-naive MSI-H mCRC after chemotherapy -> pembrolizumab"), *cons[1:]]
    return Draft(histology, site, tnm, markers, cons, "Next line of therapy after progression?", sites=sites, prior_lines=[first], ecog=1)


def _pancreatic(scenario: str, rng: random.Random, age: int) -> Draft:
    site = rng.choice(("pancreatic head", "pancreatic head", "pancreatic body", "pancreatic tail"))
    gbrca = rng.random() < 0.12
    markers = [("BRCA2", "positive" if gbrca else "negative", "germline pathogenic variant" if gbrca else "no pathogenic variant", "germline panel"),
               ("KRAS", "positive", rng.choice(("G12D", "G12V", "G12R")), "NGS"),
               ("MSI", "negative", "MSS", "IHC")]
    histology = "Pancreatic ductal adenocarcinoma"
    ecog = rng.choice((0, 1, 1))
    if scenario == "resected":
        procedure = "pancreaticoduodenectomy (Whipple)" if site == "pancreatic head" else "distal pancreatectomy with splenectomy"
        t, node_positive = rng.choice((("T2", True), ("T3", False), ("T2", False)))
        positive, examined = (rng.randint(1, 3) if node_positive else 0), rng.randint(14, 24)
        tnm = f"p{t}{_pn('pancreatic', positive)}M0"
        path = f"{tnm[:-2]} ({positive}/{examined} LN), margins negative"
        cons = [("modified FOLFIRINOX (adjuvant, 6 months)", "strong", "resection_status", "PRODIGE 24 / NCCN Pancreatic: resected PDAC, ECOG 0-1 -> adjuvant mFOLFIRINOX"),
                ("gemcitabine + capecitabine (adjuvant)", "tacit", "performance_status", "ESPAC-4: alternative when mFOLFIRINOX is not suitable"),
                ("olaparib", "refusal", "biomarker", "PARP inhibitors have no adjuvant role in PDAC (POLO is a metastatic maintenance trial)")]
        return Draft(histology, site, tnm, markers, cons, "Adjuvant therapy after pancreatic resection?", resection=(procedure, path),
                     nodes=(positive, examined), ecog=ecog)
    if scenario == "unresected":
        tnm = rng.choice(("cT2N1M0", "cT3N1M0"))
        upfront = "upfront pancreaticoduodenectomy" if site == "pancreatic head" else "upfront distal pancreatectomy"
        cons = [("neoadjuvant FOLFIRINOX, then restaging for resection", "strong", "stage", "NCCN Pancreatic: borderline resectable PDAC -> neoadjuvant chemotherapy (+/- RT) before surgery"),
                ("gemcitabine + nab-paclitaxel (neoadjuvant)", "tacit", "performance_status", "Alternative neoadjuvant regimen for less fit patients"),
                (upfront, "refusal", "stage", "Upfront surgery is not recommended for borderline resectable disease (NCCN)")]
        return Draft(histology, site, tnm, markers, cons, "Initial management of borderline resectable pancreatic cancer?", ecog=0)
    sites = rng.choice((["liver"], ["liver", "peritoneum"], ["lung"]))
    if scenario == "met_naive":
        cons = [("FOLFIRINOX", "strong", "performance_status", "PRODIGE 4 / NCCN Pancreatic: metastatic PDAC, ECOG 0-1 -> FOLFIRINOX (or NALIRIFOX)"),
                ("gemcitabine + nab-paclitaxel", "tacit", "performance_status", "MPACT: alternative first-line doublet")]
        if gbrca:
            cons.append(("olaparib maintenance after >=16 weeks of platinum without progression", "tacit", "biomarker", "POLO: gBRCA metastatic PDAC -> olaparib maintenance after platinum"))
        else:
            cons.append(("olaparib", "refusal", "biomarker", "PARP inhibitor maintenance needs a germline BRCA1/2 mutation"))
        return Draft(histology, site, "cT3N1M1", markers, cons, "First-line treatment for metastatic pancreatic cancer?", sites=sites, ecog=ecog)
    first = rng.choice(("FOLFIRINOX", "gemcitabine + nab-paclitaxel"))
    if first == "FOLFIRINOX":
        cons = [("gemcitabine + nab-paclitaxel", "strong", "prior_line", "NCCN Pancreatic: after fluoropyrimidine-based first line -> gemcitabine-based second line"),
                ("FOLFIRINOX", "refusal", "prior_line", "Progression on FOLFIRINOX: do not repeat")]
    else:
        cons = [("liposomal irinotecan + 5-FU/leucovorin", "strong", "prior_line", "NAPOLI-1 / NCCN Pancreatic: after gemcitabine-based first line -> nal-IRI + 5-FU/LV"),
                ("gemcitabine + nab-paclitaxel", "refusal", "prior_line", "Progression on gemcitabine/nab-paclitaxel: do not repeat")]
    cons.append(("best supportive care", "mixed", "performance_status", "BSC alone is reasonable if performance status declines"))
    return Draft(histology, site, "cT3N1M1", markers, cons, "Next line of therapy after progression?", sites=sites, prior_lines=[first], ecog=1)


def _gastric(scenario: str, rng: random.Random, age: int) -> Draft:
    site = rng.choice(("gastric antrum", "gastric body", "gastroesophageal junction"))
    her2 = rng.random() < 0.22
    cps = rng.choice((0, 2, 5, 10))
    cldn = not her2 and rng.random() < 0.35
    markers = [("HER2", "positive" if her2 else "negative", "IHC 3+" if her2 else rng.choice(("IHC 0", "IHC 1+")), "IHC"),
               ("PD-L1", "positive" if cps >= 1 else "negative", f"CPS {cps}", "IHC 22C3"),
               ("MSI", "negative", "MSS", "IHC"),
               ("CLDN18.2", "positive" if cldn else "negative", "75% of tumor cells 2+/3+" if cldn else "<75% of tumor cells", "IHC")]
    histology = rng.choice(("Adenocarcinoma, intestinal type", "Adenocarcinoma, diffuse type (signet-ring cells)"))
    no_her2 = ("trastuzumab", "refusal", "biomarker", "Trastuzumab has no benefit in HER2-negative gastric cancer (ToGA)")
    if scenario == "resected":
        periop = rng.random() < 0.6
        # Perioperative FLOT: stage and TNM are the clinical ones that indicated it (cT3N1, stage III); the
        # pathology carries the ypT/ypN after treatment.
        positive, examined = rng.randint(1, 6), rng.randint(18, 32)
        n = _pn("gastric", positive)
        tnm = "cT3N1M0" if periop else f"pT3{n}M0"
        path = f"{'ypT3 yp' if periop else 'pT3 p'}{n} ({positive}/{examined} LN), R0"
        # Distal (subtotal) gastrectomy for an antral primary, total gastrectomy for the body and the junction (NCCN Gastric v.2026).
        gastrectomy = "distal gastrectomy with D2 lymphadenectomy" if site == "gastric antrum" else "total gastrectomy with D2 lymphadenectomy"
        if periop:
            cons = [("FLOT (complete the 4 postoperative cycles)", "strong", "prior_line", "FLOT4 / NCCN Gastric: perioperative FLOT -> complete adjuvant cycles after gastrectomy"),
                    ("nivolumab (adjuvant)", "mixed", "stage", "CheckMate 577 applies to esophageal/GEJ cancer after chemoradiation, not to this setting"),
                    no_her2 if not her2 else ("trastuzumab (adjuvant)", "mixed", "biomarker", "Adding trastuzumab perioperatively is investigational (PETRARCA)")]
            return Draft(histology, site, tnm, markers, cons, "Postoperative therapy after perioperative FLOT and gastrectomy?",
                         resection=(gastrectomy, path), nodes=(positive, examined), neoadjuvant=["FLOT (perioperative)"], ecog=0)
        cons = [("CAPOX (adjuvant, 6 months)", "strong", "stage", "CLASSIC / NCCN Gastric: upfront D2 gastrectomy, stage II-III -> adjuvant CAPOX"),
                ("S-1 (adjuvant)", "tacit", "stage", "ACTS-GC: adjuvant S-1 (mainly in Asia)"),
                no_her2 if not her2 else ("trastuzumab (adjuvant)", "mixed", "biomarker", "No adjuvant trastuzumab indication in gastric cancer")]
        return Draft(histology, site, tnm, markers, cons, "Adjuvant therapy after gastrectomy?", resection=(gastrectomy, path), nodes=(positive, examined), ecog=0)
    if scenario == "unresected":
        cons = [("perioperative FLOT, then gastrectomy", "strong", "stage", "FLOT4 / NCCN Gastric: cT2+ or N+ resectable gastric cancer -> perioperative FLOT"),
                ("surgery (gastrectomy with D2 lymphadenectomy)", "strong", "stage", "Definitive gastrectomy after neoadjuvant chemotherapy"),
                ("pembrolizumab + FLOT (perioperative)", "mixed", "biomarker", "KEYNOTE-585 was negative for EFS; not standard")]
        return Draft(histology, site, "cT3N1M0", markers, cons, "Initial management of newly diagnosed gastric cancer?", ecog=0)
    sites = rng.choice((["liver"], ["peritoneum"], ["liver", "distant lymph nodes"]))
    if scenario == "met_naive":
        if her2:
            cons = [("CAPOX + trastuzumab + pembrolizumab", "strong", "biomarker", "KEYNOTE-811 / NCCN Gastric: HER2+ PD-L1 CPS >=1 -> fluoropyrimidine-platinum + trastuzumab + pembrolizumab") if cps >= 1
                    else ("CAPOX + trastuzumab", "strong", "biomarker", "ToGA / NCCN Gastric: HER2+ -> fluoropyrimidine-platinum + trastuzumab"),
                    ("FOLFOX + nivolumab", "mixed", "biomarker", "HER2-directed therapy is preferred over IO-chemo alone in HER2+ disease")]
        elif cps >= 5:
            cons = [("FOLFOX + nivolumab", "strong", "biomarker", "CheckMate 649 / NCCN Gastric: HER2- PD-L1 CPS >=5 -> chemo + nivolumab"),
                    ("CAPOX + pembrolizumab", "tacit", "biomarker", "KEYNOTE-859: chemo + pembrolizumab"), no_her2]
        elif cldn:
            cons = [("FOLFOX + zolbetuximab", "strong", "biomarker", "SPOTLIGHT / GLOW: CLDN18.2-positive HER2- disease -> chemo + zolbetuximab"), no_her2]
        else:
            cons = [("FOLFOX", "strong", "biomarker", "NCCN Gastric: HER2-, low PD-L1, CLDN18.2-negative -> fluoropyrimidine-platinum doublet"),
                    ("FOLFOX + nivolumab", "mixed", "biomarker", "IO benefit at CPS <5 is small and contested"), no_her2]
        return Draft(histology, site, "cT3N2M1", markers, cons, "First-line treatment for metastatic gastric cancer?", sites=sites, ecog=rng.choice((0, 1)))
    if her2:
        first = "CAPOX + trastuzumab + pembrolizumab"
        cons = [("trastuzumab deruxtecan (T-DXd)", "strong", "biomarker", "DESTINY-Gastric01/04 / NCCN Gastric: HER2+ after trastuzumab-based first line -> T-DXd"),
                ("paclitaxel + ramucirumab", "tacit", "prior_line", "RAINBOW: standard second line regardless of HER2")]
    else:
        first = "FOLFOX + nivolumab"
        cons = [("paclitaxel + ramucirumab", "strong", "prior_line", "RAINBOW / NCCN Gastric: second line after fluoropyrimidine-platinum -> paclitaxel + ramucirumab"),
                ("FOLFOX + nivolumab", "refusal", "prior_line", "Progression on FOLFOX-nivolumab: do not repeat"), no_her2]
    return Draft(histology, site, "cT3N2M1", markers, cons, "Next line of therapy after progression?", sites=sites, prior_lines=[first], ecog=1)


def _melanoma_t(histology: str) -> str:
    """AJCC 8 melanoma T category from the Breslow depth and ulceration the histology states (T1 <=1.0 mm, T2 1-2,
    T3 2-4, T4 >4 mm; a = non-ulcerated, b = ulcerated)."""
    m = re.search(r"Breslow (\d+(?:\.\d+)?) mm, (non-ulcerated|ulcerated)", histology)
    assert m is not None, histology
    depth = float(m.group(1))
    t = 1 if depth <= 1.0 else 2 if depth <= 2.0 else 3 if depth <= 4.0 else 4
    return f"T{t}{'b' if m.group(2) == 'ulcerated' else 'a'}"


def _melanoma(scenario: str, rng: random.Random, age: int) -> Draft:
    site = rng.choice(("upper back", "left calf", "right shoulder", "scalp", "left forearm", "right thigh"))
    braf = rng.random() < 0.45
    variant = rng.choice(("V600E", "V600E", "V600K"))
    markers = [("BRAF", "positive" if braf else "negative", variant if braf else "wild-type", "NGS")]
    breslow = rng.choice(("2.4", "3.1", "4.6", "1.8"))
    histology = f"Cutaneous melanoma, superficial spreading type, Breslow {breslow} mm, {'ulcerated' if rng.random() < 0.5 else 'non-ulcerated'}"
    no_braf = ("dabrafenib + trametinib", "refusal", "biomarker", "BRAF/MEK inhibitors have no activity in BRAF wild-type melanoma")
    if scenario == "resected":
        t, positive = _melanoma_t(histology), rng.choice((1, 1, 2))
        examined = rng.randint(positive + 1, 4)
        n = _pn("melanoma", positive, "sentinel")  # occult nodes: N1a one, N2a two or three (AJCC 8)
        tnm = f"p{t}{n}M0"
        path = f"{tnm[:-2]}; SLN {positive}/{examined} positive (micrometastasis); excision margins clear"
        cons = [("adjuvant pembrolizumab or nivolumab (1 year)", "strong", "stage", "KEYNOTE-054 / CheckMate 238 / NCCN Melanoma: resected stage III -> 1 year anti-PD-1")]
        cons.append(("dabrafenib + trametinib (adjuvant, 1 year)", "tacit", "biomarker", "COMBI-AD: adjuvant BRAF/MEK for resected stage III BRAF V600") if braf else no_braf)
        # The rationale names the case's own stage group (review 2: "lower-risk stage IIIA" was written on IIIC cases).
        cons.append(("surveillance", "mixed", "stage", "Observation is an option for lower-risk stage IIIA after discussion"
                     if staging.stage_group("melanoma", tnm) == "IIIA" else
                     "NCCN Melanoma lists observation for resected stage III, but at this stage the relapse risk makes 1 year of adjuvant anti-PD-1 the usual choice"))
        return Draft(histology, site, tnm, markers, cons, "Adjuvant therapy after wide local excision and sentinel node biopsy?",
                     resection=("wide local excision with sentinel lymph node biopsy", path), nodes=(positive, examined), ecog=0)
    if scenario == "unresected":
        cons = [("neoadjuvant pembrolizumab, then surgery", "strong", "stage", "SWOG S1801 / NCCN Melanoma: clinically node-positive resectable stage III -> neoadjuvant pembrolizumab then resection"),
                ("wide local excision with therapeutic lymph node dissection", "tacit", "stage", "Upfront surgery followed by adjuvant therapy remains acceptable")]
        if not braf:
            cons.append(no_braf)
        t = _melanoma_t(histology)  # the T comes from the diagnostic excision; the node is clinically detected (N1b)
        return Draft(histology, site, f"p{t} cN1b M0", markers, cons, "Management of newly diagnosed node-positive melanoma?", ecog=0)
    sites = rng.choice((["lung", "liver"], ["lung"], ["brain", "lung"], ["subcutaneous tissue", "liver"]))
    if scenario == "met_naive":
        cons = [("nivolumab + ipilimumab", "strong", "stage", "CheckMate 067 / NCCN Melanoma: first-line combination anti-PD-1/CTLA-4 for fit pts"),
                ("nivolumab + relatlimab", "tacit", "stage", "RELATIVITY-047: first-line nivolumab + relatlimab")]
        cons.append(("dabrafenib + trametinib", "mixed", "biomarker", "DREAMseq: immunotherapy first is preferred; BRAF/MEK first line only in selected cases") if braf else no_braf)
        # T from the excisional biopsy (pT); the nodes were found clinically (cN1b): N1a needs a sentinel-node biopsy.
        t = _melanoma_t(histology)
        return Draft(histology, site, f"p{t} cN1b M1", markers, cons, "First-line treatment for metastatic melanoma?", sites=sites, ecog=rng.choice((0, 1)))
    first = "nivolumab + ipilimumab"
    if braf:
        cons = [("dabrafenib + trametinib", "strong", "biomarker", "NCCN Melanoma: BRAF V600 melanoma progressing after first-line IO -> BRAF/MEK inhibitors"),
                ("nivolumab + ipilimumab", "refusal", "prior_line", "Progression on nivolumab + ipilimumab: do not repeat")]
    else:
        cons = [("clinical trial", "strong", "prior_line", "NCCN Melanoma: BRAF wild-type progression after anti-PD-1/CTLA-4 -> clinical trial preferred"),
                ("carboplatin + paclitaxel", "mixed", "prior_line", "Chemotherapy has low response rates; used when no trial is available"),
                ("nivolumab + ipilimumab", "refusal", "prior_line", "Progression on nivolumab + ipilimumab: do not repeat"), no_braf]
    return Draft(histology, site, f"p{_melanoma_t(histology)} cN1b M1", markers, cons, "Next line of therapy after progression?", sites=sites, prior_lines=[first], ecog=1)


def _ovarian(scenario: str, rng: random.Random, age: int) -> Draft:
    brca = rng.random() < 0.25
    hrd = brca or rng.random() < 0.3
    markers = [("BRCA1", "positive" if brca else "negative", "germline pathogenic variant" if brca else "no pathogenic variant", "germline panel"),
               ("HRD", "positive" if hrd else "negative", f"GIS {rng.randint(45, 70) if hrd else rng.randint(15, 38)}", "Myriad myChoice")]
    histology = "High-grade serous carcinoma"
    site = "ovaries (bilateral adnexal masses)"
    maintenance = (("olaparib maintenance (2 years)", "strong", "biomarker", "SOLO-1 / NCCN Ovarian: BRCA-mutated advanced ovarian cancer -> olaparib maintenance after response to platinum") if brca
                   else ("olaparib + bevacizumab maintenance", "strong", "biomarker", "PAOLA-1 / NCCN Ovarian: HRD-positive -> olaparib + bevacizumab maintenance") if hrd
                   else ("niraparib maintenance", "tacit", "biomarker", "PRIMA: niraparib maintenance regardless of HRD, smaller benefit in HR-proficient disease"))
    if scenario == "resected":
        # The debulking removes no regional nodes (TAH/BSO and omentectomy; LION: no systematic lymphadenectomy with
        # clinically negative nodes), so N stays the clinical one from the staging CT.
        t, n = rng.choice((("T3c", "N0"), ("T3b", "N1"), ("T3a", "N0")))
        tnm = f"p{t} c{n} M0"
        path = f"p{t}; HGSC involving both ovaries and omentum; optimal cytoreduction (no gross residual disease); regional lymph nodes not sampled"
        cons = [("carboplatin + paclitaxel (6 cycles)", "strong", "stage", "GOG-158 / NCCN Ovarian: stage II-IV HGSC after cytoreduction -> carboplatin + paclitaxel x 6"), maintenance,
                ("surveillance", "refusal", "stage", "Observation without chemotherapy is inappropriate for stage III HGSC")]
        return Draft(histology, site, tnm, markers, cons, "Postoperative therapy after primary cytoreductive surgery?",
                     resection=("total abdominal hysterectomy, bilateral salpingo-oophorectomy and omentectomy (TAH/BSO)", path), ecog=rng.choice((0, 1)))
    if scenario == "unresected":
        cons = [("neoadjuvant carboplatin + paclitaxel, then interval debulking surgery", "strong", "stage", "EORTC 55971 / NCCN Ovarian: not a candidate for optimal primary cytoreduction -> NACT then interval debulking"),
                ("primary cytoreductive surgery", "mixed", "stage", "Primary debulking is preferred only when complete resection is judged feasible"), maintenance]
        return Draft(histology, site, "cT3cN1M0", markers, cons, "Initial management of advanced ovarian cancer?", ecog=1)
    sites = rng.choice((["pleura"], ["liver parenchyma"], ["pleura", "liver parenchyma"]))
    if scenario == "met_naive":
        cons = [("carboplatin + paclitaxel (neoadjuvant), then interval debulking surgery", "strong", "stage", "NCCN Ovarian: stage IV -> neoadjuvant platinum-taxane, interval debulking if response"),
                ("carboplatin + paclitaxel + bevacizumab", "tacit", "stage", "ICON7 / GOG-218: bevacizumab adds PFS in high-risk stage IV"), maintenance]
        return Draft(histology, site, "cT3cN1M1", markers, cons, "First-line treatment for stage IV ovarian cancer?", sites=sites, ecog=1)
    first = "carboplatin + paclitaxel"
    cons = [("weekly paclitaxel + bevacizumab", "strong", "prior_line", "AURELIA / NCCN Ovarian: platinum-resistant recurrence -> non-platinum single agent + bevacizumab"),
            ("pegylated liposomal doxorubicin + bevacizumab", "tacit", "prior_line", "AURELIA: PLD is an alternative partner for bevacizumab"),
            ("carboplatin + paclitaxel", "refusal", "prior_line", "Platinum re-treatment is not indicated for platinum-resistant (<6 months) recurrence")]
    return Draft(histology, site, "cT3cN1M1", markers, cons, "Treatment of platinum-resistant recurrence?", sites=sites, prior_lines=[first], ecog=1)


def _prostate(scenario: str, rng: random.Random, age: int) -> Draft:
    gleason = rng.choice(("4+3=7 (Grade Group 3)", "4+4=8 (Grade Group 4)", "4+5=9 (Grade Group 5)"))
    brca2 = rng.random() < 0.15
    markers = [("BRCA2", "positive" if brca2 else "negative", "germline pathogenic variant" if brca2 else "no pathogenic variant", "germline panel")]
    histology = f"Acinar adenocarcinoma, Gleason {gleason}"
    site = "prostate"
    if scenario == "resected":
        persistent = rng.random() < 0.6
        tnm = "pT3bN0M0" if persistent else "pT3aN0M0"
        examined = rng.randint(8, 16)
        path = f"{tnm[:-2]}, Gleason {gleason}; {'positive margin at the apex' if persistent else 'margins negative'}; 0/{examined} LN"
        if persistent:
            # The labs carry a PSA that stays detectable (0.4-1.8 ng/mL) 6-8 weeks after the operation (`_labs`).
            cons = [("PSMA PET/CT restaging before salvage therapy", "strong", "stage",
                     "NCCN Prostate v.2026 / EAU 2024 (persistent PSA): a PSA still detectable after radical prostatectomy means residual or "
                     "metastatic disease -> restage with PSMA PET (proPSMA, Hofman 2020) before choosing treatment"),
                    ("salvage radiotherapy + ADT if PSMA PET shows no distant disease", "tacit", "stage",
                     "NCCN Prostate v.2026 / RTOG 9601 (Shipley 2017), GETUG-AFU 16 (2016): salvage RT with ADT for persistent PSA with pT3b/R1 once distant disease is excluded"),
                    ("ADT (24 months) with salvage radiotherapy", "mixed", "stage",
                     "ADT duration with salvage RT is debated: RTOG 9601 (24 months) benefited mainly at PSA >0.7 ng/mL; GETUG-AFU 16 and SPPORT tested 4-6 months"),
                    ("surveillance", "refusal", "stage", "Observation is inappropriate with a persistent detectable PSA after prostatectomy (NCCN Prostate v.2026)")]
        else:
            # The labs carry an undetectable PSA (<0.1 ng/mL) after the operation (`_labs`).
            cons = [("surveillance (PSA monitoring)", "strong", "stage", "RADICALS-RT / NCCN Prostate: undetectable PSA after prostatectomy -> observation with early salvage RT if PSA rises"),
                    ("adjuvant radiotherapy", "mixed", "stage", "Adjuvant RT for pT3 disease was not better than early salvage (RADICALS, RAVES, GETUG-AFU 17)")]
        return Draft(histology, site, tnm, markers, cons, "Post-prostatectomy management?",
                     resection=("robotic-assisted radical prostatectomy with pelvic lymph node dissection", path), nodes=(0, examined), ecog=0,
                     margin="R1" if persistent else "R0", persistent_psa=persistent)
    if scenario == "unresected":
        cons = [("radiotherapy + ADT (18-36 months)", "strong", "stage", "NCCN Prostate: high-risk localized disease -> external-beam RT with long-term ADT"),
                ("radical prostatectomy with pelvic lymph node dissection", "tacit", "stage", "Surgery is an accepted alternative for high-risk localized disease"),
                ("abiraterone + ADT with radiotherapy", "mixed", "stage", "STAMPEDE: abiraterone for very-high-risk localized disease")]
        return Draft(histology, site, "cT2cN0M0", markers, cons, "Initial management of high-risk localized prostate cancer?", ecog=0)
    sites = rng.choice((["bone"], ["bone", "retroperitoneal lymph nodes"], ["bone", "liver"]))
    if scenario == "met_naive":
        cons = [("ADT + androgen receptor pathway inhibitor (abiraterone/enzalutamide/apalutamide)", "strong", "castration_status",
                 "LATITUDE, ARCHES, TITAN / NCCN Prostate: mCSPC -> ADT + ARPI"),
                ("ADT + docetaxel + darolutamide", "tacit", "castration_status", "ARASENS: triplet for high-volume mCSPC in fit pts")]
        if brca2:
            cons.append(("olaparib", "mixed", "biomarker", "PARP inhibitors are used in mCRPC, not yet in castration-sensitive disease"))
        return Draft(histology, site, "cT3aN1M1", markers, cons, "Treatment of newly diagnosed metastatic castration-sensitive prostate cancer?",
                     sites=sites, castration="sensitive", ecog=rng.choice((0, 1)))
    first = "ADT + abiraterone"
    cons = [("docetaxel (continue ADT)", "strong", "castration_status", "NCCN Prostate: mCRPC after ARPI without prior docetaxel -> docetaxel")]
    if brca2:
        cons.insert(0, ("olaparib (continue ADT)", "strong", "biomarker", "PROfound / NCCN Prostate: BRCA2-mutated mCRPC after ARPI -> olaparib"))
    cons += [("enzalutamide", "refusal", "castration_status", "Switching ARPI after abiraterone has low activity (cross-resistance; CARD)"),
             ("lutetium-177 PSMA-617", "mixed", "castration_status", "VISION/PSMAfore: PSMA-positive mCRPC; sequencing before or after taxane debated")]
    return Draft(histology, site, "cT3aN1M1", markers, cons, "Treatment of metastatic castration-resistant prostate cancer?",
                 sites=sites, prior_lines=[first], castration="resistant", ecog=1)


PLANNERS: dict[str, Callable[..., Draft]] = {
    "breast": _breast,
    "nsclc": _nsclc,
    "colorectal": _colorectal,
    "pancreatic": _pancreatic,
    "gastric": _gastric,
    "melanoma": _melanoma,
    "ovarian": _ovarian,
    "prostate": _prostate,
}
SEX: dict[str, str | None] = {"breast": "F", "ovarian": "F", "prostate": "M"}


def _scenarios(cancer_type: str) -> list[tuple[str, int]]:
    """(scenario, variant index) for the type's 30 cases."""
    plan = dict(SCENARIOS)
    if cancer_type == "nsclc":
        # More treatment-naive metastatic cases: EGFR, ALK, PD-L1 high and low all need representation.
        plan = {"resected": 10, "unresected": 5, "met_naive": 9, "met_pretreated": 6}
    return [(scenario, i) for scenario, n in plan.items() for i in range(n)]


RECURRENCE: dict[str, tuple[str, str, int, int]] = {
    "breast": ("lumpectomy with sentinel lymph node biopsy", "T2", 1, 3),
    "nsclc": ("VATS lobectomy with mediastinal lymph node dissection", "T2a", 1, 14),
    "colorectal": ("laparoscopic segmental colectomy", "T3", 1, 18),
    "pancreatic": ("pancreaticoduodenectomy (Whipple)", "T2", 2, 19),
    "gastric": ("total gastrectomy with D2 lymphadenectomy", "T3", 2, 27),
    "melanoma": ("wide local excision with sentinel lymph node biopsy", "T3a", 1, 2),
    "prostate": ("robotic-assisted radical prostatectomy with pelvic lymph node dissection", "T3a", 0, 12),
}
"""Primary resection, pT and regional nodes (positive, examined) at the first diagnosis of a metachronous
recurrence: stage I-III then (computed by `staging`), resected with curative intent; distant metastases are
documented at the restaging CT before the board (`record.metastasis_date`), so the case is stage IV now and
treatment-naive for metastatic disease. Ovarian recurrences are platinum-sensitivity decisions with other
consensus, so the ovarian cohort has none. The Whipple is for head tumours only (`_as_recurrence` uses a distal
pancreatectomy for body/tail primaries); melanoma takes its T from the Breslow depth; the NSCLC node is hilar (N1)."""


def _adjuvant(cancer_type: str, markers: dict[str, str], premenopausal: bool) -> list[tuple[str, int]]:
    """The adjuvant regimens completed before a metachronous recurrence, in order, with their durations."""
    if cancer_type == "breast":
        # Node-positive (pN1a) disease. HER2 first: HER2-positive pT2N1 disease gets chemotherapy with HER2 blockade
        # (NCCN Breast v.2026; APT's paclitaxel + trastuzumab is for small node-negative tumours); hormone-receptor-
        # positive disease then gets 5 years of endocrine therapy, after menopause an aromatase inhibitor, before it
        # ovarian function suppression with an aromatase inhibitor (SOFT/TEXT, node-positive).
        hr = "positive" in (markers.get("ER"), markers.get("PR"))
        endocrine = [("ovarian function suppression + exemestane" if premenopausal else "letrozole", 1826)] if hr else []
        if markers.get("HER2") == "positive":
            return [("TCHP (docetaxel, carboplatin, trastuzumab, pertuzumab), then trastuzumab to complete 1 year", 365), *endocrine]
        if hr:
            return endocrine
        return [("AC-T (doxorubicin, cyclophosphamide, then paclitaxel)", 150)]
    regimen = {
        "nsclc": ("cisplatin + pemetrexed", 84),
        "colorectal": ("CAPOX", 91),
        "pancreatic": ("modified FOLFIRINOX", 168),
        "gastric": ("CAPOX", 182),
        # Nivolumab: the adjuvant anti-PD-1 approved first (CheckMate 238; US December 2017), so a 2018 start is not
        # an anachronism (adjuvant pembrolizumab followed in February 2019; review 2, css-melanoma-022).
        "melanoma": ("nivolumab", 365),
    }.get(cancer_type)
    return [regimen] if regimen else []


def _is_recurrence(cancer_type: str, scenario: str, variant: int) -> bool:
    if scenario != "met_naive" or cancer_type not in RECURRENCE:
        return False
    # NSCLC variants 0-2 carry drivers whose adjuvant therapy would change first line.
    return variant in (4, 6, 8) if cancer_type == "nsclc" else variant % 2 == 1


def _as_recurrence(draft: Draft, cancer_type: str, premenopausal: bool) -> Draft:
    procedure, t, positive, examined = RECURRENCE[cancer_type]
    if cancer_type == "pancreatic" and draft.site != "pancreatic head":
        procedure = "distal pancreatectomy with splenectomy"
    if cancer_type == "colorectal":
        procedure = COLECTOMY[draft.site]
    if cancer_type == "gastric" and draft.site == "gastric antrum":
        procedure = "distal gastrectomy with D2 lymphadenectomy"
    if cancer_type == "melanoma":
        t = _melanoma_t(draft.histology)
    method: staging.Method = "sentinel" if "sentinel" in procedure else "pathologic"
    n = _pn(cancer_type, positive, method, station="hilar")
    margins = "R0" if cancer_type == "gastric" else "margins negative"
    if cancer_type == "melanoma":
        pathology = f"p{t} p{n}; SLN {positive}/{examined} positive; margins clear"
    elif cancer_type == "prostate":
        pathology = f"p{t} p{n}, {draft.histology.split(', ')[-1]}; margins negative; {positive}/{examined} LN"
    else:
        pathology = f"p{t} p{n} ({positive}/{examined} {'SLN' if method == 'sentinel' else 'LN'}), {margins}"
    markers = {name: status for name, status, _, _ in draft.markers}
    draft.resection, draft.nodes, draft.tnm, draft.recurrence = (procedure, pathology), (positive, examined), f"p{t}{n}M0", True
    draft.adjuvant = _adjuvant(cancer_type, markers, premenopausal)
    draft.question = "First-line treatment for metastatic recurrence?"
    return draft


def _as_on_treatment(draft: Draft) -> Draft:
    """Restaging on the next line: the first line failed, the following one is running."""
    running = next(t for t, label, _, _ in draft.consensus if label != "refusal" and t not in ("clinical trial", "best supportive care"))
    failed = draft.prior_lines[0]
    draft.current_line = running
    draft.consensus = [
        (f"continue {running}", "strong", "prior_line", "NCCN (all tumour types): responding or stable disease on the current line -> continue until progression or unacceptable toxicity"),
        (failed, "refusal", "prior_line", "Disease progressed on this regimen earlier; do not return to it"),
        ("best supportive care", "mixed", "performance_status", "Stopping active therapy is reserved for declining performance status or patient choice"),
    ]
    draft.question = "Restaging on current therapy: continue or change?"
    return draft


# --------------------------------------------------------------------------------------
# Timeline and record assembly
# --------------------------------------------------------------------------------------


def _rng(seed: int, case_id: str, key: str) -> random.Random:
    digest = hashlib.sha256(f"{seed}:{case_id}:{key}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


LINE_ORDINALS = ("first", "second", "third", "fourth")
RESTAGING_DAYS = 9
"""The restaging CT before the board is this many days before it; for a metachronous recurrence it is the scan
that documents the distant metastases (`record.metastasis_date`)."""


def _timeline(draft: Draft, scenario: str, rng: random.Random) -> tuple[date, date, Resection | None, list[TreatmentLine]]:
    """Diagnosis date, board date, resection and treatment lines, in forward order."""
    dx = date(2023, 6, 1) + timedelta(days=rng.randint(0, 480))
    if draft.recurrence:
        # Metachronous recurrence: primary resected years ago, adjuvant therapy completed. Years of adjuvant endocrine
        # therapy move the diagnosis earlier, so that the recurrence comes before today (a board date in the past).
        adjuvant_days = sum(days for _, days in draft.adjuvant)
        # From mid-2018: a first line injected 180 days earlier (family B's `shift_history`) still leaves the adjuvant
        # therapy after its approval (adjuvant nivolumab, December 2017).
        dx = date(2018, 7, 15) - timedelta(days=max(0, adjuvant_days - 365)) + timedelta(days=rng.randint(0, 700))
    lines: list[TreatmentLine] = []
    resection = None
    cursor = dx + timedelta(days=rng.randint(18, 30))
    for regimen in draft.neoadjuvant:
        end = cursor + timedelta(days=rng.choice((84, 105, 126, 147)))
        lines.append(TreatmentLine(regimen=regimen, setting="neoadjuvant", start=cursor, end=end, outcome="completed"))
        cursor = end + timedelta(days=rng.randint(21, 35))
    if draft.resection is not None:
        procedure, pathology = draft.resection
        positive, examined = draft.nodes if draft.nodes is not None else (None, None)
        resection = Resection(procedure=procedure, date=cursor, margin=draft.margin, pathology=pathology,
                              nodes_positive=positive, nodes_examined=examined)
        board = cursor + timedelta(days=rng.randint(24, 45))
        if draft.sites:  # recurrence
            cursor += timedelta(days=rng.randint(28, 42))
            for regimen, days in draft.adjuvant:
                end = cursor + timedelta(days=days)
                lines.append(TreatmentLine(regimen=regimen, setting="adjuvant", start=cursor, end=end, outcome="completed"))
                cursor = end
            board = cursor + timedelta(days=rng.randint(400, 900))
    elif draft.prior_lines:
        for i, regimen in enumerate(draft.prior_lines):
            setting = f"{LINE_ORDINALS[i]}-line metastatic"
            end = cursor + timedelta(days=rng.randint(150, 330))
            # Castration resistance: androgen deprivation continues, only the agent added to it stops (NCCN Prostate v.2026).
            note = "ADT continues" if regimen.startswith("ADT") else None
            lines.append(TreatmentLine(regimen=regimen, setting=setting, start=cursor, end=end, outcome="progression", note=note))
            cursor = end + timedelta(days=14)
        if draft.current_line is not None:
            lines.append(TreatmentLine(regimen=draft.current_line, setting=f"{LINE_ORDINALS[len(draft.prior_lines)]}-line metastatic",
                                       start=cursor, outcome="ongoing"))
            board = cursor + timedelta(days=rng.randint(120, 200))
        else:
            board = lines[-1].end + timedelta(days=rng.randint(10, 21))  # type: ignore[operator]
    elif scenario == "unresected":
        # Staging, multidisciplinary work-up and surgical consultation before the board.
        board = cursor + timedelta(days=rng.randint(14, 35))
    else:
        board = cursor + timedelta(days=rng.randint(0, 10))
    return dx, board, resection, lines


def _weight_loss(presentation: str) -> float | None:
    """The weight loss (kg) a presentation states; 3 kg for an unquantified one; None if it states none."""
    m = re.search(r"(\d+) kg (?:unintentional )?weight loss", presentation)
    return float(m.group(1)) if m else 3.0 if re.search(r"(?i)weight loss", presentation) else None


def _encounters(cancer_type: str, draft: Draft, dx: date, board: date, resection: Resection | None, rng: random.Random, sex: str,
                template: str, weights: list[float]) -> list[Encounter]:
    """Fact-neutral stored encounters; the renderer appends the facts each kind of note carries. The presentation is
    chosen by the caller (`_presentation`); the weights are the vitals' (the narrative states them, never its own)."""
    side = draft.site.split()[0] if cancer_type == "breast" else ""
    smoke = rng.choice(("Former smoker, 30 pack-years, quit 2015", "Never smoker", "Current smoker, 1 ppd", "Former smoker, 10 pack-years"))
    presentation = template.format(side=side, smoke=smoke, skin=draft.site)
    # The usual weight is the first measured one plus the loss the presentation states.
    usual = round(weights[0] + (_weight_loss(presentation) or 0.0))
    change = weights[-1] - weights[0]
    weight_now = "Weight stable" if abs(change) <= 2 else f"Weight {'down' if change < 0 else 'up'} {abs(change):.1f} kg since diagnosis"
    who = rng.choice(("spouse", "partner", "daughter", "son", "alone"))
    social = rng.choice(SOCIAL).format(who=who, job=rng.choice(JOBS), smoke=smoke, etoh=rng.choice(("none", "social", "1-2 drinks/week")))
    pronoun = "She" if sex == "F" else "He"
    # Curative language only while the disease is curable: metastatic at diagnosis (no resection planned) is not.
    metastatic_at_dx = bool(draft.sites) and resection is None
    goals = (("disease control and quality of life", "longevity and quality of life", "wants all reasonable treatment") if metastatic_at_dx
             else ("cure if possible", "longevity and quality of life", "wants all reasonable treatment"))
    exam = ("Exam: Gen well-appearing, NAD. HEENT: anicteric, oropharynx clear. Neck: supple, no JVD. Lungs: CTAB. CV: RRR, no murmurs. "
            "Abd: soft, NT/ND, no HSM appreciated. Ext: no edema. Skin: no rash. Neuro: A&Ox3, nonfocal.")
    onc = [Encounter(date=dx - timedelta(days=30), kind="Primary care", author="PCP", note=presentation),
           Encounter(date=dx - timedelta(days=10), kind="Radiology - CT chest/abdomen/pelvis with IV contrast", author="Radiology",
                     note="Technique: helical CT of the chest, abdomen and pelvis after IV contrast. Comparison: none available. "
                          "Lines/tubes: none. Full findings in PACS; key observations summarised below."),
           Encounter(date=dx + timedelta(days=8), kind="Medical oncology consult", author="Med onc",
                     note=f"New patient consultation. HPI: {presentation} Tissue diagnosis obtained; results reviewed with pt today. "
                          f"{pronoun} is here with family. ROS otherwise negative except fatigue. Social: {social} {exam} "
                          f"Discussed the role of the multidisciplinary tumor board; questions answered. Goals of care: {rng.choice(goals)}.")]
    if resection is not None or not draft.sites:
        surg_date = (resection.date - timedelta(days=12)) if resection is not None else dx + timedelta(days=12)
        onc.append(Encounter(date=surg_date, kind="Surgical oncology consult", author="Surgery",
                             note=f"Seen in surgical clinic with imaging and pathology reviewed. {pronoun} has no prior abdominal or thoracic surgery of note. "
                                  f"Functional status good; climbs 2 flights of stairs without stopping. Anesthesia risk discussed. "
                                  f"Smoking cessation and prehabilitation counseling provided."))
    onc.append(Encounter(date=dx + timedelta(days=3), kind="Oncology nurse navigation", author="RN navigator",
                         note=f"Intake call after new diagnosis. Reviewed upcoming appointments (imaging, consults, tumor board) and how to reach the "
                              f"clinic after hours. Pt {rng.choice(('anxious but engaged', 'calm, asking good questions', 'tearful; support offered'))}. "
                              f"Barriers: {rng.choice(('transportation (ride program enrolled)', 'none identified', 'work schedule; FMLA forms provided', 'cost of parking; vouchers given'))}. "
                              f"Advance directive: {rng.choice(('on file', 'not on file; information provided', 'pt will bring copy'))}. Distress screen {rng.randint(2, 6)}/10."))
    onc.append(Encounter(date=dx + timedelta(days=rng.randint(14, 26)), kind="Social work", author="LCSW",
                         note=f"Psychosocial assessment. Lives with {who}; {rng.choice(('strong family support', 'limited local support', 'supportive friends nearby'))}. "
                              f"Finances: {rng.choice(('stable', 'concerned about copays; referred to financial counseling', 'on fixed income'))}. "
                              f"Coping: {rng.choice(('adequate', 'some anxiety and insomnia', 'using faith community for support'))}. Caregiver identified. "
                              f"Resources for lodging and transportation reviewed. SW to follow during treatment."))
    onc.append(Encounter(date=dx + timedelta(days=rng.randint(20, 34)), kind="Genetic counseling", author="Genetic counselor",
                         note=f"Pre-test counseling. Three-generation pedigree obtained: {rng.choice(('no known hereditary cancer syndromes', 'maternal aunt with cancer in her 50s', 'paternal grandfather with cancer, age unknown'))}. "
                              f"Discussed implications of germline results for the pt and relatives, GINA protections and possible variants of uncertain "
                              f"significance. Pt consented to multigene panel testing; results to be discussed with the treating team."))
    onc.append(Encounter(date=dx + timedelta(days=rng.randint(20, 40)), kind="Nutrition", author="RD",
                         note=f"Dietitian visit. Usual weight ~{usual} kg. Reports {rng.choice(('good', 'fair', 'reduced'))} appetite. "
                              f"Encouraged protein 1.2 g/kg/day; oral nutrition supplement BID. Will follow."))
    if draft.sites:
        onc.append(Encounter(date=board - timedelta(days=RESTAGING_DAYS), kind="Radiology - restaging CT chest/abdomen/pelvis", author="Radiology",
                             note="Technique: CT C/A/P with IV contrast. Comparison: prior staging CT. Full findings in PACS."))
    onc.append(Encounter(date=board - timedelta(days=4), kind="Medical oncology visit (pre-tumor board)", author="Med onc",
                         note=f"Seen ahead of tumor board. Interval hx: {rng.choice(('no new complaints', 'mild fatigue', 'intermittent nausea, controlled', 'poor sleep'))}. "
                              f"{weight_now}. Reviewed labs and imaging with pt. {exam} Case to be presented at multidisciplinary tumor board; "
                              f"pt agreeable and wishes to hear all options."))
    # Stored encounters must precede the board date and stay in order.
    return sorted([e for e in onc if e.date < board], key=lambda e: e.date)


TUMOR_MARKER_NORMAL: dict[str, tuple[float, float]] = {
    "CA 15-3": (8.0, 25.0),   # upper limit of normal ~30 U/mL
    "CEA": (0.8, 2.9),        # ~3 ng/mL (non-smokers)
    "CA 19-9": (5.0, 30.0),   # 37 U/mL
    "LDH": (140.0, 230.0),    # ~250 U/L
    "CA-125": (6.0, 30.0),    # 35 U/mL
}
"""Values within the reference range, for the time after an R0 resection and before any recurrence: a raised
marker then would mean residual disease, which the case's labels do not assume."""


LOCALISED_MARKER_RANGE: dict[str, tuple[float, float]] = {
    "breast": (10.0, 40.0),      # CA 15-3: normal or mildly raised in early breast cancer
    "nsclc": (1.0, 8.0),         # CEA
    "colorectal": (1.0, 12.0),   # CEA: raised in a minority of stage II-III colon cancers, rarely above 20
    "pancreatic": (20.0, 400.0),  # CA 19-9: above 500 U/mL suggests occult metastases (NCCN Pancreatic: staging laparoscopy)
    "gastric": (1.0, 10.0),      # CEA
    "melanoma": (140.0, 240.0),  # LDH within its reference range (AJCC 8 uses LDH only for M1)
    "ovarian": (150.0, 1400.0),  # CA-125: stage III ovarian cancer is peritoneal disease
    "prostate": (6.0, 40.0),     # PSA: overwritten by the stage's own range (`_diagnostic_psa`)
}
"""Pre-treatment tumour marker in non-metastatic disease (review 2: markers were drawn in metastatic ranges
whatever the stage). `TUMOR_MARKERS` holds the metastatic range; `invariants.NON_METASTATIC_CEILING` the
ceiling every non-metastatic value stays under."""


def _diagnostic_psa(draft: Draft) -> tuple[float, float]:
    """The PSA range of the diagnostic work-up. High-risk localised disease (the unresected scenario) is high-risk
    by Grade Group 4-5 or by PSA > 20 ng/mL (NCCN Prostate v.2026); Grade Group 3 needs the PSA."""
    gg = staging.grade_group(draft.histology)
    if draft.resection is None and not draft.sites and gg == 3:
        return (20.5, 40.0)
    if draft.sites:
        return (25.0, 85.0)
    return (5.0, 40.0) if draft.resection is None else (6.0, 25.0)


def _on_chemotherapy(lines: list[TreatmentLine], when: date) -> bool:
    return any(ln.start <= when <= (ln.end or when) and any(k in ln.regimen.lower() for k in CHEMO_KEYWORDS) for ln in lines)


def _labs(case_id: str, cancer_type: str, dates: list[date], rng: random.Random, *, resected_on: date | None,
          metastatic: bool, metastases_on: date | None, lines: list[TreatmentLine], persistent_psa: bool = False,
          localised: tuple[float, float] | None = None, castration: str | None = None,
          start_hgb: float | None = None) -> list[LabResult]:
    """CBC/CMP panels on every date and the type's tumour marker on every other date, following the disease.

    The marker follows the disease state at each date (review 2, "markers agree with the disease state"):
    within its reference range after an R0 resection until a recurrence; in its localised range before treatment
    of non-metastatic disease; in its metastatic range once metastatic; rising at a progression (a line ended by
    progression and no new line started since), falling while a line is running (response), about level otherwise.
    """
    # One blood count over time (`render.lab_panels`): an anaemia the history names persists until it recovers at a
    # plausible rate, and cytotoxic chemotherapy lowers the counts while it runs.
    labs = lab_panels(case_id, dates, start_hgb, lambda d: _on_chemotherapy(lines, d))
    name, unit, lo, hi = TUMOR_MARKERS[cancer_type]
    progressions = sorted(ln.end for ln in lines if ln.outcome == "progression" and ln.end is not None)
    prev: float | None = None
    prev_metastatic = False
    # The marker on every other panel, and with the scan that found a recurrence (its PSA, review 3).
    for d in sorted(set(dates[1::2]) | ({metastases_on} if metastases_on else set())):
        metastatic_then = metastatic and (metastases_on is None or d >= metastases_on)
        disease_free = resected_on is not None and d > resected_on and not metastatic_then
        last_progression = max((p for p in progressions if p <= d), default=None)
        progressing = last_progression is not None and not any(last_progression < ln.start <= d for ln in lines)
        responding = any(ln.start < d and (ln.end is None or d < ln.end) for ln in lines)
        if disease_free and name == "PSA":
            # After radical prostatectomy the PSA is undetectable (<0.1 ng/mL) unless disease persists (AUA/ASTRO 2019:
            # persistent PSA = detectable 6-8 weeks after the operation).
            value = round(rng.uniform(0.4, 1.8), 1) if persistent_psa else round(rng.uniform(0.01, 0.08), 2)
        elif disease_free:
            value = round(rng.uniform(*TUMOR_MARKER_NORMAL[name]), 1)
        elif not metastatic_then:
            value = round(rng.uniform(*(localised or LOCALISED_MARKER_RANGE[cancer_type])), 1)
            if prev is not None and responding:
                value = round(min(value, prev * rng.uniform(0.5, 0.85)), 1)
        elif prev is None or not prev_metastatic:
            value = round(max(rng.uniform(lo, hi), (prev or 0.0) * rng.uniform(1.5, 2.5)), 1)
        elif progressing:
            value = round(prev * rng.uniform(1.3, 1.8), 1)
        elif responding:
            value = round(prev * rng.uniform(0.55, 0.85), 1)
        else:
            value = round(prev * rng.uniform(1.0, 1.15), 1)
        labs.append(LabResult(date=d, name=name, value=value, unit=unit))
        prev, prev_metastatic = value, metastatic_then
    if castration == "resistant":
        # Castration resistance is progression with castrate testosterone (< 1.7 nmol/L, PCWG3): measured at each progression.
        labs += [LabResult(date=p, name="Testosterone", value=round(rng.uniform(0.3, 1.2), 1), unit="nmol/L", flag="L") for p in progressions]
    return labs


def _case(seed: int, cancer_type: str, index: int, scenario: str, variant: int) -> Case:
    case_id = f"css-{cancer_type}-{index:03d}"
    rng = _rng(seed, case_id, "plan")
    sex = SEX.get(cancer_type) or rng.choice(("F", "M"))
    age = rng.randint(38, 82) if cancer_type != "breast" else rng.randint(34, 80)
    planner = PLANNERS[cancer_type]
    draft = planner(scenario, rng, age, variant) if cancer_type == "nsclc" else planner(scenario, rng, age)
    # Menopausal status by age (the record states it; NCCN Breast defines menopause clinically, 50 is the usual cut).
    premenopausal = cancer_type == "breast" and age < 50
    if _is_recurrence(cancer_type, scenario, variant):
        draft = _as_recurrence(draft, cancer_type, premenopausal)
    elif scenario == "met_pretreated" and variant % 2 == 1:
        draft = _as_on_treatment(draft)
    dx, board, resection, lines = _timeline(draft, scenario, _rng(seed, case_id, "timeline"))

    names = FIRST_NAMES_F if sex == "F" else FIRST_NAMES_M
    trng = _rng(seed, case_id, "person")
    name = f"{trng.choice(names)} {trng.choice(LAST_NAMES)} (synthetic)"
    mrn = f"SYN{int(hashlib.sha256(case_id.encode()).hexdigest()[:7], 16) % 10_000_000:07d}"
    comorbid = trng.sample(COMORBIDITIES, k=trng.randint(1, 3))
    medications = [m.model_copy(update={"start": dx - timedelta(days=trng.randint(400, 2500))}) for _, m in comorbid]
    if draft.sites:
        medications.append(Medication(name="Oxycodone", dose="5 mg PO q6h PRN", indication="cancer-related pain", start=board - timedelta(days=40)))
    if lines:
        medications.append(Medication(name="Ondansetron", dose="8 mg PO q8h PRN", indication="nausea", start=lines[0].start))

    lab_dates = sorted({dx - timedelta(days=12), dx + timedelta(days=8), board - timedelta(days=5),
                        *([resection.date - timedelta(days=3)] if resection else []),
                        *[ln.start - timedelta(days=1) for ln in lines], *[ln.end for ln in lines if ln.end]})
    metastasis_date = board - timedelta(days=RESTAGING_DAYS) if draft.recurrence else None
    template = _presentation(cancer_type, draft.site, bool(draft.sites) and not draft.recurrence, _rng(seed, case_id, "presentation"))
    # The anaemia the presentation names is in the first blood count (iron deficiency: Hgb < 12 g/dL) and recovers
    # only at the rate the count model allows.
    anaemic = re.search(r"(?i)iron-deficiency anemia|Hgb low", template) is not None
    start_hgb = round(_rng(seed, case_id, "anaemia").uniform(8.6, 10.6), 1) if anaemic else None
    labs = _labs(case_id, cancer_type, lab_dates, _rng(seed, case_id, "labs"), resected_on=resection.date if resection else None,
                 metastatic=bool(draft.sites), metastases_on=metastasis_date, lines=lines, persistent_psa=draft.persistent_psa,
                 localised=_diagnostic_psa(draft) if cancer_type == "prostate" else None,
                 castration=draft.castration, start_hgb=start_hgb)
    base_vitals = synthetic_vitals(case_id, dx - timedelta(days=30), None)
    vitals = [base_vitals] + [synthetic_vitals(case_id, d, base_vitals) for d in (dx + timedelta(days=8), board - timedelta(days=4), *[ln.start for ln in lines])]
    vitals = sorted({v.date: v for v in vitals}.values(), key=lambda v: v.date)
    if _weight_loss(template) is not None:
        # A patient presenting with weight loss keeps losing weight until treated, never gains it back by chance.
        for i in range(1, len(vitals)):
            vitals[i] = vitals[i].model_copy(update={"weight_kg": round(min(vitals[i].weight_kg, vitals[i - 1].weight_kg - 0.3), 1)})
    markers = [Biomarker(name=n, status=s, result=r, method=m, date=dx + timedelta(days=6)) for n, s, r, m in draft.markers]  # type: ignore[arg-type]
    record = PatientRecord(
        name=name,
        mrn=mrn,
        histology=draft.histology,
        primary_site=draft.site,
        diagnosis_date=dx,
        # The M category at diagnosis: from the sites when metastatic then, M0 for a later recurrence (dated).
        tnm=draft.tnm if draft.recurrence else staging.with_m(draft.tnm, staging.m_category(cancer_type, draft.sites)),
        metastatic_sites=draft.sites,
        metastasis_date=metastasis_date,
        ecog=draft.ecog,
        castration_status=draft.castration,  # type: ignore[arg-type]
        menopausal_status=("premenopausal" if premenopausal else "postmenopausal") if cancer_type == "breast" else None,
        biomarkers=markers,
        resection=resection,
        treatment_lines=lines,
        medications=medications,
        allergies=list(trng.choice(ALLERGIES)),
        comorbidities=[c for c, _ in comorbid],
        labs=labs,
        vitals=vitals,
        encounters=_encounters(cancer_type, draft, dx, board, resection, _rng(seed, case_id, "notes"), sex, template,
                               [v.weight_kg for v in vitals]),
        board_question=draft.question,
    )
    # The stage groups are computed from the record (AJCC 8, `staging`), never written by a planner.
    stage = staging.current_stage(cancer_type, record)
    if draft.recurrence:
        record = record.model_copy(update={"initial_stage": staging.diagnostic_stage(cancer_type, record)})
    prior = sum(1 for ln in lines if "metastatic" in ln.setting)
    case = Case(
        case_id=case_id,
        cancer_type=cancer_type,  # type: ignore[arg-type]
        sex=sex,  # type: ignore[arg-type]
        age=age,
        stage=stage,
        metastatic=stage.startswith("IV"),
        resected=resection is not None,
        prior_lines=prior,
        biomarkers={n: s for n, s, _, _ in draft.markers},  # type: ignore[misc]
        board_date=board,
        sections={name: "" for name in ("demographics", "diagnoses", "biomarkers", "medications", "procedures", "encounters", "labs", "vitals", "allergies", "overview")},  # type: ignore[misc]
        consensus=[ConsensusTreatment(treatment=t, label=lab, driver=d, rationale=r) for t, lab, d, r in draft.consensus],  # type: ignore[arg-type]
        record=record,
    )
    return case.model_copy(update={"sections": render_case_sections(case)})


def generate_cohort(seed: int = SEED) -> list[Case]:
    """The synthetic cohort: 30 cases per cancer type, sorted by case id."""
    cases = []
    for cancer_type in PLANNERS:
        for index, (scenario, variant) in enumerate(_scenarios(cancer_type), start=1):
            cases.append(_case(seed, cancer_type, index, scenario, variant))
    return sorted(cases, key=lambda c: c.case_id)


def write_cohort(path: Path = CASES_PATH, seed: int = SEED) -> Path:
    """Write the cohort as JSONL (one case per line); byte-identical for a given seed."""
    path = Path(path)
    text = "".join(case.model_dump_json() + "\n" for case in generate_cohort(seed))
    path.write_text(text, encoding="utf-8")
    return path


if __name__ == "__main__":
    print(write_cohort())
