"""The defect classes of the clinical reviews (shared/reviews/clinical-review-1.md and -2.md), checked over the whole cohort.

Why this module exists: the review sampled, and named cases; its findings are classes. Each function
here finds every member of one class in the bundled content (the cases, or the tuples of an
expansion), from the packet text and the record, the way the reviewer read them, independently of
`catalog.css.invariants` (which prevents them on the record). The generator's tests and the CSS
tests assert that every class is empty; `bench/css_content.py` prints the counts before and after.

A class function returns the ids (tuple ids `case:intervention`, or case ids) that belong to it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import date, timedelta

from clinical_cf.catalog.css import staging
from clinical_cf.catalog.css.expand import CSSTuple
from clinical_cf.catalog.css.schema import Case

_BLOCK = re.compile(r"^\[(\d{4}-\d{2}-\d{2})\] ([^\n]*)\n((?:(?!^\[\d{4}-\d{2}-\d{2}\]).*\n?)*)", re.M)
"""One rendered encounter: `[date] kind - author` and its text, up to the next one."""


def encounter_blocks(encounters: str) -> list[tuple[date, str, str]]:
    """(date, heading, text) of each encounter in a rendered ENCOUNTERS section (ISO dates)."""
    return [(date.fromisoformat(m.group(1)), m.group(2), m.group(3)) for m in _BLOCK.finditer(encounters + "\n")]


def _tps(case: Case) -> float | None:
    """The PD-L1 tumour proportion score of the case's record, in percent (<1% -> 0)."""
    if case.record is None:
        return None
    for marker in case.record.biomarkers:
        if marker.name == "PD-L1":
            m = re.search(r"TPS\s*(<)?\s*(\d+(?:\.\d+)?)", marker.result)
            if m:
                return 0.0 if m.group(1) else float(m.group(2))
    return None


# ----------------------------------------------------------------------------- wrong direction


def wrong_direction(tuples: Iterable[CSSTuple]) -> dict[str, list[str]]:
    """Tuples whose pre-registered direction does not hold in the case's setting (review section 1)."""
    out: dict[str, list[str]] = {
        "A1/A2/C1 on non-metastatic gastric": [],
        "A4 where PD-L1 TPS < 50%": [],
        "E1 on ovarian": [],
        "A3 on cT1-2N0 HR+ breast before surgery (debatable)": [],
    }
    for t in tuples:
        case, iid = t.case, t.intervention.id
        if case.cancer_type == "gastric" and not case.metastatic and iid[:2] in ("A1", "A2", "C1"):
            out["A1/A2/C1 on non-metastatic gastric"].append(t.id)
        if iid.startswith("A4") and (_tps(case) if _tps(case) is not None else 100) < 50:
            out["A4 where PD-L1 TPS < 50%"].append(t.id)
        if iid.startswith("E1") and case.cancer_type == "ovarian":
            out["E1 on ovarian"].append(t.id)
        # "C3 on resected stage III colon" (review 1, debatable) was reversed by review 2: universal MMR testing holds
        # there too (see `scope_errors`).
        if iid.startswith("A3") and not case.resected and not case.metastatic and case.record is not None and "N0" in case.record.tnm:
            out["A3 on cT1-2N0 HR+ breast before surgery (debatable)"].append(t.id)
    return out


# ----------------------------------------------------------------------------- incoherent packets

_POSTOP = re.compile(r"(?i)healing well|post-?op f/u|post-operative visit|\bPOD \d|Tolerating diet, ambulating|Findings as dictated")
_SLN_RESULT = re.compile(r"(?i)\bSLN\s*\d+\s*/\s*\d+|sentinel[^.\n]{0,30}\b(?:positive|negative)\b")
_CLINICAL_SLN_N = re.compile(r"\bcN[1-3]a\b")
_TRASTUZUMAB = re.compile(r"(?i)trastuzumab|pertuzumab|T-DM1|T-DXd|TCHP|THP")
_KEYNOTE_522 = re.compile(r"(?i)KEYNOTE-522|pembrolizumab \+ carboplatin \+ paclitaxel")


def _first_metastatic_scan(t: CSSTuple) -> date | None:
    """The first radiology encounter of the counterfactual, after its operation, that reports metastatic disease."""
    blocks = encounter_blocks(t.counterfactual.sections.get("encounters", ""))
    operated = [when for when, heading, _ in blocks if heading.startswith("Operative note")]
    if not operated:
        return None
    for when, heading, text in blocks:
        if heading.startswith("Radiology") and when > max(operated) and re.search(r"(?i)consistent with metastatic", text):
            return when
    return None


