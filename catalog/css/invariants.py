"""Clinical invariants of a CSS case, checked on its structured record.

Why this module exists: text checks (`catalog.css.residue`) find a counterfactual that still *says*
the original fact; they cannot see a packet that is clinically impossible without saying anything
wrong in one line (first-line metastatic therapy months before the scan that found the metastases; a
Whipple for a tail tumour; HER2-positive breast cancer treated with a triple-negative regimen). These
rules read the record, where the facts are structured, one rule per invariant with its clinical
reason (shared/CLINICAL_CONTENT.md, "Coherence checks to automate").

Where they run:
- every bundled baseline: a case that breaks one fails the generator's test (tests/catalog/css/test_invariants.py);
- every counterfactual of a case with a record (`catalog.css.expand`): a counterfactual that breaks a
  rule its baseline did not break is dropped and counted under the rule's id (`clinical-cf catalog summary`).

A rule returns human-readable problems; an empty list means the case satisfies it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date

from clinical_cf.catalog.css import staging
from clinical_cf.catalog.css.render import render_section
from clinical_cf.catalog.css.schema import Case, PatientRecord, TreatmentLine


@dataclass(frozen=True)
class Violation:
    rule: str
    problem: str

    def __str__(self) -> str:
        return f"{self.rule}: {self.problem}"


@dataclass(frozen=True)
class Rule:
    id: str
    reason: str
    check: Callable[[Case, PatientRecord], list[str]]
    source: str = ""
    """Where the constraint comes from (a reference range, an arithmetic identity, an AJCC 8 table, PCWG3)."""


def _metastatic_since(case: Case, record: PatientRecord) -> date | None:
    """When the disease became metastatic (the diagnosis, or `metastasis_date`); None if it is not."""
    if not case.metastatic:
        return None
    return record.metastasis_date or record.diagnosis_date


def _for_metastatic(line: TreatmentLine) -> bool:
    return "metastatic" in line.setting.lower()


def _is_adjuvant(line: TreatmentLine) -> bool:
    setting = line.setting.lower()
    return "adjuvant" in setting and "neoadjuvant" not in setting


# --------------------------------------------------------------------------- 1. dates run forward


def _dates_run_forward(case: Case, record: PatientRecord) -> list[str]:
    problems: list[str] = []
    if record.diagnosis_date > case.board_date:
        problems.append("diagnosis after the board date")
    if record.resection is not None and record.resection.date < record.diagnosis_date:
        problems.append("resection before diagnosis")
    if record.resection is not None and record.resection.date > case.board_date:
        problems.append("resection after the board date")
    for line in record.treatment_lines:
        if line.start < record.diagnosis_date:
            problems.append(f"{line.regimen} starts before diagnosis")
        if line.end is not None and line.end < line.start:
            problems.append(f"{line.regimen} ends before it starts")
        if line.end is not None and line.end > case.board_date:
            problems.append(f"{line.regimen} ends after the board date")
    advanced = sorted((t for t in record.treatment_lines if _for_metastatic(t)), key=lambda t: t.start)
    for earlier, later in zip(advanced, advanced[1:], strict=False):
        if earlier.end is None or later.start < earlier.end:
            problems.append(f"{later.regimen} starts while {earlier.regimen} is still running")
    return problems


# --------------------------------------------------------------------------- 2. a treatment follows what it treats


def _treatment_follows_diagnosis(case: Case, record: PatientRecord) -> list[str]:
    problems: list[str] = []
    since = _metastatic_since(case, record)
    for line in record.treatment_lines:
        if _for_metastatic(line):
            if since is None:
                problems.append(f"{line.regimen} is for metastatic disease, but the disease is not metastatic")
            elif line.start < since:
                problems.append(f"{line.regimen} ({line.setting}) starts {line.start} before the metastases were documented ({since})")
        if "neoadjuvant" in line.setting.lower() and record.resection is not None and line.start > record.resection.date:
            problems.append(f"neoadjuvant {line.regimen} starts after the resection")
        if _is_adjuvant(line) and (record.resection is None or line.start < record.resection.date):
            problems.append(f"adjuvant {line.regimen} without a preceding resection")
    return problems


# --------------------------------------------------------------------------- 3. stage, M status and intent agree

_CURATIVE = re.compile(r"(?i)\bgoals? of care:\s*cure\b|\bcurative[- ]intent\b|\bwith curative intent\b")


def _stage_m_intent(case: Case, record: PatientRecord) -> list[str]:
    problems: list[str] = []
    m1 = re.search(r"M1", record.tnm) is not None
    if case.metastatic and not record.metastatic_sites:
        problems.append("stage IV without a metastatic site in the record")
    if not case.metastatic and record.metastatic_sites:
        problems.append(f"stage {case.stage} with metastatic sites ({', '.join(record.metastatic_sites)})")
    if not case.metastatic and m1:
        problems.append(f"stage {case.stage} with an M1 TNM ({record.tnm})")
    if record.metastasis_date is not None:
        if record.metastasis_date < record.diagnosis_date or record.metastasis_date > case.board_date:
            problems.append(f"metastases documented {record.metastasis_date}, outside diagnosis..board")
        if m1:
            problems.append(f"TNM at diagnosis {record.tnm} is M1, but metastases were found later ({record.metastasis_date})")
    since = _metastatic_since(case, record)
    if since is not None:
        r = record.resection
        if r is not None and r.date >= since and "oligometast" not in r.procedure.lower() and r.margin == "R0":
            problems.append(f"curative R0 {r.procedure} on {r.date} while metastatic (since {since}), no oligometastatic resection stated")
        for line in record.treatment_lines:
            if _is_adjuvant(line) and line.start >= since:
                problems.append(f"adjuvant {line.regimen} while metastatic")
        for enc in record.encounters:
            if enc.date >= since and _CURATIVE.search(enc.note):
                problems.append(f"curative goals in the {enc.kind} note of {enc.date} while metastatic")
    return problems


# --------------------------------------------------------------------------- 4. pathology only after a resection

_TNM_PREFIX = re.compile(r"(?<![A-Za-z])(y?[pc])?T[0-4isx]")
_N_PART = re.compile(r"(?:(?<=[0-9a-dsx])|(?<![A-Za-z]))(y?[pc])?N([0-3x])([a-c]?)")
"""The N category of a TNM string, written apart ('pT3b cN1b') or run on ('pT3bN1aM0': it inherits the T prefix)."""


_NODAL_OPERATION = re.compile(r"(?i)lymph|sentinel|SLN|node|dissection|D2|Whipple|pancreat|colectomy|gastrectomy")
"""Operations that remove regional lymph nodes (and so produce a pN). An omentectomy removes none (review 2)."""


def _resection_artifacts(case: Case, record: PatientRecord) -> list[str]:
    problems: list[str] = []
    r = record.resection
    t = _TNM_PREFIX.search(record.tnm)
    n = _N_PART.search(record.tnm)
    t_prefix = (t.group(1) or "") if t else ""
    n_prefix = (n.group(1) if n and n.group(1) else t_prefix) if n else ""
    nodal_surgery = r is not None and _NODAL_OPERATION.search(r.procedure)
    if r is None:
        # A pT from an excisional biopsy is pathologic without a resection (melanoma: Breslow depth); a pN is not.
        if "p" in t_prefix and case.cancer_type != "melanoma":
            problems.append(f"pathologic T ({record.tnm}) without a resection")
        if "p" in n_prefix:
            problems.append(f"pathologic N ({record.tnm}) without a nodal operation")
    elif "p" in n_prefix and not nodal_surgery:
        problems.append(f"pathologic N ({record.tnm}) after {r.procedure}, which sampled no nodes")
    # Melanoma N1a/N2a/N3a are clinically occult nodes found by sentinel-node biopsy (AJCC 8): never clinical.
    if case.cancer_type == "melanoma" and n and n.group(3) == "a" and n.group(2) != "0":
        if r is None or not re.search(r"(?i)sentinel|SLN", r.procedure):
            problems.append(f"melanoma N{n.group(2)}a ({record.tnm}) without a sentinel-node biopsy")
        elif "c" in n_prefix:
            problems.append(f"clinical cN{n.group(2)}a ({record.tnm}): N1a-N3a are defined by the sentinel node")
    if r is not None and r.pathology:
        positive = re.search(r"(?i)positive margin|margins? positive|margin involved", r.pathology)
        if positive and r.margin == "R0":
            problems.append("R0 margin, but the pathology reports a positive margin")
        if not positive and r.margin in ("R1", "R2") and re.search(r"(?i)margins? (?:negative|clear)", r.pathology):
            problems.append(f"{r.margin} margin, but the pathology reports clear margins")
    for enc in record.encounters:
        if re.search(r"(?i)post-?op|operative note", enc.kind) and (r is None or enc.date < r.date):
            problems.append(f"a post-operative encounter ({enc.kind}, {enc.date}) without a preceding resection")
    return problems


# --------------------------------------------------------------------------- 5. the operation fits site and nodes

_WHIPPLE = re.compile(r"(?i)whipple|pancreaticoduodenectomy")
_DISTAL = re.compile(r"(?i)distal pancreatectomy")
_COLECTOMY_SITE: tuple[tuple[str, str], ...] = (
    # Rectum and flexures (review 2): total mesorectal excision; the flexure goes with the hemicolectomy of its side.
    ("rectum", r"(?i)anterior resection|abdominoperineal|proctectomy|mesorectal|TME"),
    ("hepatic flexure", r"(?i)right hemicolectomy|segmental|colectomy with en bloc"),
    ("splenic flexure", r"(?i)left hemicolectomy|extended right hemicolectomy|segmental|colectomy with en bloc"),
    ("sigmoid", r"(?i)sigmoid|left hemicolectomy|segmental|colectomy with en bloc"),
    ("descending", r"(?i)left hemicolectomy|segmental|colectomy with en bloc"),
    ("ascending", r"(?i)right hemicolectomy|segmental|colectomy with en bloc"),
    ("cecum", r"(?i)right hemicolectomy|ileocecectomy|segmental|colectomy with en bloc"),
    ("transverse", r"(?i)extended right hemicolectomy|transverse colectomy|segmental|colectomy with en bloc"),
)


def _operation_fits(case: Case, record: PatientRecord) -> list[str]:
    r = record.resection
    if r is None:
        return []
    site = record.primary_site.lower()
    problems: list[str] = []
    if case.cancer_type == "pancreatic":
        if ("body" in site or "tail" in site) and _WHIPPLE.search(r.procedure):
            problems.append(f"{r.procedure} for a {record.primary_site} tumour (body/tail: distal pancreatectomy)")
        if "head" in site and _DISTAL.search(r.procedure):
            problems.append(f"{r.procedure} for a {record.primary_site} tumour (head: pancreaticoduodenectomy)")
    if case.cancer_type == "colorectal":
        for segment, fits in _COLECTOMY_SITE:
            if segment in site and not re.search(fits, r.procedure):
                problems.append(f"{r.procedure} for a {record.primary_site} primary")
    if case.cancer_type == "breast":
        n = _N_PART.search(record.tnm)
        t = _TNM_PREFIX.search(record.tnm)
        prefix = (n.group(1) if n and n.group(1) else (t.group(1) if t else None)) or ""
        clinical_positive = n is not None and n.group(2) not in ("0", "x") and "p" not in prefix
        neoadjuvant = any("neoadjuvant" in line.setting.lower() for line in record.treatment_lines)
        sentinel_only = re.search(r"(?i)sentinel", r.procedure) and not re.search(r"(?i)axillary (?:lymph node )?dissection", r.procedure)
        if clinical_positive and not neoadjuvant and sentinel_only:
            problems.append(f"{r.procedure} for clinically node-positive breast cancer ({record.tnm}) without neoadjuvant therapy")
    if case.cancer_type == "melanoma":
        n = _N_PART.search(record.tnm)
        clinically_positive = n is not None and n.group(2) != "0" and n.group(3) in ("b", "c") and "p" not in (n.group(1) or "")
        if clinically_positive and re.search(r"(?i)sentinel", r.procedure) and not re.search(r"(?i)dissection", r.procedure):
            problems.append(f"{r.procedure} for clinically node-positive melanoma ({record.tnm}): therapeutic lymph node dissection")
    return problems


# --------------------------------------------------------------------------- 6. a drug that presupposes a marker

def _status(record: PatientRecord, case: Case, name: str) -> str:
    return case.biomarkers.get(name, "not_tested") if not case.biomarkers.get(name, "").endswith("%") else case.marker_status(name)


def _her2_low(record: PatientRecord, case: Case) -> bool:
    her2 = next((b for b in record.biomarkers if b.name == "HER2"), None)
    return case.biomarkers.get("HER2") == "negative" and her2 is not None and re.search(r"IHC [12]\+", her2.result) is not None


MarkerTest = Callable[[Case, PatientRecord], bool]

DRUG_MARKERS: tuple[tuple[str, re.Pattern[str], str, MarkerTest], ...] = (
    ("HER2-directed therapy", re.compile(r"(?i)trastuzumab(?! deruxtecan)|pertuzumab|T-DM1|emtansine|\bTCHP\b|\bTHP\b|tucatinib|lapatinib"),
     "HER2 positive", lambda c, r: _status(r, c, "HER2") == "positive"),
    ("trastuzumab deruxtecan", re.compile(r"(?i)deruxtecan|T-DXd"),
     "HER2 positive or HER2-low", lambda c, r: _status(r, c, "HER2") == "positive" or _her2_low(r, c)),
    ("endocrine therapy / CDK4/6 inhibitor",
     re.compile(r"(?i)letrozole|anastrozole|exemestane|tamoxifen|fulvestrant|aromatase|palbociclib|ribociclib|abemaciclib"),
     "ER or PR positive", lambda c, r: c.cancer_type != "breast" or "positive" in (_status(r, c, "ER"), _status(r, c, "PR"))),
    ("EGFR inhibitor", re.compile(r"(?i)osimertinib|erlotinib|gefitinib|afatinib|dacomitinib|amivantamab|lazertinib"),
     "EGFR mutation", lambda c, r: _status(r, c, "EGFR") == "positive"),
    ("ALK inhibitor", re.compile(r"(?i)alectinib|lorlatinib|brigatinib|crizotinib|ceritinib"),
     "ALK rearrangement", lambda c, r: _status(r, c, "ALK") == "positive"),
    ("BRAF inhibitor", re.compile(r"(?i)dabrafenib|encorafenib|vemurafenib"),
     "BRAF V600 mutation", lambda c, r: _status(r, c, "BRAF") == "positive"),
    ("anti-EGFR antibody", re.compile(r"(?i)cetuximab|panitumumab"),
     "RAS wild-type", lambda c, r: c.cancer_type != "colorectal" or all(_status(r, c, m) == "negative" for m in ("KRAS", "NRAS"))),
    ("zolbetuximab", re.compile(r"(?i)zolbetuximab"), "claudin 18.2 positive", lambda c, r: _status(r, c, "CLDN18.2") == "positive"),
    ("olaparib", re.compile(r"(?i)olaparib"), "BRCA1/2 (or, in ovarian cancer, HRD) positive",
     lambda c, r: "positive" in (_status(r, c, "BRCA1"), _status(r, c, "BRCA2"))
     or (c.cancer_type == "ovarian" and _status(r, c, "HRD") == "positive")),
    ("triple-negative regimen (KEYNOTE-522)", re.compile(r"(?i)KEYNOTE-522"),
     "HER2 negative and ER/PR negative",
     lambda c, r: _status(r, c, "HER2") == "negative" and "positive" not in (_status(r, c, "ER"), _status(r, c, "PR"))),
)
"""Agent (or regimen) -> the marker it presupposes (FDA labels; NCCN Breast, NSCLC, Colon, Gastric, Melanoma,
Ovarian, Pancreatic and Prostate v.2026). An absent marker (stripped by family C) fails the test too: a history
that names the agent still reveals the result."""

_HER2_AGENT = DRUG_MARKERS[0][1]
_SYSTEMIC_NOT_ENDOCRINE = re.compile(
    r"(?i)platin|taxel|taxane|doxorubicin|cyclophosphamide|AC-T|capecitabine|eribulin|gemcitabine|palbociclib|ribociclib|abemaciclib"
    r"|FOLFOX|CAPOX|FLOT|nivolumab|pembrolizumab"
)


def _drug_needs_marker(case: Case, record: PatientRecord) -> list[str]:
    problems: list[str] = []
    for line in record.treatment_lines:
        for agent, pattern, needs, holds in DRUG_MARKERS:
            if pattern.search(line.regimen) and not holds(case, record):
                problems.append(f"{line.regimen} ({agent}) needs {needs}")
        # HER2-positive breast cancer gets HER2 blockade with its chemotherapy (or CDK4/6 inhibitor) in every
        # setting, and HER2-positive metastatic gastric cancer with its first line (ToGA); a line without it
        # presupposes HER2-negative disease. (Peri-operative gastric chemotherapy is HER2-independent.)
        her2_positive = _status(record, case, "HER2") == "positive"
        gastric_metastatic = case.cancer_type == "gastric" and "first-line metastatic" in line.setting.lower()
        if her2_positive and (case.cancer_type == "breast" or gastric_metastatic):
            blockade = _HER2_AGENT.search(line.regimen) or DRUG_MARKERS[1][1].search(line.regimen)
            if _SYSTEMIC_NOT_ENDOCRINE.search(line.regimen) and not blockade:
                problems.append(f"{line.regimen} without HER2-directed therapy in HER2-positive disease")
            # Endocrine therapy alone (review 2, css-breast-024:A2): in HER2-positive disease it follows a completed
            # course of HER2 blockade (adjuvant), or goes with it (metastatic: NCCN Breast v.2026, HR+/HER2+ MBC).
            endocrine = DRUG_MARKERS[2][1].search(line.regimen) and not _SYSTEMIC_NOT_ENDOCRINE.search(line.regimen)
            earlier_blockade = any(_HER2_AGENT.search(o.regimen) and o.start <= line.start and not _for_metastatic(o)
                                   for o in record.treatment_lines)
            if case.cancer_type == "breast" and endocrine and not blockade and (_for_metastatic(line) or not earlier_blockade):
                problems.append(f"{line.regimen} (endocrine therapy alone) in HER2-positive disease, with no HER2-directed therapy")
    # A marker-positive case is not treated as marker-negative: hormone-receptor-positive early breast cancer that
    # completed adjuvant treatment has had endocrine therapy (5 years; NCCN Breast v.2026; review 2, css-breast-020).
    hr_positive = "positive" in (_status(record, case, "ER"), _status(record, case, "PR"))
    adjuvant = [line for line in record.treatment_lines if _is_adjuvant(line)]
    if case.cancer_type == "breast" and hr_positive and adjuvant and not any(DRUG_MARKERS[2][1].search(a.regimen) for a in adjuvant):
        given = ", ".join(a.regimen for a in adjuvant)
        problems.append(f"hormone-receptor-positive breast cancer with adjuvant {given} and no endocrine therapy")
    return problems


# --------------------------------------------------------------------------- 7. a marker result after its test

_CHOSEN_BY: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...] = (
    (DRUG_MARKERS[0][1], ("HER2",)),
    (DRUG_MARKERS[2][1], ("ER", "PR")),
    (DRUG_MARKERS[3][1], ("EGFR",)),
    (DRUG_MARKERS[4][1], ("ALK",)),
    (DRUG_MARKERS[5][1], ("BRAF",)),
    (DRUG_MARKERS[7][1], ("CLDN18.2",)),
)
"""Agents whose choice rests on a positive result, and the markers it rests on."""


def _marker_after_test(case: Case, record: PatientRecord) -> list[str]:
    problems: list[str] = []
    by_name = {b.name: b for b in record.biomarkers}
    for marker in record.biomarkers:
        if marker.date > case.board_date:
            problems.append(f"{marker.name} reported {marker.date}, after the board")
        if marker.date < record.diagnosis_date:
            problems.append(f"{marker.name} reported {marker.date}, before the diagnostic specimen ({record.diagnosis_date})")
    for line in record.treatment_lines:
        for pattern, names in _CHOSEN_BY:
            results = [by_name[n] for n in names if n in by_name and by_name[n].status == "positive"]
            if pattern.search(line.regimen) and results and all(line.start < m.date for m in results):
                problems.append(f"{line.regimen} starts {line.start}, before its {'/'.join(names)} result ({min(m.date for m in results)})")
    return problems


# --------------------------------------------------------------------------- 8. N from the node count

_COUNT_TEXT = re.compile(r"(?i)\((\d+)/(\d+)\s*S?LN\)|\bSLN\s*(\d+)/(\d+)|;\s*(\d+)/(\d+)\s*LN\b")


def _n_from_node_count(case: Case, record: PatientRecord) -> list[str]:
    problems: list[str] = []
    r = record.resection
    if r is not None and r.pathology:
        m = _COUNT_TEXT.search(r.pathology)
        stated = tuple(int(g) for g in m.groups() if g is not None) if m else None
        if stated and r.nodes_positive is not None and stated != (r.nodes_positive, r.nodes_examined):
            problems.append(f"the pathology states {stated[0]}/{stated[1]} nodes, the record {r.nodes_positive}/{r.nodes_examined}")
        positive = r.nodes_positive if r.nodes_positive is not None else (stated[0] if stated else None)
        try:
            written = staging.parse_tnm(r.pathology)
        except staging.StagingError:
            written = None
        if positive is not None and written is not None and written.n_prefix.endswith("p"):
            method = "sentinel" if re.search(r"(?i)sentinel|SLN", r.procedure + r.pathology) else "pathologic"
            if not staging.n_agrees_with_count(case.cancer_type, written.n, positive, method):  # type: ignore[arg-type]
                problems.append(f"{written.n_prefix}{written.n} with {positive} positive node(s) (AJCC 8)")
    # Imaging before staging agrees with N: a sentinel-node biopsy (without neoadjuvant therapy) is for clinically
    # node-negative disease, so the staging is cN0 before it; a clinical N1-3 would be a node the biopsy is not for.
    neoadjuvant = any("neoadjuvant" in line.setting.lower() for line in record.treatment_lines)
    if r is not None and re.search(r"(?i)sentinel", r.procedure) and not neoadjuvant:
        try:
            tnm = staging.parse_tnm(record.tnm)
        except staging.StagingError:
            tnm = None
        if tnm is not None and tnm.n_major not in ("N0", "Nx", "NX") and "p" not in tnm.n_prefix:
            problems.append(f"sentinel-node biopsy with clinically node-positive staging ({record.tnm})")
    return problems


# --------------------------------------------------------------------------- 9-11. stage group, M1 subcategory, y-prefix


def _stage_group_computed(case: Case, record: PatientRecord) -> list[str]:
    try:
        now = staging.current_stage(case.cancer_type, record)
        at_diagnosis = staging.diagnostic_stage(case.cancer_type, record)
    except staging.StagingError:
        return []  # the record lacks a fact the edition needs (a user's case): nothing to compare
    problems = []
    if case.stage != now:
        problems.append(f"stage {case.stage}, but {record.tnm} with {record.metastatic_sites or 'no metastases'} is AJCC 8 stage {now}")
    if record.initial_stage is not None and record.initial_stage != at_diagnosis:
        problems.append(f"stage at diagnosis {record.initial_stage}, but {record.tnm} is AJCC 8 stage {at_diagnosis}")
    return problems


def _m_from_sites(case: Case, record: PatientRecord) -> list[str]:
    m = re.search(r"M1([a-d]?)", record.tnm)
    if m is None or not m.group(1) or not record.metastatic_sites:
        return []
    expected = staging.m_category(case.cancer_type, list(record.metastatic_sites))
    return [] if expected == m.group(0) else [f"{m.group(0)} with metastases to {', '.join(record.metastatic_sites)} (AJCC 8: {expected})"]


def _y_prefix(case: Case, record: PatientRecord) -> list[str]:
    problems = []
    if re.search(r"(?<![A-Za-z])y[pc]?[TN]", record.tnm):
        problems.append(f"the stage at diagnosis is a post-treatment (y) TNM ({record.tnm})")
    r = record.resection
    neoadjuvant = any("neoadjuvant" in line.setting.lower() and line.start < r.date for line in record.treatment_lines) if r else False
    if r is not None and r.pathology:
        y = re.search(r"(?<![A-Za-z])yp[TN]", r.pathology) is not None
        if y and not neoadjuvant:
            problems.append("ypTNM without neoadjuvant therapy before the resection")
        if neoadjuvant and re.search(r"(?<![A-Za-z])p[TN][0-4]", r.pathology) and not y:
            problems.append("pTNM (not ypTNM) after neoadjuvant therapy")
    return problems


# --------------------------------------------------------------------------- 12. tumour markers follow the disease

TUMOUR_MARKERS: tuple[str, ...] = ("CEA", "CA 15-3", "CA 19-9", "CA-125", "LDH", "PSA")
NON_METASTATIC_CEILING: dict[str, float] = {"CEA": 20.0, "CA 15-3": 50.0, "CA 19-9": 500.0, "LDH": 250.0, "PSA": 100.0}
"""Upper end of a tumour marker in non-metastatic disease: above it the value suggests distant disease (CEA > 20
ng/mL, CA 15-3 > 50 U/mL, CA 19-9 > 500 U/mL (NCCN Pancreatic: staging laparoscopy), LDH above its upper limit
(melanoma: AJCC 8 uses it for M1 only), PSA > 100 ng/mL). CA-125 has none: stage III ovarian cancer is peritoneal
disease with CA-125 in the hundreds or thousands."""


def _marker_course(case: Case, record: PatientRecord) -> list[str]:
    problems: list[str] = []
    since = _metastatic_since(case, record)
    lines = record.treatment_lines
    progressions = sorted(line.end for line in lines if line.outcome == "progression" and line.end is not None)
    for name in TUMOUR_MARKERS:
        series = sorted((lab for lab in record.labs if lab.name == name), key=lambda lab: lab.date)
        for lab in series:
            ceiling = NON_METASTATIC_CEILING.get(name)
            if ceiling is not None and (since is None or lab.date < since) and lab.value > ceiling:
                problems.append(f"{name} {lab.value:g} on {lab.date} in non-metastatic disease (above {ceiling:g})")
        for earlier, later in zip(series, series[1:], strict=False):
            # At a progression (a line ended by it, no new line since) the marker rises or stays high, never falls.
            p = max((d for d in progressions if earlier.date <= d <= later.date), default=None)
            restarted = p is not None and any(p < line.start <= later.date for line in lines)
            if p is not None and not restarted and later.value < earlier.value * 0.9:
                problems.append(f"{name} falls from {earlier.value:g} to {later.value:g} across the progression of {p}")
            # A fall needs a response: a line running, or a resection, between the two values.
            treated = any(line.start <= later.date and (line.end is None or line.end >= earlier.date) for line in lines)
            operated = record.resection is not None and earlier.date <= record.resection.date <= later.date
            if later.value < earlier.value * 0.5 and not treated and not operated and p is None:
                problems.append(f"{name} falls from {earlier.value:g} to {later.value:g} with no treatment between")
    return problems


# --------------------------------------------------------------------------- 13. menopausal status and endocrine therapy

_AROMATASE = re.compile(r"(?i)letrozole|anastrozole|exemestane|aromatase")
_OVARIAN_SUPPRESSION = re.compile(r"(?i)ovarian (?:function )?suppression|\bOFS\b|goserelin|leuprorelin|triptorelin|oophorectomy")


def _menopause_endocrine(case: Case, record: PatientRecord) -> list[str]:
    if case.cancer_type != "breast":
        return []
    premenopausal = record.menopausal_status == "premenopausal" or (record.menopausal_status is None and case.age < 50)
    return [f"{line.regimen}: an aromatase inhibitor before menopause without ovarian suppression" for line in record.treatment_lines
            if premenopausal and _AROMATASE.search(line.regimen) and not _OVARIAN_SUPPRESSION.search(line.regimen)]


# --------------------------------------------------------------------------- 14-21. the patient timeline (issue 42)
# Each constant below is declared once, with its source; `catalog.css.timeline` derives the rendered values from the
# same constants, and these rules check every baseline and counterfactual against them.

MARKER_ULN: dict[str, float] = {"CEA": 3.0, "CA 15-3": 30.0, "CA 19-9": 37.0, "CA-125": 35.0, "PSA": 0.2}
"""Upper reference limits of the tumour markers (CEA 3 ng/mL in non-smokers, CA 15-3 30 U/mL, CA 19-9 37 U/mL, CA-125
35 U/mL: the assays' usual reference limits, ASCO tumour-marker guidelines 2007). After a radical prostatectomy the
PSA floor is the biochemical-recurrence threshold, 0.2 ng/mL (AUA 2013). LDH has none here: metastatic melanoma with a
normal LDH is common (AJCC 8 M1x(0))."""
MARKER_HALF_LIFE_DAYS: dict[str, float] = {"CEA": 2.0, "CA 19-9": 3.0, "CA 15-3": 4.0, "CA-125": 4.0, "PSA": 2.0}
"""The fastest plausible serum half-life of each marker after complete removal of the tumour (CEA 2-8 days, CA 19-9
4-8, CA 15-3 5-7, CA-125 5-10 after surgery, PSA 2-3 days after radical prostatectomy; the lower ends, so a value that
falls faster than this is impossible, not merely unusual)."""
DIFFERENTIAL_PARTS: tuple[str, ...] = ("ANC", "ALC", "AMC", "AEC", "ABC")
"""The absolute counts of the white-cell differential: their sum is the white count (an arithmetic identity), so the
parts a panel shows never exceed the WBC (0.1 K/uL allowed for rounding)."""
HCT_PER_HGB: tuple[float, float] = (2.7, 3.3)
"""Haematocrit (%) per haemoglobin (g/dL) = 100 / MCHC; MCHC's reference range 32-36 g/dL gives 2.8-3.1 ("rule of three"),
widened to 30-37 g/dL for rounding and hypochromic iron deficiency."""
HGB_CHANGE: tuple[float, float] = (1.0, 1.5)
"""Largest plausible change of haemoglobin between two counts without transfusion: 1.0 g/dL (analytical and biological
variation) plus 1.5 g/dL per 28 days (a maximal marrow response to iron repletion, about 1-2 g/dL in 2-4 weeks; WHO/BSH
iron-deficiency guidance: a 2 g/dL rise in 3-4 weeks is the expected full response)."""
ANION_GAP: tuple[float, float] = (3.0, 20.0)
"""Na - (Cl + HCO3) in mmol/L: reference 8-16 (ion-selective electrodes), 3-20 allowing for rounding; a gap outside it
needs a cause (lactic or ketoacidosis, hypoalbuminaemia, paraproteins) the chart would name."""
BUN_PER_CREATININE: tuple[float, float] = (5.0, 40.0)
"""Urea nitrogen (mg/dL) per creatinine (mg/dL): 10-20 is the usual ratio; below 5 or above 40 needs a cause
(starvation, GI bleeding, prerenal failure) the chart would name."""
SCAN_AFTER_RESECTION_DAYS = 60
"""Distant metastases found after an R0 resection are documented at least 2 months after it: lesions of centimetres on a
CT within weeks of the operation were present at surgery, and the resection was not curative (review 3)."""
GNRH_AGENT = re.compile(r"(?i)leuprorelin|leuprolide|goserelin|triptorelin|degarelix|relugolix|histrelin")
"""Androgen deprivation is given as an LHRH agonist or a GnRH antagonist (or orchiectomy); castration-resistant disease keeps
it (NCCN Prostate v.2026; PCWG3: castrate testosterone)."""


def _series(record: PatientRecord, name: str) -> list:
    return sorted((lab for lab in record.labs if lab.name == name), key=lambda lab: lab.date)


def _cbc_coherent(case: Case, record: PatientRecord) -> list[str]:
    problems = []
    by_date: dict[date, dict[str, float]] = {}
    for lab in record.labs:
        by_date.setdefault(lab.date, {})[lab.name] = lab.value
    for when, panel in sorted(by_date.items()):
        parts = sum(panel.get(p, 0.0) for p in DIFFERENTIAL_PARTS)
        if "WBC" in panel and parts > panel["WBC"] + 0.1:
            problems.append(f"{when}: differential {parts:.1f} K/uL exceeds WBC {panel['WBC']:g}")
        if "Hgb" in panel and "Hct" in panel and panel["Hgb"] > 0:
            ratio = panel["Hct"] / panel["Hgb"]
            if not HCT_PER_HGB[0] <= ratio <= HCT_PER_HGB[1]:
                problems.append(f"{when}: Hct {panel['Hct']:g} is {ratio:.2f} x Hgb {panel['Hgb']:g}")
    return problems


def _chemistry_coherent(case: Case, record: PatientRecord) -> list[str]:
    problems = []
    by_date: dict[date, dict[str, float]] = {}
    for lab in record.labs:
        by_date.setdefault(lab.date, {})[lab.name] = lab.value
    for when, panel in sorted(by_date.items()):
        if {"Na", "Cl", "CO2"} <= set(panel):
            gap = panel["Na"] - panel["Cl"] - panel["CO2"]
            if not ANION_GAP[0] <= gap <= ANION_GAP[1]:
                problems.append(f"{when}: anion gap {gap:g} mmol/L (Na {panel['Na']:g}, Cl {panel['Cl']:g}, CO2 {panel['CO2']:g})")
        if {"BUN", "Cr"} <= set(panel) and panel["Cr"] > 0:
            ratio = panel["BUN"] / panel["Cr"]
            if not BUN_PER_CREATININE[0] <= ratio <= BUN_PER_CREATININE[1]:
                problems.append(f"{when}: BUN/Cr {ratio:.0f} (BUN {panel['BUN']:g}, Cr {panel['Cr']:g})")
    return problems


def _haemoglobin_course(case: Case, record: PatientRecord) -> list[str]:
    problems = []
    series = _series(record, "Hgb")
    for a, b in zip(series, series[1:], strict=False):
        days = (b.date - a.date).days
        bound = HGB_CHANGE[0] + HGB_CHANGE[1] * days / 28
        if abs(b.value - a.value) > bound:
            problems.append(f"Hgb {a.value:g} ({a.date}) -> {b.value:g} ({b.date}): {abs(b.value - a.value):.1f} g/dL in {days} days")
    return problems


def _started_between(record: PatientRecord, start: date, end: date) -> bool:
    return any(start <= line.start <= end for line in record.treatment_lines)


def _marker_after_metastases(case: Case, record: PatientRecord) -> list[str]:
    """After new metastases the marker is above its reference limit and does not fall by half, unless a treatment started
    since explains it; through a resection it falls no faster than its half-life."""
    problems = []
    found = record.metastasis_date
    for name in TUMOUR_MARKERS:
        series = _series(record, name)
        if found is not None and case.metastatic:
            for earlier, later in zip([None, *series], series, strict=False):
                if later.date < found or _started_between(record, found, later.date):
                    continue
                floor = MARKER_ULN.get(name)
                if floor is not None and later.value < floor:
                    problems.append(f"{name} {later.value:g} ({later.date}) below its reference limit after metastases found {found}")
                if earlier is not None and earlier.date >= found and later.value < earlier.value * 0.5:
                    problems.append(f"{name} falls {earlier.value:g} -> {later.value:g} after metastases found {found}, untreated")
        r = record.resection
        half_life = MARKER_HALF_LIFE_DAYS.get(name)
        if r is None or half_life is None:
            continue
        for earlier, later in zip(series, series[1:], strict=False):
            if earlier.date <= r.date < later.date:
                decayed = earlier.value * 0.5 ** ((later.date - earlier.date).days / half_life)
                if later.value < min(decayed, MARKER_ULN.get(name, 0.0)) * 0.9:
                    problems.append(f"{name} {earlier.value:g} -> {later.value:g} in {(later.date - earlier.date).days} days: faster "
                                    f"than its {half_life:g}-day half-life")
    return problems


def _metastases_after_resection(case: Case, record: PatientRecord) -> list[str]:
    r, found = record.resection, record.metastasis_date
    problems = []
    if r is not None and found is not None and r.date < found and (found - r.date).days < SCAN_AFTER_RESECTION_DAYS:
        problems.append(f"metastases found {found}, {(found - r.date).days} days after the R0 resection of {r.date}")
    if found is not None and case.metastatic and not any(
            e.date == found and e.kind.lower().startswith("radiology") for e in record.encounters):
        problems.append(f"metastases dated {found} with no imaging on that date")
    return problems


def _androgen_deprivation_listed(case: Case, record: PatientRecord) -> list[str]:
    running = [line for line in record.treatment_lines if re.search(r"\bADT\b|androgen deprivation", line.regimen)
               and (line.outcome == "ongoing" or "ADT continues" in (line.note or ""))]
    if not running and record.castration_status != "resistant":
        return []
    active = render_section(case, "medications").split("ONCOLOGIC TREATMENT HISTORY")[0]
    listed = GNRH_AGENT.search(active) is not None
    return [] if listed else ["androgen deprivation continues but no LHRH agonist/antagonist is an active medication"]


def _psa_at_recurrence(case: Case, record: PatientRecord) -> list[str]:
    r = record.resection
    if case.cancer_type != "prostate" or r is None or not case.metastatic:
        return []
    starts = [line.start for line in record.treatment_lines if line.start > r.date]
    until = min([d for d in (record.metastasis_date, *starts) if d is not None], default=case.board_date)
    if any(lab.name == "PSA" and r.date < lab.date <= until for lab in record.labs):
        return []
    return [f"no PSA between the prostatectomy ({r.date}) and the recurrence or its treatment ({until})"]


_PATH_T = re.compile(r"(?<![A-Za-z])y?pT(?:is|mi|[0-4x])")
_PATH_N = re.compile(r"(?:(?<=[0-9a-dsx])|(?<![A-Za-z]))(?:y?p|c)?N[0-3x]|not sampled")


def _resection_pathology(case: Case, record: PatientRecord) -> list[str]:
    r = record.resection
    if r is None:
        return []
    problems = []
    text = r.pathology or ""
    if not _PATH_T.search(text) or not _PATH_N.search(text):
        problems.append(f"resection pathology without pT/pN: {text!r}")
    if not r.margin:
        problems.append("resection without its margin status")
    neoadjuvant = any("neoadjuvant" in line.setting.lower() and line.start < r.date for line in record.treatment_lines)
    if not neoadjuvant and not re.match(r"y?pT", record.tnm):
        problems.append(f"resected without neoadjuvant therapy, yet the TNM is clinical ({record.tnm})")
    return problems


_CITED_SCAN = re.compile(r"(?i)\b(?:CT|MRI|PET|scan|imaging|restaging)\b[^()\n]{0,40}\((\d{4}-\d{2}-\d{2})\)")
_BLOCK = re.compile(r"^\[(\d{4}-\d{2}-\d{2})\] ([^\n]*?) - [^\n]*\n", re.M)


def _scans_cited_on_date(case: Case, record: PatientRecord) -> list[str]:
    """Every note cites only scans done on or before its own date, on a date the chart has a radiology report."""
    text = render_section(case, "encounters")
    heads = list(_BLOCK.finditer(text))
    radiology = {date.fromisoformat(m.group(1)) for m in heads if m.group(2).lower().startswith("radiology")}
    problems = []
    for i, head in enumerate(heads):
        body = text[head.end(): heads[i + 1].start() if i + 1 < len(heads) else len(text)]
        written = date.fromisoformat(head.group(1))
        for cited in _CITED_SCAN.finditer(body):
            when = date.fromisoformat(cited.group(1))
            if when > written or (when not in radiology and when != record.diagnosis_date):
                near = sorted(d.isoformat() for d in radiology if abs((d - when).days) < 15)
                problems.append(f"note of {written} cites a scan of {when} (radiology reports near it: {near})")
    return problems


RULES: tuple[Rule, ...] = (
    Rule("dates_run_forward", "Diagnosis precedes treatment and surgery, a line ends after it starts, and lines for advanced "
         "disease follow one another (a later line starts after the earlier one ended).", _dates_run_forward),
    Rule("treatment_follows_diagnosis", "A treatment follows the diagnosis or recurrence it treats: therapy for metastatic disease "
         "starts once metastases are documented; neoadjuvant therapy precedes and adjuvant therapy follows the resection.",
         _treatment_follows_diagnosis),
    Rule("stage_m_intent_agree", "Stage, M category, metastatic sites and intent agree at each time point: metastases found after "
         "the diagnosis leave the diagnosis M0; no R0 resection, adjuvant therapy or curative goals while metastatic unless an "
         "oligometastatic resection is stated (AJCC 8; CLINICAL_CONTENT.md).", _stage_m_intent),
    Rule("pathology_after_resection", "Pathologic staging (pT/pN), margins, nodal counts and a post-operative course exist only "
         "after an operation that produced them; melanoma N1a-N3a are sentinel-node categories (AJCC 8).", _resection_artifacts),
    Rule("operation_fits_site", "The operation fits the primary site and nodal status: pancreatic head -> pancreaticoduodenectomy, "
         "body/tail -> distal pancreatectomy; the colectomy of the primary's segment; clinically node-positive melanoma -> therapeutic "
         "lymph node dissection, and clinically node-positive breast cancer operated upfront -> axillary dissection, not a "
         "sentinel-node biopsy alone (NCCN Pancreatic, Colon, Melanoma, Breast v.2026).", _operation_fits),
    Rule("drug_needs_marker", "A drug that presupposes a marker appears only with that marker (HER2-directed therapy with HER2, "
         "endocrine therapy with ER/PR, EGFR/ALK/BRAF inhibitors with their alteration, anti-EGFR antibodies with RAS wild-type, "
         "zolbetuximab with claudin 18.2, olaparib with BRCA/HRD); HER2-positive breast cancer is never treated without HER2 blockade.",
         _drug_needs_marker),
    Rule("marker_after_test", "A marker result exists only after its specimen and before the board, and a drug chosen by it starts "
         "after the result.", _marker_after_test),
    Rule("n_from_node_count", "The pathologic N follows the positive-node count (AJCC 8: gastric N1 1-2, N2 3-6; colorectal N1a 1, "
         "N1b 2-3; melanoma N1a one occult node; N0 none) and the count the pathology states is the record's; a sentinel-node biopsy "
         "without neoadjuvant therapy is for clinically node-negative disease, so the staging imaging before it is cN0.",
         _n_from_node_count),
    Rule("stage_group_computed", "The stage group (now, and at diagnosis for a later recurrence) is the AJCC 8 group of the record's "
         "T, N and M, with Grade Group and PSA for prostate (catalog.css.staging); a typed group drifts from its TNM.",
         _stage_group_computed),
    Rule("m_from_sites", "The M1 subcategory is the one of the metastatic sites (AJCC 8: melanoma brain M1d, lung only M1b; NSCLC "
         "one extrathoracic organ M1b, more M1c; colorectal peritoneum M1c).", _m_from_sites),
    Rule("y_prefix_after_neoadjuvant", "A ypTNM exists only after neoadjuvant therapy, every pathologic TNM after neoadjuvant therapy "
         "is yp, and the stage at diagnosis is never a post-treatment (y) TNM (AJCC 8, post-therapy classification).", _y_prefix),
    Rule("marker_course", "Tumour markers agree with the disease at their date: below the metastatic range without metastases, rising "
         "or staying high at a progression, falling only on treatment or after a resection (review 2: CEA 150 in stage III colon "
         "cancer; a marker falling after an injected progression).", _marker_course),
    Rule("menopause_endocrine", "Before menopause an aromatase inhibitor is given only with ovarian function suppression (NCCN Breast "
         "v.2026; SOFT/TEXT): the record's menopausal status agrees with its endocrine therapy.", _menopause_endocrine),
    Rule("cbc_coherent", "A blood count is one count: the differential's parts sum to no more than the white count, and the "
         "haematocrit is about three times the haemoglobin.", _cbc_coherent, "arithmetic identity (WBC = sum of the differential); "
         "MCHC reference range 32-36 g/dL (Hct/Hgb = 100/MCHC)"),
    Rule("chemistry_coherent", "A chemistry panel is one patient's: the anion gap and the urea/creatinine ratio are within their "
         "usual ranges.", _chemistry_coherent, "arithmetic identity (anion gap = Na - Cl - HCO3), reference 8-16 mmol/L; "
         "BUN/creatinine ratio 10-20"),
    Rule("haemoglobin_course", "Haemoglobin changes month to month at a plausible rate without transfusion.", _haemoglobin_course,
         "erythropoietic response to iron repletion (WHO/BSH): at most ~2 g/dL in 3-4 weeks"),
    Rule("marker_after_metastases", "After new metastases a tumour marker is above its reference limit and does not fall without a "
         "treatment that explains it; through a resection it falls no faster than its half-life (review 3: PSA 0.03 ng/mL beside new "
         "liver metastases).", _marker_after_metastases, "assay reference limits (ASCO 2007), AUA 2013 BCR threshold, marker half-lives"),
    Rule("metastases_after_resection", "Metastases documented after an R0 resection are found on a scan dated at least two months after "
         "the operation.", _metastases_after_resection, "review 3 (E1); NCCN surveillance intervals"),
    Rule("androgen_deprivation_listed", "Running androgen deprivation (and castration resistance, which presupposes it) lists its LHRH "
         "agonist or antagonist among the active medications.", _androgen_deprivation_listed, "NCCN Prostate v.2026; PCWG3"),
    Rule("psa_at_recurrence", "A recurrence after radical prostatectomy has its PSA between the operation and the recurrence or its "
         "treatment.", _psa_at_recurrence, "AUA/ASTRO 2019 (biochemical recurrence); PCWG3"),
    Rule("resection_pathology", "Every resection carries its pathology (pT, pN or 'not sampled', margins), and the stage after it is "
         "pathological.", _resection_pathology, "AJCC 8 pathological classification"),
    Rule("scans_cited_on_date", "A note cites only scans done on or before its date, on a date the chart has the radiology report.",
         _scans_cited_on_date, "causal order of the chart (review 3: restaging CT cited one day before the scan)"),
)
RULE_IDS: tuple[str, ...] = tuple(r.id for r in RULES)
REVIEW_2_RULE_IDS: tuple[str, ...] = RULE_IDS[:13]
TIMELINE_RULE_IDS: tuple[str, ...] = RULE_IDS[13:]
"""The patient-timeline constraints (issue 42): one blood count and chemistry, the haemoglobin course, markers after
metastases and through a resection, the scan after a resection, ADT's agent, the PSA at recurrence, the resection's
pathology, scans cited on their date."""
"""The rules before issue 42 (catalog v5, cohort v3): the baseline of the constrained-share figure."""

FACT_CHECKS: dict[str, tuple[str, ...]] = {
    **{name: ("cbc_coherent",) for name in ("WBC", "Hct", "ANC", "ALC")},
    "Hgb": ("cbc_coherent", "haemoglobin_course"),
    **{name: ("chemistry_coherent",) for name in ("Na", "Cl", "CO2", "BUN", "Cr")},
    **{name: ("marker_course", "marker_after_metastases") for name in TUMOUR_MARKERS},
    "nodes": ("n_from_node_count",),
    "stage": ("stage_group_computed", "m_from_sites"),
}
"""Which rules check each kind of rendered numeric fact. Kinds not named here (platelets, the rest of the chemistry,
testosterone, vitals, age, ECOG, biomarker percentages) are drawn or given, with no checked constraint yet."""


def numeric_facts(case: Case) -> list[str]:
    """The kind of each numeric fact a case's packet renders from its record: one per lab value, six per vitals row, the
    positive and examined nodes of a resection, the TNM and stage group (and the stage at diagnosis), age and ECOG, each
    biomarker result with a number."""
    record = case.record
    if record is None:
        return []
    kinds = [lab.name for lab in record.labs] + ["vitals"] * 6 * len(record.vitals) + ["age", "ecog"]
    if record.resection is not None and record.resection.nodes_examined is not None:
        kinds += ["nodes", "nodes"]
    kinds += ["stage"] * (2 + (record.initial_stage is not None))
    kinds += ["biomarker" for b in record.biomarkers if re.search(r"\d", b.result or "")]
    return kinds


def constrained_share(cases: list[Case], rule_ids: tuple[str, ...] = RULE_IDS) -> tuple[int, int]:
    """(numeric facts derived under a rule in `rule_ids` that checks their kind, all numeric facts) over `cases`."""
    kinds = [k for case in cases for k in numeric_facts(case)]
    checked = sum(1 for k in kinds if set(FACT_CHECKS.get(k, ())) & set(rule_ids))
    return checked, len(kinds)


def violations(case: Case) -> list[Violation]:
    """Every invariant the case's record breaks (none for a case without a record: those get the text checks)."""
    record = case.record
    if record is None:
        return []
    return [Violation(rule.id, problem) for rule in RULES for problem in rule.check(case, record)]


def new_violations(baseline: Case, counterfactual: Case) -> list[Violation]:
    """Violations of the counterfactual that its baseline does not have (a user's record may start imperfect)."""
    before = {(v.rule, v.problem) for v in violations(baseline)}
    return [v for v in violations(counterfactual) if (v.rule, v.problem) not in before]
