"""Import a clinician's own packets: text in, ten-section cases out, every inference listed.

A clinician has packet text, not this project's ten-section JSON. `import_packet` splits
the text into the ten sections by its headings (or keeps it whole in `overview` and says
so), infers the fields the applicability filters read with the catalog's own vocabulary
(the residue implications that recognise HER2, ER/PR, PD-L1 status, a resection, treatment
history), and reports what it inferred, for the user to confirm, and what it could not.
Nothing it cannot read is guessed: a field it cannot infer is listed, and a case that
lacks a required field is written to a to-do file instead of the cases file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from clinical_cf.catalog.css.dates import find_dates, numeric_order
from clinical_cf.catalog.css.interventions import Catalog
from clinical_cf.catalog.css.residue import implication_hits
from clinical_cf.catalog.css.schema import SECTIONS, Case
from clinical_cf.catalog.css.sentences import logical_lines, statements
from clinical_cf.core.errors import CatalogError
from clinical_cf.core.loading import load_json_line, load_text, read_text_checked, split_records

# Heading words clinicians use, per section (matched case-insensitively on a heading line).
SECTION_HEADINGS: dict[str, tuple[str, ...]] = {
    "demographics": ("demographics", "patient", "patient details", "social history", "identification"),
    "diagnoses": (
        "diagnoses",
        "diagnosis",
        "problem list",
        "problems",
        "history of present illness",
        "hpi",
        "oncologic history",
        "pathology",
        "staging",
    ),
    "biomarkers": ("biomarkers", "molecular", "markers", "receptor status", "immunohistochemistry", "ihc", "genomics", "ngs"),
    "medications": ("medications", "meds", "drugs", "current medications", "treatment history", "systemic therapy", "oncologic treatment"),
    "procedures": ("procedures", "surgery", "surgical history", "operations", "interventions"),
    "encounters": ("encounters", "notes", "clinic notes", "progress notes", "visits", "correspondence", "letters", "course", "handover"),
    "labs": ("labs", "laboratory", "bloods", "results", "tumour markers", "tumor markers"),
    "vitals": ("vitals", "vital signs", "obs", "observations"),
    "allergies": ("allergies", "allergy", "adverse reactions"),
    "overview": ("overview", "summary", "assessment", "impression", "board question", "question", "plan", "assessment and plan", "a/p"),
}
PLAN_HEADINGS = ("plan", "assessment and plan", "a/p", "question", "board question")
"""Headings whose text is the board's plan or question; it keeps a "Plan:" cue in the packet."""
_HEADING = re.compile(r"^\s*(?:=+\s*|#+\s*|\*\*)?([A-Za-z][A-Za-z /&-]{1,40}?)(?:\s*=+|\*\*)?\s*:?\s*$")
_INLINE_HEADING = re.compile(r"^\s*([A-Za-z][A-Za-z /&-]{1,30}?)\s*:\s+(\S.*)$")