def incoherent(tuples: Iterable[CSSTuple]) -> dict[str, list[str]]:
    """Counterfactual packets that contradict themselves (review section 2)."""
    out: dict[str, list[str]] = {
        "B1/B3 therapy before the scan that finds the recurrence": [],
        "D1 leaves the post-operative course": [],
        "D1 keeps a sentinel-node result or restages cN1a": [],
        "D2 Whipple for a body/tail pancreatic tumour": [],
        "D2 sentinel-node biopsy for clinically node-positive melanoma": [],
        "D2 sentinel-node biopsy alone for clinically node-positive breast, no neoadjuvant therapy": [],
        "A2 HER2-positive breast with a HER2-negative regimen and no HER2 therapy": [],
    }
    for t in tuples:
        case, iid, cf = t.case, t.intervention.id, t.counterfactual
        if iid[:2] in ("B1", "B3") and case.resected and case.metastatic:
            found = _first_metastatic_scan(t)
            start = case.board_date + timedelta(days=t.intervention.dates.get("start_date", 0))
            if found is None or start < found:
                out["B1/B3 therapy before the scan that finds the recurrence"].append(t.id)
        if iid.startswith("D1"):
            if _POSTOP.search(cf.text):
                out["D1 leaves the post-operative course"].append(t.id)
            if _SLN_RESULT.search(cf.text) or _CLINICAL_SLN_N.search(cf.text):
                out["D1 keeps a sentinel-node result or restages cN1a"].append(t.id)
        if iid.startswith("D2") and case.record is not None:
            procedures = cf.sections.get("procedures", "")
            if case.cancer_type == "pancreatic" and re.search(r"(?i)body|tail", case.record.primary_site) and re.search(
                r"(?i)Whipple|pancreaticoduodenectomy", procedures
            ):
                out["D2 Whipple for a body/tail pancreatic tumour"].append(t.id)
            if case.cancer_type == "melanoma" and re.search(r"N[1-3][bc]", case.record.tnm) and re.search(r"(?i)sentinel", procedures):
                out["D2 sentinel-node biopsy for clinically node-positive melanoma"].append(t.id)
            untreated = not any("neoadjuvant" in ln.setting for ln in case.record.treatment_lines)
            if case.cancer_type == "breast" and re.search(r"cT\d[a-d]?N[1-3]", case.record.tnm) and untreated and re.search(
                r"(?i)sentinel", procedures
            ):
                out["D2 sentinel-node biopsy alone for clinically node-positive breast, no neoadjuvant therapy"].append(t.id)
        if iid.startswith("A2") and case.cancer_type == "breast" and case.record is not None:
            history = [ln.regimen for ln in case.record.treatment_lines]
            systemic = [r for r in history if not re.search(r"(?i)letrozole|tamoxifen|anastrozole", r)]
            if any(_KEYNOTE_522.search(r) or not _TRASTUZUMAB.search(r) for r in systemic):
                out["A2 HER2-positive breast with a HER2-negative regimen and no HER2 therapy"].append(t.id)
    return out


# ----------------------------------------------------------------------------- baselines


def baseline_contradictions(cases: Iterable[Case]) -> dict[str, list[str]]:
    """Baseline packets that contradict themselves (review section 2, second row; section 3 'Minor')."""
    out: dict[str, list[str]] = {
        "metastatic at first diagnosis, then curative resection": [],
        "curative goals of care while metastatic": [],
        "R0 resection with a positive margin in the pathology": [],
    }
    for case in cases:
        record = case.record
        if record is None:
            continue
        blocks = encounter_blocks(case.sections.get("encounters", ""))
        if record.resection is not None and case.metastatic:
            before = [
                b for b in blocks
                if b[0] <= record.resection.date and re.search(r"(?i)consistent with (?:distant )?metastatic|\bM1|Stage IV", b[2])
            ]
            dx_line = case.sections.get("diagnoses", "").split("\n")[1] if "\n" in case.sections.get("diagnoses", "") else ""
            if before or (re.search(r"(?i)stage (?:IV|4)|M1", dx_line) and not re.search(r"(?i)recurren", dx_line)):
                out["metastatic at first diagnosis, then curative resection"].append(case.case_id)
        found = getattr(record, "metastasis_date", None)  # absent from records before cohort v2
        for when, _heading, text in blocks:
            metastatic_then = case.metastatic and (found is None or when >= found)
            if re.search(r"(?i)goals of care: cure", text) and metastatic_then:
                out["curative goals of care while metastatic"].append(case.case_id)
                break
        r = record.resection
        if r is not None and r.margin == "R0" and r.pathology and re.search(r"(?i)positive margin|margin positive", r.pathology):
            out["R0 resection with a positive margin in the pathology"].append(case.case_id)
    return out


# ----------------------------------------------------------------------------- labels


def _strong(case: Case, pattern: str) -> bool:
    return any(c.label == "strong" and re.search(pattern, c.treatment, re.I) for c in case.consensus)


def wrong_labels(cases: Iterable[Case]) -> dict[str, list[str]]:
    """Consensus labels their case's own facts contradict (review section 3)."""
    out: dict[str, list[str]] = {
        "persistent PSA after prostatectomy labelled surveillance": [],
        "persistent PSA after prostatectomy: salvage therapy strong without restaging": [],
        "sacituzumab strong with its criterion unmet": [],
        "HER2-low metastatic breast after chemotherapy without T-DXd strong": [],
    }
    for case in cases:
        record = case.record
        if record is None:
            continue
        if case.cancer_type == "prostate" and record.resection is not None and not case.metastatic:
            after = [lab.value for lab in record.labs if lab.name == "PSA" and lab.date > record.resection.date]
            if after and max(after) >= 0.2:
                if _strong(case, r"surveillance"):
                    out["persistent PSA after prostatectomy labelled surveillance"].append(case.case_id)
                if _strong(case, r"salvage") and not _strong(case, r"PSMA"):
                    out["persistent PSA after prostatectomy: salvage therapy strong without restaging"].append(case.case_id)
        if case.cancer_type == "breast" and _strong(case, r"sacituzumab"):
            lines = record.treatment_lines
            if len(lines) < 2 or not any("metastatic" in ln.setting for ln in lines):
                out["sacituzumab strong with its criterion unmet"].append(case.case_id)
        if case.cancer_type == "breast" and case.metastatic and case.prior_lines >= 1:
            her2 = next((b for b in record.biomarkers if b.name == "HER2"), None)
            low = her2 is not None and her2.status == "negative" and re.search(r"IHC [12]\+", her2.result)
            chemo = any(re.search(r"(?i)platin|taxel|capecitabine|eribulin", ln.regimen) for ln in record.treatment_lines)
            continuing = any(c.treatment.startswith("continue") for c in case.consensus)
            if low and chemo and not _strong(case, r"T-DXd|deruxtecan") and not continuing:
                out["HER2-low metastatic breast after chemotherapy without T-DXd strong"].append(case.case_id)
    return out


def counts(classes: dict[str, list[str]]) -> dict[str, int]:
    return {name: len(ids) for name, ids in classes.items()}


# ============================================================================= second review
# shared/reviews/clinical-review-2.md: staging arithmetic, incomplete structured events, two scopes and
# three histories. Each function finds every member of a class over the whole cohort or expansion.

_NODE_COUNT = re.compile(r"(?i)\((\d+)/(\d+)\s*(S?LN)\)|\bSLN\s*(\d+)/(\d+)\s*positive")
_TUMOUR_MARKERS = ("CEA", "CA 15-3", "CA 19-9", "CA-125", "LDH", "PSA")
NON_METASTATIC_CEILING: dict[str, float] = {"CEA": 20.0, "CA 15-3": 50.0, "CA 19-9": 500.0, "LDH": 250.0, "PSA": 100.0}
"""Upper end of a tumour marker in non-metastatic disease: above it the value suggests distant disease (CEA
> 20 ng/mL, CA 15-3 > 50 U/mL, CA 19-9 > 500 U/mL (NCCN Pancreatic: staging laparoscopy), LDH above its
upper limit (melanoma: AJCC 8 uses it for M1 only), PSA > 100 ng/mL). CA-125 has none: stage III ovarian
cancer is peritoneal disease with CA-125 in the hundreds or thousands."""


def node_count(pathology: str | None) -> tuple[int, int, bool] | None:
    """(positive, examined, sentinel) of the node count a pathology text states, if any."""
    m = _NODE_COUNT.search(pathology or "")
    if m is None:
        return None
    if m.group(1) is not None:
        return int(m.group(1)), int(m.group(2)), m.group(3).upper() == "SLN"
    return int(m.group(4)), int(m.group(5)), True