CANCER_WORDS: dict[str, str] = {
    "breast": r"\bbreast\b|\bIDC\b|\bILC\b|\bDCIS\b|\bMBC\b|\bTNBC\b|\bmastectomy\b|\blumpectomy\b",
    "nsclc": r"\bNSCLC\b|\blung\b|\blobe\b|\bpulmonary\b|\bRUL\b|\bRLL\b|\bLUL\b|\bLLL\b|\bRML\b|\bEBUS\b",
    "colorectal": r"\bcolon\b|\bcolonic\b|\brect(?:al|um)\b|\bsigmoid\b|\bcolorectal\b|\bm?CRC\b|\bcaecal\b|\bcecal\b|\bTME\b",
    "pancreatic": r"\bpancrea\w*",
    "gastric": r"\bgastric\b|\bstomach\b|\bGEJ\b|\bgastro-?oesophageal\b|\bgastroesophageal\b|\bgastrectomy\b",
    "melanoma": r"\bmelanoma\b|\bBreslow\b",
    "ovarian": r"\bovar\w*|\bHGSOC\b|\bfallopian\b",
    "prostate": r"\bprostat\w*|\bRALP\b|\bGleason\b",
    "renal": r"\brenal cell\b|\bRCC\b|\bnephrectomy\b|\bkidney\b|\bISUP\b",
    "bladder": r"\burothelial\b|\bbladder\b|\bTURBT\b|\bcystectomy\b|\bdetrusor\b",
    "head_and_neck": r"\boropharyn\w*|\btonsil\w*|\bhead (?:&|and) neck\b|\blaryn\w*|\bHNSCC\b"
    "|\bnasopharyn\\w*|\boral cavity\b|\bhypopharyn\\w*",
    "endometrial": r"\bendometri\w*|\buterine\b|\bcorpus uteri\b",
    "cervical": r"\bcervi(?:x|cal) (?:cancer|carcinoma|mass|tumou?r)\b|\bcervix\b|\bLLETZ\b|\bcone biopsy\b",
    "hepatocellular": r"\bhepatocellular\b|\bHCC\b|\bBCLC\b",
    "oesophageal": r"\bo?esophag(?:us|eal)\b(?! ?junction)|\bo?esophagectomy\b",
    "sarcoma": r"\bsarcoma\b",
    "mesothelioma": r"\bmesothelioma\b",
    "thyroid": r"\bthyroid (?:cancer|carcinoma)\b|\bpapillary thyroid\b",
    "sclc": r"\bsmall[- ]cell lung\b|\bSCLC\b",
}
"""Words that name each cancer type (an open vocabulary: a type not listed here is asked for).
A mention inside a metastasis phrase ("lung metastases") does not count for that site."""
_METASTASIS_CONTEXT = re.compile(r"^\s*(?:(?:and|,)\s*\w+\s+)?(?:metasta\w*|mets|nodules|deposits|lesions?)\b", re.IGNORECASE)
_METASTASIS_BEFORE = re.compile(r"\b(?:metasta\w*|mets|spread)\s+(?:to|in)\s+(?:the\s+)?(?:\w+\s*(?:,|and)\s*)?$", re.IGNORECASE)

# Planned, proposed or discussed, not performed: a statement with one of these cues is not
# evidence of an operation done or a line given ("radical cystectomy after neoadjuvant
# chemotherapy", "We plan to start first line ...").
PLANNING_CUE = re.compile(
    r"(?i)\b(?:plan\w*|propos\w*|intend\w*|will|would|to be|to undergo|consent\w*|discuss\w*|candidate|"
    r"referr\w*|await\w*|pending|scheduled|listed|booked|options?|consider\w*|then|recommend\w*|"
    r"offer\w*|outcome|question|suitable|prefer\w*|for (?:radical|surgery|resection)|MDT:|MDT question)\b|\?"
)
OPERATION = re.compile(
    r"(?i)\b(?:\w*ectom(?:y|ies)|resect(?:ion|ed)|Whipple|wide local excision|WLE|debulking|cytoreduct\w*|"
    r"TME|TLH|TAH|RALP|lobectomy|pneumonectomy|Hartmann'?s)\b"
)
DIAGNOSTIC_ONLY = re.compile(r"(?i)\b(?:biops\w*|TURBT|LLETZ|cone|polypectomy|EBUS|OGD|colonoscopy|gastroscopy|cystoscopy)\b")
SYSTEMIC = re.compile(
    r"(?i)\b(?:\w+mab|\w+(?:tinib|rafenib|lisib|ciclib|parib|lutamide)|abiraterone|enzalutamide|androgen deprivation|ADT|"
    r"degarelix|leuprorelin|goserelin|chemo\w*|FOLF\w+|CAPOX|XELOX|carboplatin|cisplatin|oxaliplatin|paclitaxel|docetaxel|"
    r"gemcitabine|pemetrexed|capecitabine|letrozole|anastrozole|tamoxifen|fulvestrant)\b"
)
GIVEN_CUE = re.compile(r"(?i)\b(?:started|commenced|began|begun|ongoing|since|on|received|completed|added|cycles?|C\d+D\d+|tolerat\w*)\b")


@dataclass
class Inference:
    """One field's value and the text it came from; `weak` when the text supports it only indirectly."""

    value: Any
    evidence: str
    weak: bool = False