def _first_staging_scan(case: Case) -> str | None:
    for _when, heading, text in encounter_blocks(case.sections.get("encounters", "")):
        if heading.startswith("Radiology") and "IMPRESSION" in text:
            return text
    return None


def staging_contradictions(cases: Iterable[Case]) -> dict[str, list[str]]:
    """Baselines whose staging contradicts the record it is stated from (review 2, section 3)."""

    out: dict[str, list[str]] = {
        "staging CT reports suspicious nodes before a sentinel-node biopsy": [],
        "positive-node count contradicts the N category": [],
        "stage group is not the AJCC 8 group of its TNM": [],
        "M1 subcategory is not the one of the metastatic sites": [],
        "post-neoadjuvant (yp) staging printed as the stage": [],
        "tumour marker at a metastatic level in non-metastatic disease": [],
    }
    for case in cases:
        record = case.record
        if record is None:
            continue
        r = record.resection
        scan = _first_staging_scan(case)
        # A sentinel-node biopsy is for clinically node-negative disease; after neoadjuvant therapy it is also done for
        # cN1 disease that responded (ACOSOG Z1071; NCCN Breast), so a node-positive staging CT is right there.
        neoadjuvant = any("neoadjuvant" in ln.setting for ln in record.treatment_lines)
        sentinel = r is not None and re.search(r"(?i)sentinel", r.procedure) and not neoadjuvant
        if sentinel and scan and re.search(r"(?i)enlarged regional LN suspicious", scan):
            out["staging CT reports suspicious nodes before a sentinel-node biopsy"].append(case.case_id)
        count = node_count(r.pathology if r else None)
        if count is not None and r is not None and r.pathology:
            try:
                written = staging.parse_tnm(r.pathology)
                method = "sentinel" if count[2] else "pathologic"
                if not staging.n_agrees_with_count(case.cancer_type, written.n, count[0], method):  # type: ignore[arg-type]
                    out["positive-node count contradicts the N category"].append(case.case_id)
            except staging.StagingError:
                pass
        try:
            expected_now = staging.current_stage(case.cancer_type, record)
            expected_dx = staging.diagnostic_stage(case.cancer_type, record)
        except staging.StagingError:
            expected_now = expected_dx = None
        stated_dx = record.initial_stage if record.metastasis_date is not None else case.stage
        if expected_dx is not None and (stated_dx != expected_dx or case.stage != expected_now):
            out["stage group is not the AJCC 8 group of its TNM"].append(case.case_id)
        m = re.search(r"M1([a-d]?)", record.tnm)
        if record.metastatic_sites and m is not None and m.group(1):
            if staging.m_category(case.cancer_type, list(record.metastatic_sites)) != m.group(0):
                out["M1 subcategory is not the one of the metastatic sites"].append(case.case_id)
        if re.search(r"\byp[T][^\s,;()]*(?:\s*ypN[^\s,;()]*)?\s*\((?:AJCC\s*)?Stage", case.packet):
            out["post-neoadjuvant (yp) staging printed as the stage"].append(case.case_id)
        for lab in record.labs:
            ceiling = NON_METASTATIC_CEILING.get(lab.name)
            metastatic_then = case.metastatic and (record.metastasis_date is None or lab.date >= record.metastasis_date)
            if ceiling is not None and not metastatic_then and lab.value > ceiling:
                out["tumour marker at a metastatic level in non-metastatic disease"].append(case.case_id)
                break
    return out


_LAB_BLOCK = re.compile(r"^Collected (\d{4}-\d{2}-\d{2})\n((?:  .*\n?)*)", re.M)


def marker_series(labs_section: str, name: str) -> list[tuple[date, float]]:
    """(date, value) of one marker in a rendered LABS section, in date order."""
    out = []
    for m in _LAB_BLOCK.finditer(labs_section + "\n"):
        v = re.search(rf"(?<![\w-]){re.escape(name)} (\d+(?:\.\d+)?) ", m.group(2))
        if v:
            out.append((date.fromisoformat(m.group(1)), float(v.group(1))))
    return sorted(out)