def _quote(text: str, limit: int = 110, around: str | None = None) -> str:
    """The statement quoted, cut to `limit` characters around the words that decided (`around`)."""
    text = " ".join(text.split())
    start = 0
    if around and len(text) > limit:
        at = text.find(" ".join(around.split()))
        if at > limit // 2:
            start = min(at - limit // 3, len(text) - limit)
    cut = text[start : start + limit]
    return f'"{"…" if start else ""}{cut}{"…" if start + limit < len(text) else ""}"'


@dataclass
class ImportReport:
    case_id: str
    source: str
    inferred: dict[str, Any] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    case: Case | None = None
    draft: dict[str, Any] = field(default_factory=dict)
    evidence: dict[str, str] = field(default_factory=dict)
    """Per inferred field, the quoted text it came from."""
    weak: list[str] = field(default_factory=list)
    """Fields inferred only indirectly (approximate stage, pronoun-only sex, ...): confirm them."""


def split_sections(text: str) -> tuple[dict[str, str], list[str]]:
    """Ten sections from headings; without any recognised heading, all text goes to `overview`."""
    by_heading = {word: name for name, words in SECTION_HEADINGS.items() for word in words}
    sections: dict[str, list[str]] = {name: [] for name in SECTIONS}
    current: str | None = None
    preamble: list[str] = []
    found = 0
    for line in text.splitlines():
        heading = _HEADING.match(line)
        inline = _INLINE_HEADING.match(line)
        if heading and heading.group(1).strip().lower() in by_heading:
            current = by_heading[heading.group(1).strip().lower()]
            found += 1
            if heading.group(1).strip().lower() in PLAN_HEADINGS:
                sections[current].append("Plan:")
            continue
        if inline and inline.group(1).strip().lower() in by_heading:
            current = by_heading[inline.group(1).strip().lower()]
            found += 1
            word = inline.group(1).strip().lower()
            sections[current].append(("Plan: " if word in PLAN_HEADINGS else "") + inline.group(2))
            continue
        (sections[current] if current else preamble).append(line)
    notes = []
    if not found:
        return {name: (text.strip() if name == "overview" else "") for name in SECTIONS}, [
            "no section headings recognised: the whole text is kept in one section (overview)"
        ]
    if any(line.strip() for line in preamble):
        sections["overview"] = preamble + sections["overview"]
        notes.append("text before the first heading was put in overview")
    empty = [name for name in SECTIONS if not any(line.strip() for line in sections[name])]
    if empty:
        notes.append(f"no text for: {', '.join(empty)}")
    return {name: "\n".join(lines).strip() for name, lines in sections.items()}, notes


def _hits(catalog: Catalog, name: str, text: str, kinds: tuple[str, ...] | None = None) -> bool:
    implication = catalog.implications[name]
    return any(
        kinds is None or term.kind in kinds for line in text.splitlines() for term, _ in implication_hits(implication, line)
    )


def _first(statements: list[str], test) -> str | None:
    return next((s for s in statements if test(s)), None)


def _planned(statement: str) -> bool:
    return bool(PLANNING_CUE.search(statement))


def _cancer_type(statements: list[str]) -> Inference | None:
    scores: dict[str, int] = {}
    first_seen: dict[str, str] = {}
    for st in statements:
        for cancer, pattern in CANCER_WORDS.items():
            for m in re.finditer(pattern, st, re.IGNORECASE):
                if _METASTASIS_CONTEXT.match(st[m.end():]) or _METASTASIS_BEFORE.search(st[: m.start()]):
                    continue  # "lung metastases" names a site of spread, not the primary
                scores[cancer] = scores.get(cancer, 0) + 1
                first_seen.setdefault(cancer, st)
    if not scores:
        return None
    ranked = sorted(scores.items(), key=lambda kv: -kv[1])
    best, count = ranked[0]
    weak = len(ranked) > 1 and ranked[1][1] * 2 > count  # a close second: confirm
    others = f"; also {', '.join(f'{c} ({n})' for c, n in ranked[1:3])}" if len(ranked) > 1 else ""
    return Inference(best, f"{count} mention(s), first {_quote(first_seen[best])}{others}", weak)


_FEMALE = re.compile(
    r"(?i)\b(?:female|woman|lady|Mrs|Ms|Miss)\b|\((?-i:F)\)|\bSex\s*:\s*(?:F|female)\b|(?<![\w-])\d{2}\s*(?:y/?o|yo|y\.o\.)?\s*,?\s*(?-i:F)\b|\|\s*(?-i:F)\s*\|"
)
_MALE = re.compile(
    r"(?i)\b(?:male|man|gentleman|Mr)\b|\((?-i:M)\)|\bSex\s*:\s*(?:M|male)\b|(?<![\w-])\d{2}\s*(?:y/?o|yo|y\.o\.)?\s*,?\s*(?-i:M)\b|\|\s*(?-i:M)\s*\|"
)
_PRONOUN_F = re.compile(r"(?i)\b(?:she|her)\b")
_PRONOUN_M = re.compile(r"(?i)\b(?:he|his|him)\b")


def _sex(statements: list[str], text: str, cancer_type: str | None) -> Inference | None:
    female = _first(statements, _FEMALE.search)
    male = _first(statements, _MALE.search)
    if female and male:
        return None  # conflicting statements: ask
    if female or male:
        st = female or male
        m = (_FEMALE if female else _MALE).search(st)  # type: ignore[arg-type]
        return Inference("F" if female else "M", _quote(st, around=m.group(0) if m else None))  # type: ignore[arg-type]
    if cancer_type == "prostate":
        return Inference("M", "prostate cancer")
    if cancer_type in ("ovarian", "endometrial", "cervical"):
        return Inference("F", f"{cancer_type} cancer")
    she, he = _first(statements, _PRONOUN_F.search), _first(statements, _PRONOUN_M.search)
    if bool(she) != bool(he):
        return Inference("F" if she else "M", f"pronoun only: {_quote(she or he)}", weak=True)  # type: ignore[arg-type]
    return None


_AGE_PATTERNS = (
    r"(?i)\b(\d{2})[- ]?(?:years?[- ]old|year-old|yrs?(?: old)?|y/?o|yo|y\.o\.)",
    r"(?i)\baged\s+(\d{2})\b",
    r"(?i)\bAge\s*:\s*(\d{2})\b",
    r"(?i)\b(?:male|female|man|woman|gentleman|lady)\s*,\s*(\d{2})\b",
    r"(?i)\b(?:19|20)\d{2}\s*/\s*(\d{2})\b",  # "DOB 1961 / 64"
    r"(?<![\w/.-])(\d{2})\s*,?\s*\(?(?-i:[MF])\)?(?![\w/])",  # "63 F", "47F", "64 (F)"
    r"\|\s*(?-i:[MF])\s*\|\s*(\d{2})\s*\|",  # "| F | 45 |"
    r"(?i)\b(?:Mr|Mrs|Ms|Miss)\b[^.;\d]{0,25}?,\s*(\d{2})\s*,",  # "Mr P (synthetic), 68,"
)


def _age(statements: list[str]) -> Inference | None:
    for pattern in _AGE_PATTERNS:
        for st in statements:
            m = re.search(pattern, st)
            if m and 18 <= int(m.group(1)) <= 100:
                return Inference(int(m.group(1)), _quote(st, around=m.group(0)))
    return None


_STAGE = re.compile(r"(?i)\b(?:stage|FIGO|AJCC)\s*(?:stage\s*)?[:=]?\s*(IV|I{1,3}|[1-4])([A-C])?\d?\b")
_TNM = re.compile(r"\b[cpy]{0,2}T([0-4isx])[a-d]?\s*[cpy]{0,2}N([0-3x])[a-c]?\s*(?:[cp]?M([01])[a-d]?)?")
_M1 = re.compile(r"(?<![A-Za-z])[cp]?M1[a-d]?\b")
_M0 = re.compile(r"(?<![A-Za-z])[cp]?M0\b")
_METASTATIC = re.compile(r"(?i)\bmetastases\b|\bmetastatic\b|\bmets\b")
_NO_METASTASES = re.compile(
    r"(?i)\b(?:no|without|negative for)\s+(?:evidence of\s+)?(?:distant\s+)?(?:metasta\w*|mets|spread|disease)\b|\bnon-?metastatic\b|\bM0\b"
)


def _stage(statements: list[str]) -> Inference | None:
    for st in statements:
        m = _STAGE.search(st)
        if m:
            roman = {"1": "I", "2": "II", "3": "III", "4": "IV"}.get(m.group(1), m.group(1).upper())
            return Inference(roman + (m.group(2) or "").upper(), _quote(st, around=m.group(0)))
    for st in statements:
        tnm = _TNM.search(st)
        if tnm:
            t, n, m_ = tnm.group(1), tnm.group(2), tnm.group(3)
            if m_ == "1":
                return Inference("IV", f"M1 in {_quote(st, around=tnm.group(0))}")
            if n not in ("0", "x"):
                return Inference("III", f"node-positive TNM in {_quote(st)} (approximate: confirm the stage group)", weak=True)
            group = "II" if t in ("3", "4") else "I"
            return Inference(group, f"TNM in {_quote(st)} (approximate: confirm the stage group)", weak=True)
    return None


def _metastatic(statements: list[str], stage: Inference | None) -> Inference | None:
    if stage is not None and not stage.weak:
        return Inference(stage.value.startswith("IV"), f"from the stage ({stage.evidence})")
    m1 = _first(statements, _M1.search)
    if m1:
        return Inference(True, _quote(m1))
    denial = _first(statements, _NO_METASTASES.search)
    spread = _first(statements, lambda s: bool(_METASTATIC.search(s)) and not _NO_METASTASES.search(s) and not _planned(s))
    if spread and not denial:
        return Inference(True, _quote(spread))
    if denial and not spread:
        return Inference(False, _quote(denial))
    if stage is not None:
        return Inference(stage.value.startswith("IV"), f"from the stage ({stage.evidence})", weak=True)
    return None  # not settled by the text: ask


def _resected(catalog: Catalog, statements: list[str]) -> Inference | None:
    """Performed, not planned: an operation in a statement without a planning cue, diagnostic procedures excepted."""
    for st in statements:
        ops = [m for m in OPERATION.finditer(st) if not DIAGNOSTIC_ONLY.search(st[max(0, m.start() - 12) : m.end() + 12])]
        if ops and not _planned(st) and not _hits(catalog, "unresected", st, ("status",)):
            return Inference(True, f"performed: {_quote(st, around=ops[0].group(0))}")
    unresected = _first(statements, lambda s: _hits(catalog, "unresected", s, ("status",)))
    if unresected:
        return Inference(False, _quote(unresected))
    planned = _first(statements, lambda s: bool(OPERATION.search(s)) and _planned(s))
    if planned:
        op = OPERATION.search(planned)
        return Inference(False, f"planned, not performed: {_quote(planned, around=op.group(0) if op else None)}")
    if not any(OPERATION.search(s) for s in statements):
        return Inference(False, "no operation is named anywhere in the packet", weak=True)
    return None


def _markers(catalog: Catalog, text: str) -> dict[str, str]:
    markers: dict[str, str] = {}
    if _hits(catalog, "her2_positive", text):
        markers["HER2"] = "positive"
    elif _hits(catalog, "her2_negative", text):
        markers["HER2"] = "negative"
    er = re.search(r"\b(?:ER|estrogen receptor|oestrogen receptor)\b[^.\n;|]{0,15}?((?:<|>)?\s*\d{1,3}\s*%)", text, re.IGNORECASE)
    if er:
        markers["ER"] = re.sub(r"\s+", "", er.group(1))
    elif _hits(catalog, "hormone_receptor_positive", text):
        markers["ER"] = "positive"
    elif re.search(
        r"\b(?:ER|HR)\s*-|(?i:\b(?:ER|estrogen receptor|oestrogen receptor)\b[^.\n;|]{0,10}negative)|(?i:triple[- ]negative|TNBC)", text
    ):
        markers["ER"] = "negative"
    pr = re.search(r"\b(?:PR|PgR|progesterone receptor)\b[^.\n;|]{0,15}?((?:<|>)?\s*\d{1,3}\s*%)", text, re.IGNORECASE)
    if pr:
        markers["PR"] = re.sub(r"\s+", "", pr.group(1))
    pdl1 = re.search(r"(?i)\bPD-?L1\b[^.\n;|]{0,40}?((?:<|>|≥|>=)?\s*\d{1,3}\s*%)", text)
    if pdl1:
        markers["PD-L1"] = re.sub(r"\s+", "", pdl1.group(1)).replace("≥", "").replace(">=", "").replace(">", "")
    ki67 = re.search(r"(?i)\bKi-?67\b[^.\n;|]{0,10}?(\d{1,3}\s*%)", text)
    if ki67:
        markers["Ki-67"] = re.sub(r"\s+", "", ki67.group(1))
    for name, pos, neg in (
        (
            "EGFR",
            r"EGFR[^.\n;|]{0,20}(?:exon|L858R|del|mutat|positive|detected)",
            r"EGFR[^.\n;|]{0,20}(?:wild[- ]?type|wt\b|negative|not detected)",
        ),
        ("ALK", r"ALK[^.\n;|]{0,20}(?:rearrang|fusion|positive|detected)", r"ALK[^.\n;|]{0,20}(?:negative|not detected|no rearr)"),
        (
            "KRAS",
            r"\bK?RAS[^.\n;|]{0,15}(?:G1[23]|Q61|mutat|mutant|positive)",
            r"\bK?RAS[^.\n;|]{0,15}(?:wild[- ]?type|wt\b|negative|not detected)",
        ),
        (
            "BRAF",
            r"BRAF[^.\n;|]{0,15}(?:V600E?|mutat|positive|detected)(?![^.\n;|]{0,12}not detected)",
            r"BRAF[^.\n;|]{0,20}(?:wild[- ]?type|wt\b|negative|not detected)",
        ),
        ("MSI", r"\bMSI-?H\b|\bdMMR\b|mismatch repair deficien", r"\bMSS\b|\bpMMR\b|MMR proficient|mismatch repair proficient"),
        (
            "BRCA1",
            r"BRCA1[^.\n;|]{0,20}(?:pathogenic|mutat|positive)(?![^.\n;|]{0,5}variant not)",
            r"(?:no|not)\b[^.\n;|]{0,20}BRCA1|BRCA1[^.\n;|]{0,20}(?:negative|wild)",
        ),
    ):
        if re.search(neg, text, re.IGNORECASE):
            markers[name] = "negative"
        elif re.search(pos, text, re.IGNORECASE):
            markers[name] = "positive"
    if re.search(r"(?i)(?:no|not)\b[^.\n;|]{0,25}BRCA1/2", text):
        markers.setdefault("BRCA1", "negative")
        markers.setdefault("BRCA2", "negative")
    return markers


_ORDINALS = {"first": 1, "1st": 1, "1l": 1, "second": 2, "2nd": 2, "2l": 2, "third": 3, "3rd": 3, "3l": 3, "fourth": 4, "4th": 4}
_ORDINAL = re.compile(r"(?i)\b(first|1st|second|2nd|third|3rd|fourth|4th)[- ]line\b|\b([1-4]L)\b")


def _prior_lines(catalog: Catalog, statements: list[str], metastatic: Inference | None) -> Inference | None:
    naive = _first(statements, lambda s: _hits(catalog, "treatment_naive", s, ("history",)))
    given = [s for s in statements if not _planned(s)]
    found = [
        (_ORDINALS[w.lower()], st) for st in given for pair in _ORDINAL.findall(st) for w in pair if w
    ]
    if found:
        top, st = max(found, key=lambda f: f[0])
        # A line that is running has been given too: "on first-line osimertinib" is one line, not treatment-naive.
        return Inference(top, f"highest line given: {_quote(st)}")
    if naive:
        return Inference(0, _quote(naive))
    running = _first(
        given, lambda s: bool(SYSTEMIC.search(s)) and bool(GIVEN_CUE.search(s)) and not re.search(r"(?i)\b(?:neo-?)?adjuvant\b", s)
    )
    if running and metastatic is not None and metastatic.value:
        return Inference(1, f"systemic therapy given for advanced disease: {_quote(running)} (count the lines if more than one)", weak=True)
    if metastatic is not None and not metastatic.value:
        return Inference(0, "not metastatic: no line for advanced disease")
    return None  # metastatic (or unknown) and the text names no treatment state: ask


_BOARD_LINE = re.compile(r"(?i)\b(?:MDT|MDM|tumou?r board|board|meeting|multidisciplinary)\b")


def _board_date(text: str) -> tuple[Inference | None, str]:
    """The date of the board: a date on a line naming the meeting, else the latest full date."""
    order = numeric_order(text)
    full = ("iso", "num", "dmy", "mdy")
    for line in text.splitlines():
        if _BOARD_LINE.search(line):
            dates = [d for d in find_dates(line, order) if d.form in full]
            if dates:
                d = dates[-1]
                if d.ambiguous:
                    return None, f"board date {d.text!r} reads as day/month or month/day and no other date settles it"
                return Inference(d.value, _quote(line)), ""
    dates = [d for d in find_dates(text, order) if d.form in full]
    if not dates:
        return None, ""
    latest = max(dates, key=lambda d: d.value)
    if latest.ambiguous:
        return None, f"latest date {latest.text!r} reads as day/month or month/day and no other date settles it"
    return Inference(latest.value, f"latest dated entry {latest.text!r}", weak=True), ""


def import_packet(text: str, case_id: str, catalog: Catalog, source: str = "user") -> ImportReport:
    """One packet's text as a case, with the evidence of every inference and what is unknown.

    A field the text does not settle is never defaulted: it is listed in `missing` (the
    to-do) with what to write. A field inferred only indirectly is listed in `weak`.
    """
    report = ImportReport(case_id=case_id, source=source)
    sections, notes = split_sections(text)
    report.notes.extend(notes)
    flat = "\n".join(sections.values())
    said = statements(flat)
    fields: dict[str, Any] = {"case_id": case_id, "sections": sections, "source": source}

    def settle(name: str, found: Inference | None, ask: str) -> None:
        if found is None:
            report.missing.append(f"{name}: {ask}")
            return
        fields[name] = found.value.isoformat() if hasattr(found.value, "isoformat") else found.value
        report.evidence[name] = found.evidence
        report.inferred[name] = f"{fields[name]} ({'WEAK, confirm: ' if found.weak else ''}{found.evidence})"
        if found.weak:
            report.weak.append(name)

    cancer = _cancer_type(said)
    settle("cancer_type", cancer, "the tumour type, a lower-case word (e.g. breast, renal, bladder, head_and_neck)")
    settle("sex", _sex(said, flat, cancer.value if cancer else None), "F or M")
    settle("age", _age(said), "age in years at the board")
    stage = _stage(said)
    settle("stage", stage, "the AJCC/FIGO stage group (I-IV with letter)")
    metastatic = _metastatic(said, stage)
    settle("metastatic", metastatic, "true or false: are there distant metastases?")
    settle("resected", _resected(catalog, said), "true or false: has the primary been removed (performed, not planned)?")
    settle("prior_lines", _prior_lines(catalog, said, metastatic), "lines of systemic therapy given for advanced disease (0 if none)")
    markers = _markers(catalog, "\n".join(logical_lines(flat)))
    fields["biomarkers"] = markers
    report.inferred["biomarkers"] = markers or "none recognised (add any the packet reports)"
    board, why = _board_date(flat)
    settle("board_date", board, why or "the date of the tumour board (YYYY-MM-DD)")

    plan = re.search(
        r"(?i)\b(?:plan|board rec\w*|recommendations?|proposed(?: management)?|proposal|question|a/p|outcome)\s*:\s*\n?\s*([^.\n]{6,120})",
        "\n".join(logical_lines(sections["overview"] + "\n" + sections["encounters"] + "\n" + flat)),
    )
    if plan:
        fields["consensus"] = [{"treatment": plan.group(1).strip(), "label": "tacit"}]
        report.inferred["consensus"] = (
            f"'{plan.group(1).strip()}' (the packet's written plan, label tacit: replace with the board's consensus)"
        )
    else:
        report.missing.append("consensus: at least one treatment the board agreed on")

    report.draft = fields
    if not report.missing:
        try:
            report.case = Case.model_validate(fields)
        except ValidationError as ex:
            report.missing.extend(f"{'.'.join(map(str, e['loc'])) or 'case'}: {e['msg']}" for e in ex.errors())
    return report


def read_packets(paths: list[str]) -> list[tuple[str, str, str]]:
    """(case id, source, text) per packet: text files, or a JSONL of texts ({"id", "text"} or a string)."""
    packets = []
    for raw in paths:
        path = Path(raw)
        if path.suffix == ".jsonl":
            # Bounded reads, records split on "\n" only (a packet's text may hold U+2028), limits per record.
            for n, line in enumerate(split_records(read_text_checked(path)), 1):
                if not line.strip():
                    continue
                item = load_json_line(line, path, n)
                text = item if isinstance(item, str) else item.get("text") if isinstance(item, dict) else None
                if not isinstance(text, str) or not text.strip():
                    raise CatalogError(path, f"line {n} has no packet text", field="text")
                cid = item.get("id") if isinstance(item, dict) and item.get("id") else f"{path.stem}-{n}"
                packets.append((_safe_id(str(cid)), f"{path.name}:{n}", text))
        else:
            packets.append((_safe_id(path.stem), path.name, load_text(path)))
    return packets


def _safe_id(text: str) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9_.\-]+", "-", text).strip("-.")
    return cleaned if cleaned and cleaned[0].isalnum() else f"case-{cleaned or 'x'}"