def event_gaps(tuples: Iterable[CSSTuple]) -> dict[str, list[str]]:
    """Structured counterfactuals whose injected event lacks the evidence clinicians document it with (review 2, section 2)."""
    out: dict[str, list[str]] = {
        "B2 tumour marker falls after the injected progression": [],
        "B3 without castrate testosterone and a rising PSA": [],
        "A2 HER2-positive breast treated with endocrine therapy alone": [],
        "E1 CT after a nodal dissection reports the regional nodes it removed": [],
    }
    endocrine_only = re.compile(r"(?i)^(?:(?:letrozole|anastrozole|exemestane|tamoxifen|fulvestrant|aromatase inhibitor)\b[^+]*)$")
    for t in tuples:
        case, iid, cf = t.case, t.intervention.id, t.counterfactual
        if iid.startswith("B2") and case.record is not None:
            name = next((lab.name for lab in case.record.labs if lab.name in _TUMOUR_MARKERS), None)
            scan = case.board_date + timedelta(days=t.intervention.dates.get("scan_date", -10))
            series = marker_series(cf.sections.get("labs", ""), name) if name else []
            before = [v for d, v in series if d < scan]
            after = [v for d, v in series if d >= scan]
            if before and (not after or min(after) < before[-1]):
                out["B2 tumour marker falls after the injected progression"].append(t.id)
        if iid.startswith("B3"):
            labs = cf.sections.get("labs", "")
            start = case.board_date + timedelta(days=t.intervention.dates.get("start_date", -170))
            psa = [v for d, v in marker_series(labs, "PSA") if d >= start]
            rising = len(psa) >= 3 and psa[-3] < psa[-2] < psa[-1]
            if not re.search(r"(?i)testosterone[^\n]*(?:castrate|<\s*1\.7|\b0\.\d)", labs) or not rising:
                out["B3 without castrate testosterone and a rising PSA"].append(t.id)
        if iid.startswith("A2") and case.cancer_type == "breast" and case.record is not None:
            if any(endocrine_only.match(ln.regimen.strip()) for ln in case.record.treatment_lines):
                out["A2 HER2-positive breast treated with endocrine therapy alone"].append(t.id)
        r = case.record.resection if case.record is not None else None
        if iid.startswith("E1") and r is not None and re.search(r"(?i)lymph|dissection|D2|sentinel", r.procedure):
            after = [text for when, heading, text in encounter_blocks(cf.sections.get("encounters", ""))
                     if heading.startswith("Radiology") and when > r.date]
            if any(re.search(r"(?i)enlarged regional LN suspicious", text) for text in after):
                out["E1 CT after a nodal dissection reports the regional nodes it removed"].append(t.id)
    return out


def scope_errors(tuples: Iterable[CSSTuple], cases: Iterable[Case], catalog) -> dict[str, list[str]]:  # noqa: ANN001
    """Tuples scored where the expected change cannot be seen, and tuples wrongly left out (review 2, section 1)."""
    out: dict[str, list[str]] = {
        "E1 on resected EGFR/ALK NSCLC with an adjuvant TKI (the metastatic drug is the same)": [],
        "C3 excluded on resected stage III colon (universal MMR testing, ATOMIC)": [],
    }
    for t in tuples:
        case = t.case
        if t.intervention.id.startswith("E1") and case.cancer_type == "nsclc" and case.resected and (
            case.marker_status("EGFR") == "positive" or case.marker_status("ALK") == "positive"
        ):
            out["E1 on resected EGFR/ALK NSCLC with an adjuvant TKI (the metastatic drug is the same)"].append(t.id)
    c3 = next((iv for iv in catalog.interventions if iv.id.startswith("C3")), None)
    for case in cases:
        if c3 is not None and case.cancer_type == "colorectal" and case.resected and not case.metastatic and case.stage.startswith("III"):
            if c3.applies_to.matches(case) and c3.excluded_by(case):
                out["C3 excluded on resected stage III colon (universal MMR testing, ATOMIC)"].append(f"{case.case_id}:{c3.id}")
    return out


_AI = re.compile(r"(?i)letrozole|anastrozole|exemestane|aromatase")
_OFS = re.compile(r"(?i)ovarian (?:function )?suppression|\bOFS\b|goserelin|leuprorelin|triptorelin|oophorectomy")
_ENDOCRINE = re.compile(r"(?i)letrozole|anastrozole|exemestane|tamoxifen|fulvestrant|aromatase|endocrine")


def history_errors(cases: Iterable[Case]) -> dict[str, list[str]]:
    """Histories and labels that contradict the case's own markers or menopausal status (review 2, sections 3-4)."""
    out: dict[str, list[str]] = {
        "HR+/HER2+ early breast cancer with no adjuvant endocrine therapy": [],
        "aromatase inhibitor before menopause without ovarian suppression": [],
        "premenopausal node-positive HR+ breast: tamoxifen alone strong": [],
    }
    for case in cases:
        record = case.record
        if record is None or case.cancer_type != "breast":
            continue
        hr = "positive" in (case.marker_status("ER"), case.marker_status("PR"))
        her2 = case.marker_status("HER2") == "positive"
        regimens = [ln.regimen for ln in record.treatment_lines]
        curative = [ln.regimen for ln in record.treatment_lines if "metastatic" not in ln.setting]
        if hr and her2 and record.metastasis_date is not None and curative and not any(_ENDOCRINE.search(r) for r in curative):
            out["HR+/HER2+ early breast cancer with no adjuvant endocrine therapy"].append(case.case_id)
        premenopausal = case.age < 50 and not re.search(r"(?i)post-?menopausal", case.packet)
        if premenopausal and any(_AI.search(r) and not _OFS.search(r) for r in regimens):
            out["aromatase inhibitor before menopause without ovarian suppression"].append(case.case_id)
        node_positive = record.resection is not None and re.search(r"(?i)\by?pN[1-3]", record.resection.pathology or "")
        strong_tamoxifen = any(c.label == "strong" and re.fullmatch(r"(?i)tamoxifen", c.treatment.strip()) for c in case.consensus)
        if premenopausal and hr and node_positive and not case.metastatic and strong_tamoxifen:
            out["premenopausal node-positive HR+ breast: tamoxifen alone strong"].append(case.case_id)
    return out


_USUAL_WEIGHT = re.compile(r"Usual weight ~(\d+) kg")
_PRESENTATION_SITE: tuple[tuple[str, str, str], ...] = (
    ("pancreatic", r"(?i)body|tail", r"(?i)painless jaundice"),
    ("colorectal", r"(?i)cecum|ascending|transverse", r"(?i)bright red blood per rectum"),
    ("gastric", r"(?i)antrum|body", r"(?i)dysphagia"),
)
"""(type, primary sites, presentation that does not fit them): jaundice is a pancreatic-head symptom (the bile duct);
bright red rectal bleeding comes from the left colon and rectum; dysphagia from the cardia and junction."""


def narrative_contradictions(cases: Iterable[Case]) -> dict[str, list[str]]:
    """Narrative text that disagrees with the record's numbers or site (review 2, section 3, realism defects)."""
    out: dict[str, list[str]] = {
        "dietitian's usual weight more than 8 kg from every measured weight": [],
        "weight loss in the history while the measured weights rise": [],
        "anaemia in the history with a normal haemoglobin": [],
        "asymptomatic presentation with an opioid for cancer pain at diagnosis": [],
        "presentation does not fit the primary site": [],
        "'weight stable' while the measured weights fall": [],
    }
    for case in cases:
        record = case.record
        if record is None:
            continue
        text = case.packet
        weights = [v.weight_kg for v in sorted(record.vitals, key=lambda v: v.date)]
        usual = _USUAL_WEIGHT.search(text)
        if usual and weights and min(abs(float(usual.group(1)) - w) for w in weights) > 8:
            out["dietitian's usual weight more than 8 kg from every measured weight"].append(case.case_id)
        if re.search(r"(?i)\d+ kg (?:unintentional )?weight loss|weight loss over", text) and len(weights) > 1 and weights[-1] > weights[0]:
            out["weight loss in the history while the measured weights rise"].append(case.case_id)
        if re.search(r"(?i)iron-deficiency anemia|Hgb low", text):
            first = min((lab for lab in record.labs if lab.name == "Hgb"), key=lambda lab: lab.date, default=None)
            if first is not None and first.value >= 12.0:
                out["anaemia in the history with a normal haemoglobin"].append(case.case_id)
        opioid = any(m.indication == "cancer-related pain" for m in record.medications)
        if opioid and record.metastasis_date is None and re.search(r"(?i)Pt asymptomatic", text):
            out["asymptomatic presentation with an opioid for cancer pain at diagnosis"].append(case.case_id)
        for cancer_type, sites, symptom in _PRESENTATION_SITE:
            if case.cancer_type == cancer_type and re.search(sites, record.primary_site) and re.search(symptom, text):
                out["presentation does not fit the primary site"].append(case.case_id)
        if re.search(r"Weight stable", text) and len(weights) > 1 and weights[-1] < weights[0] - 3:
            out["'weight stable' while the measured weights fall"].append(case.case_id)
    return out
