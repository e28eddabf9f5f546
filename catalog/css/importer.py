"""Import a clinician's own packets: text in, ten-section cases out, every inference listed.

A clinician has packet text, not this project's ten-section JSON. `import_packet` splits
the text into the ten sections by its headings (or keeps it whole in `overview` and says
so), infers the fields the applicability filters read with the catalog's own vocabulary
(the residue implications that recognise HER2, ER/PR, PD-L1 status, a resection, treatment
history), and reports what it inferred, for the user to confirm, and what it could not.
Nothing it cannot read is guessed: a field it cannot infer is listed, and a case that
lacks a required field is written to a to-do file instead of the cases file.

The importer asks (issue 28). Patterns reach the wordings they were written for, so no
inference is used until the user confirms it: every field that decides applicability
(`DECIDING_FIELDS`: cancer type, stage and the date it refers to, metastatic, resected and by
which operation, prior lines, the board date, and each marker an applicability filter reads or
the packet reports) becomes a *question*, pre-filled with the value inferred and the quote it
came from (the quote is checked to occur in the text). `cases import` writes the questions
file; `cases answer` records confirmations and corrections and writes a case only when every
question of it is answered, so an unconfirmed inference never decides which interventions
apply. Text is normalised first (`normalise_text`: NFKC; BOM, zero-width and bidi controls
removed, with a note), so an invisible character cannot change what is inferred.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from clinical_cf.catalog.css import CATALOG_PATH
from clinical_cf.catalog.css.assertions import (
    HISTOLOGY_TYPES,
    OTHER_DISEASE_STAGE,
    Mention,
    marker_findings,
    read_mentions,
    span_status,
)
from clinical_cf.catalog.css.dates import FoundDate, find_dates, numeric_order
from clinical_cf.catalog.css.interventions import Catalog, load_catalog
from clinical_cf.catalog.css.schema import KNOWN_MARKERS, SECTIONS, Case, stage_metastatic
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
    "medications": (
        "medications",
        "meds",
        "drugs",
        "current medications",
        "current meds",
        "medication list",
        "regimen",
        "treatment history",
        "systemic therapy",
        "oncologic treatment",
    ),
    "procedures": ("procedures", "surgery", "surgical history", "operations", "interventions"),
    "encounters": ("encounters", "notes", "clinic notes", "progress notes", "visits", "correspondence", "letters", "course", "handover"),
    "labs": ("labs", "laboratory", "bloods", "results", "tumour markers", "tumor markers"),
    "vitals": ("vitals", "vital signs", "obs", "observations"),
    "allergies": ("allergies", "allergy", "adverse reactions"),
    "overview": ("overview", "summary", "assessment", "impression", "board question", "question", "plan", "assessment and plan", "a/p"),
}
ONE_LINE_SECTIONS = ("allergies", "vitals")
"""Sections written as one labelled line or list: a following line with another unknown label leaves them."""
PLAN_HEADINGS = ("plan", "assessment and plan", "a/p", "question", "board question")
"""Headings whose text is the board's plan or question; it keeps a "Plan:" cue in the packet."""
_HEADING = re.compile(r"^\s*(?:=+\s*|#+\s*|\*\*)?([A-Za-z][A-Za-z /&-]{1,40}?)(?:\s*=+|\*\*)?\s*:?\s*$")
_INLINE_HEADING = re.compile(r"^\s*([A-Za-z][A-Za-z /&-]{1,30}?)\s*:\s+(\S.*)$")

# CANCER_WORDS (each type's words) and HISTOLOGY_TYPES live with the assertion reader that finds them.
# A mention inside a metastasis phrase ("lung metastases") does not count for that site; nor does a negated,
# uncertain, hypothetical or family mention ("4 mm lung nodule, possibly inflammatory"; "mother: breast cancer").
_METASTASIS_CONTEXT = re.compile(r"^\s*(?:(?:and|,)\s*\w+\s+)?(?:metasta\w*|mets|nodules|deposits|lesions?)\b", re.IGNORECASE)
_METASTASIS_BEFORE = re.compile(r"\b(?:metasta\w*|mets|spread)\s+(?:to|in)\s+(?:the\s+)?(?:\w+\s*(?:,|and)\s*)?$", re.IGNORECASE)

# Planned, proposed or discussed, not performed: a statement with one of these cues is not
# evidence of an operation done or a line given ("radical cystectomy after neoadjuvant
# chemotherapy", "We plan to start first line ...").
PLANNING_CUE = re.compile(
    r"(?i)\b(?:plan\w*|propos\w*|intend\w*|will|would|to be|to undergo|consent\w*|discuss\w*|candidate|"
    r"referr\w*|await\w*|pending|scheduled|listed|booked|options?|consider\w*|then|recommend\w*|"
    r"offer\w*|outcome|question|suitable|prefer\w*|for (?:radical|surgery|resection)|MDT:|MDT question|"
    r"to (?:start|begin|commence)|reassess\w*)\b|\?"
)
OPERATION = re.compile(
    r"(?i)\b(?:\w*ectom(?:y|ies)|resect(?:ion|ed)|Whipple|wide local excision|WLE|debulking|cytoreduct\w*|"
    r"TME|TLH|TAH|RALP|lobectomy|pneumonectomy|Hartmann'?s|(?:wide |radical )?excision(?! biopsy))\b"
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
    questions: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Every deciding field (`DECIDING_FIELDS`, `biomarkers.NAME`): pre-filled value, quote, whether the quote occurs."""


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
        if inline and current in ONE_LINE_SECTIONS and inline.group(1).strip().lower() not in by_heading:
            # "Allergies: NKDA" then "Pharmacist query for board: ...": a new labelled line after a one-line
            # section starts other text, it is not an allergy (a board question filed under allergies).
            current = "overview"
            sections[current].append(line)
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


@functools.cache
def _bundled_vocabulary() -> Catalog:
    return load_catalog(CATALOG_PATH)


def _hits(catalog: Catalog, name: str, text: str, kinds: tuple[str, ...] | None = None) -> bool:
    """Whether the catalog's vocabulary for a fact is asserted in `text`: a term's match counts unless ConText reads it
    as negated, hypothetical, uncertain or a family member's (a term that is itself a negative statement, "no prior
    therapy", counts as written); the term's own `unless` exception still applies."""
    # A user's own catalog (one intervention for their cancer type) need not restate the vocabulary the importer reads
    # ("unresected", "treatment-naive", HER2 status): the bundled catalog's is used where it has none.
    implication = catalog.implications.get(name) or _bundled_vocabulary().implications[name]
    for line in text.splitlines():
        for term in implication.terms:
            if kinds is not None and term.kind not in kinds:
                continue
            for m in re.finditer(term.pattern, line):
                if term.unless and re.search(term.unless, line):
                    continue
                if term.negatable and span_status(line, m.start(), m.end()) in ("negated", "hypothetical", "uncertain", "family"):
                    continue
                return True
    return False


def _first(statements: list[str], test) -> str | None:
    return next((s for s in statements if test(s)), None)


def _planned(statement: str) -> bool:
    return bool(PLANNING_CUE.search(statement))


def _cancer_type(mentions: list[Mention]) -> Inference | None:
    """The primary tumour's type: its words in affirmed (or dated, historical) statements, not a site of spread.

    A negated, uncertain, hypothetical or family mention does not count; a type named by its histology (GIST,
    cholangiocarcinoma, sarcoma ...) outranks the organ words of the same packet ("gastric GIST").
    """
    scores: dict[str, int] = {}
    first_seen: dict[str, str] = {}
    for m in mentions:
        if m.kind != "cancer" or m.status not in ("affirmed", "historical"):
            continue
        at = m.clause.find(m.text)
        if at >= 0 and (_METASTASIS_CONTEXT.match(m.clause[at + len(m.text) :]) or _METASTASIS_BEFORE.search(m.clause[:at])):
            continue  # "lung metastases" names a site of spread, not the primary
        scores[m.name] = scores.get(m.name, 0) + 1
        first_seen.setdefault(m.name, m.line)
    if not scores:
        return None
    def rank(kv: tuple[str, int]) -> tuple[bool, int, int]:
        histology = kv[0] in HISTOLOGY_TYPES
        return (not histology, HISTOLOGY_TYPES.index(kv[0]) if histology else 0, -kv[1])

    ranked = sorted(scores.items(), key=rank)
    best, count = ranked[0]
    rest = [kv for kv in ranked[1:] if kv[0] not in HISTOLOGY_TYPES or best not in HISTOLOGY_TYPES]
    weak = bool(rest) and best not in HISTOLOGY_TYPES and rest[0][1] * 2 > count  # a close second: confirm
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


_OTHER_DISEASE_STAGE = OTHER_DISEASE_STAGE  # one vocabulary for the importer and the regex edits (assertions.py)


def _cancer_stage_matches(statement: str):
    for m in _STAGE.finditer(statement):
        if not _OTHER_DISEASE_STAGE.search(statement[max(0, m.start() - 30) : m.start()]):
            yield m


def _stage(statements: list[str]) -> Inference | None:
    for st in statements:
        m = next(_cancer_stage_matches(st), None)
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


def _stage_means_metastatic(stage: str, cancer_type: str | None) -> bool | None:
    """The schema's table (`STAGE_METASTATIC`): a stage IVA larynx is locoregional, an anaplastic thyroid IVB either."""
    return stage_metastatic(cancer_type, stage)


def _metastatic(
    statements: list[str], stage: Inference | None, cancer_type: str | None = None, mentions: list[Mention] | None = None
) -> Inference | None:
    """Explicit statements first (M1, metastases, "no distant metastases"), then the stage.

    A stage that disagrees with an explicit statement (a stage IB at first diagnosis, then
    "recurrence with lung metastases") is the stage of another time: the explicit statement
    wins and the stage question says so.
    """
    explicit = _explicit_metastatic(statements, mentions or [])
    if explicit is not None:
        return explicit
    means = _stage_means_metastatic(stage.value, cancer_type) if stage is not None else None
    if stage is None or means is None:
        return None  # not settled by the text (or a stage group that may be either, e.g. thyroid IVB): ask
    return Inference(means, f"from the stage ({stage.evidence})", weak=stage.weak)


def _explicit_metastatic(statements: list[str], mentions: list[Mention]) -> Inference | None:
    """M1, or metastases stated as found (ConText: affirmed) or as absent (negated); uncertain ones settle nothing."""
    m1 = _first(statements, _M1.search)
    if m1:
        return Inference(True, _quote(m1))
    distant = [m for m in mentions if m.kind == "metastasis" and not _REGIONAL.search(m.clause)]
    denial = next((m for m in distant if m.status == "negated"), None)
    # A dated (historical) statement of metastases still says the disease has spread; uncertain ones ("?metastases",
    # "cannot be excluded"), hypothetical and family ones settle nothing.
    spread = next((m for m in distant if m.status in ("affirmed", "historical") and not _planned(m.clause)), None)
    m0 = _first(statements, _M0.search)
    if spread and not denial:
        return Inference(True, _quote(spread.line, around=spread.text))
    if not spread and (denial or m0):
        return Inference(False, _quote(denial.line, around=denial.text) + " (negated)" if denial else _quote(m0 or ""))
    if spread and denial:
        later = _first(statements, lambda s: spread.text in s and bool(_RECURRENCE.search(s)) and not _planned(s))
        if later:
            # "stage IB (T1b N0 M0) at diagnosis ... Recurrence with lung metastases": the recurrence is the present.
            return Inference(True, f"recurrence: {_quote(later)} (an earlier statement says {_quote(denial.line, 60)})", weak=True)
        return None  # one statement says spread, another says none: ask (both are quoted in the question)
    return None


_REGIONAL = re.compile(r"(?i)\b(?:lymph )?nod(?:e|es|al)\b(?!.*\bdistant\b)")
"""A metastasis in a node is regional (N), not distant (M): "metastatic carcinoma in 2 of 14 nodes"."""


_RECURRENCE = re.compile(r"(?i)\b(?:recurren\w*|relapse\w*|recurred|progress\w*|now metastatic|new (?:metasta\w*|lesions?))\b")


OPERATION_ORGANS: dict[str, str] = {
    r"cholecystectom": "gallbladder", r"appendic(?:ec)?tom": "appendix", r"nephrectom|nephroureterectom": "kidney",
    r"thyroidectom|lobectomy of the thyroid|hemithyroidectom": "thyroid", r"hysterectom": "uterus", r"mastectom|lumpectom": "breast",
    r"gastrectom": "stomach", r"colectom|hemicolectom|anterior resection|Hartmann": "colon", r"hepatectom|liver resection": "liver",
    r"Whipple|pancreat\w*ectom": "pancreas", r"o?esophagectom": "oesophagus", r"cystectom": "bladder",
    r"prostatectom|RALP": "prostate", r"pneumonectom|lobectom|segmentectom": "lung", r"laryngectom": "larynx",
    r"splenectom": "spleen", r"tonsillectom": "tonsil", r"oophorectom|salpingo": "ovary", r"orchi\w*ectom": "testis",
    r"adrenalectom": "adrenal", r"herniorrhaph|hernia repair": "abdominal wall", r"tracheostom": "airway",
}
"""The organ each named operation removes; the cancer's resection removes the primary's organ or its nodes."""
PRIMARY_ORGANS: dict[str, tuple[str, ...]] = {
    "breast": ("breast",), "nsclc": ("lung",), "sclc": ("lung",), "colorectal": ("colon",), "pancreatic": ("pancreas",),
    "gastric": ("stomach",), "ovarian": ("ovary", "uterus"), "prostate": ("prostate",), "renal": ("kidney",),
    "bladder": ("bladder",), "head_and_neck": ("larynx", "tonsil"), "endometrial": ("uterus", "ovary"), "cervical": ("uterus",),
    "hepatocellular": ("liver",), "oesophageal": ("oesophagus", "stomach"), "thyroid": ("thyroid",), "mesothelioma": ("lung",),
    "cholangiocarcinoma": ("liver", "pancreas"), "gallbladder": ("gallbladder", "liver"), "gist": ("stomach", "colon"),
}
"""Organs whose removal resects each type's primary (a hemihepatectomy for an intrahepatic cholangiocarcinoma, a Whipple for
a distal one); a type not listed is asked."""


def _removes_other_organ(operation: str, cancer_type: str | None) -> bool:
    """Whether a named operation removes an organ that is not the primary's (a cholecystectomy for gallstones)."""
    organs = PRIMARY_ORGANS.get(cancer_type or "")
    if organs is None:
        return False
    for pattern, organ in OPERATION_ORGANS.items():
        if re.search(f"(?i){pattern}", operation):
            return organ not in organs
    return False


def _resected(
    catalog: Catalog, statements: list[str], cancer_type: str | None = None, mentions: list[Mention] | None = None
) -> Inference | None:
    """Performed, not planned: an operation that removes the primary or its nodes, diagnostic procedures excepted.

    An operation on another organ (a cholecystectomy in a cholangiocarcinoma packet, an appendicectomy in 1989) is
    not the cancer's resection; a negated one ("No surgery: unresectable") is evidence of none (ConText).
    """
    negated_ops = {m.line for m in mentions or [] if m.kind == "operation" and m.status in ("negated", "hypothetical")}
    for st in statements:
        ops = [m for m in OPERATION.finditer(st) if not DIAGNOSTIC_ONLY.search(st[max(0, m.start() - 12) : m.end() + 12])]
        ops = [m for m in ops if not _removes_other_organ(m.group(0), cancer_type)]
        if DIAGNOSTIC_ONLY.search(st):
            # "TURBT: complete resection of visible tumour": a generic "resection" in the statement of a
            # diagnostic procedure is that procedure, not the definitive operation; a named one still counts.
            ops = [m for m in ops if not re.fullmatch(r"(?i)resect(?:ion|ed)|excision", m.group(0))]
        if any(" ".join(st.split()) in " ".join(line.split()) for line in negated_ops):
            continue
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


def _markers(catalog: Catalog, text: str, findings: dict[str, tuple[str | None, Mention]] | None = None) -> dict[str, str]:
    """Each marker the packet reports: a percentage as reported, else the status its mention asserts (medspaCy ConText:
    "No ALK fusion" is negative, "If KRAS G12C is found" states nothing), None when a mention states no result."""
    findings = findings or {}
    markers: dict[str, str] = {name: result for name, (result, _m) in findings.items()}  # type: ignore[misc]
    if markers.get("HER2") is None and "HER2" in markers or "HER2" not in markers:
        if _hits(catalog, "her2_positive", text):
            markers["HER2"] = "positive"
        elif _hits(catalog, "her2_negative", text):
            markers["HER2"] = "negative"
    er = re.search(r"\b(?:ER|estrogen receptor|oestrogen receptor)\b[^.\n;|]{0,15}?((?:<|>)?\s*\d{1,3}\s*%)", text, re.IGNORECASE)
    if er:
        markers["ER"] = re.sub(r"\s+", "", er.group(1))
    elif markers.get("ER") is None and _hits(catalog, "hormone_receptor_positive", text):
        markers["ER"] = "positive"
    elif markers.get("ER") is None and re.search(r"\b(?:ER|HR)\s*-|(?i:triple[- ]negative|TNBC)", text):
        markers["ER"] = "negative"  # written signs and the named subtype, not negation words
    pr = re.search(r"\b(?:PR|PgR|progesterone receptor)\b[^.\n;|]{0,15}?((?:<|>)?\s*\d{1,3}\s*%)", text, re.IGNORECASE)
    if pr:
        markers["PR"] = re.sub(r"\s+", "", pr.group(1))
    pdl1 = re.search(r"(?i)\bPD-?L1\b[^.\n;|]{0,40}?((?:<|>|≥|>=)?\s*\d{1,3}\s*%)", text)
    cps = re.search(r"(?i)\bPD-?L1\b[^.\n;|]{0,20}?\bCPS\s*(?:of\s*|[:=]\s*)?(<|>|≥|>=)?\s*(\d{1,3})\b", text)
    if cps and not pdl1:
        # A combined positive score is not a tumour proportion score: the case keeps no percent; the
        # question shows the CPS and asks for the status the board reads from it.
        markers["PD-L1"] = None  # type: ignore[assignment]
    elif pdl1:
        markers["PD-L1"] = re.sub(r"\s+", "", pdl1.group(1)).replace("≥", "").replace(">=", "").replace(">", "")
    ki67 = re.search(r"(?i)\bKi-?67\b[^.\n;|]{0,10}?(\d{1,3}\s*%)", text)
    if ki67:
        markers["Ki-67"] = re.sub(r"\s+", "", ki67.group(1))
    return markers


_ORDINALS = {"first": 1, "1st": 1, "1l": 1, "second": 2, "2nd": 2, "2l": 2, "third": 3, "3rd": 3, "3l": 3, "fourth": 4, "4th": 4}
_ORDINAL = re.compile(r"(?i)\b(first|1st|second|2nd|third|3rd|fourth|4th)[- ]line\b|\b([1-4]L)\b")


def _prior_lines(catalog: Catalog, statements: list[str], metastatic: Inference | None) -> Inference | None:
    naive = _first(statements, lambda s: _hits(catalog, "treatment_naive", s, ("history",)))
    given = [s for s in statements if not _planned(s)]
    found = [(_ORDINALS[w.lower()], st) for st in given for pair in _ORDINAL.findall(st) for w in pair if w]
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
_ADMIN_DATE = re.compile(r"(?i)\b(?:printed|exported|generated|faxed|scanned)\b[^.;|\n]{0,12}$")
"""A date right after these words is the document's own ("slides printed 15/04/2026 by MDT coordinator"), not the board's."""


def _not_admin(line: str, dates: list[FoundDate]) -> list[FoundDate]:
    return [d for d in dates if not _ADMIN_DATE.search(line[max(0, d.start - 30) : d.start])]


_COMPACT_DATE = re.compile(r"(?<![\d.])((?:19|20)\d{2})(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])(?:[0-2]\d[0-5]\d(?:[0-5]\d)?)?(?![\d.])")
"""YYYYMMDD (optionally with HHMM[SS]), as HL7-style exports write dates."""


def _compact_dates(line: str) -> list[FoundDate]:
    found = []
    for m in _COMPACT_DATE.finditer(line):
        try:
            found.append(FoundDate(m.start(), m.end(), m.group(0), date(int(m.group(1)), int(m.group(2)), int(m.group(3))), "iso"))
        except ValueError:
            continue
    return found


def _full_dates(text: str, order) -> list[FoundDate]:
    full = ("iso", "num", "dmy", "mdy")
    return sorted([d for d in find_dates(text, order) if d.form in full] + _compact_dates(text), key=lambda d: d.start)


def _board_date(text: str) -> tuple[Inference | None, str]:
    """The date of the board: a date on a line naming the meeting, else the latest full date."""
    order = numeric_order(text)
    for line in text.splitlines():
        board = _BOARD_LINE.search(line)
        if board:
            dates = _not_admin(line, _full_dates(line, order))
            if dates:
                # The date nearest the word naming the meeting ("Breast MDT 04/03/2026 ... excision on 02/02/2026").
                d = min(dates, key=lambda d: min(abs(d.start - board.end()), abs(board.start() - d.end)))
                if d.ambiguous:
                    return None, f"board date {d.text!r} reads as day/month or month/day and no other date settles it"
                return Inference(d.value, _quote(line)), ""
    dates = _not_admin(text, _full_dates(text, order))
    if not dates:
        return None, ""
    latest = max(dates, key=lambda d: d.value)
    if latest.ambiguous:
        return None, f"latest date {latest.text!r} reads as day/month or month/day and no other date settles it"
    return Inference(latest.value, f"latest dated entry {latest.text!r}", weak=True), ""


FORMAT_CHARACTERS = "Cf"
"""Unicode category of the characters removed before reading: zero-width space/joiners, bidi embeddings,
overrides, isolates and marks, the BOM, soft hyphens. They are invisible, so a reader sees the text
without them, while a pattern would not ("stage\u200b III", "H\u202eER2")."""


def normalise_text(text: str) -> tuple[str, list[str]]:
    """NFKC, format characters (BOM, zero-width, bidi controls) removed, line ends unified; with a note of what changed."""
    notes = []
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    nfkc = unicodedata.normalize("NFKC", text)
    if nfkc != text:
        notes.append("text normalised to Unicode NFKC (compatibility forms such as full-width letters or ligatures unified)")
    removed: dict[str, int] = {}
    kept = []
    for ch in nfkc:
        if unicodedata.category(ch) == FORMAT_CHARACTERS:
            name = unicodedata.name(ch, f"U+{ord(ch):04X}")
            removed[name] = removed.get(name, 0) + 1
        else:
            kept.append(ch)
    if removed:
        listed = ", ".join(f"{n} x{c}" for n, c in sorted(removed.items()))
        notes.append(f"removed {sum(removed.values())} invisible format character(s) before reading: {listed}")
    return "".join(kept), notes


DECIDING_FIELDS = ("cancer_type", "stage", "stage_date", "metastatic", "resected", "operation", "prior_lines", "board_date")
"""The fields that decide which interventions apply (with each marker, `biomarkers.NAME`): none is used unconfirmed."""
ASK = {
    "cancer_type": "the tumour type, a lower-case word (e.g. breast, renal, bladder, head_and_neck, hepatocellular)",
    "sex": "F or M",
    "age": "age in years at the board",
    "stage": "the CURRENT AJCC/FIGO stage group (I-IV with letter); a recurrence with distant metastases is IV",
    "stage_date": "the date the stage refers to (YYYY-MM-DD), or 'unknown'",
    "metastatic": "true or false: are there distant metastases NOW?",
    "resected": "true or false: has the primary been removed by a definitive operation "
    "(performed, not planned; a biopsy, TURBT or LLETZ is diagnostic)?",
    "operation": "the definitive operation performed and its date, or 'none'",
    "prior_lines": "lines of systemic therapy given for advanced/metastatic disease, a running one included "
    "(0 if none; adjuvant treatment is not a line)",
    "board_date": "the date of the tumour board (YYYY-MM-DD)",
    "consensus": "the treatment the board agreed on",
}
MARKER_ASK = "positive, negative, equivocal, not_tested, or a percentage as reported (e.g. 40%)"
OPEN_MARKER_NOTE = (
    "a marker outside the known names: your answer is kept in this questions file for the review, but no intervention "
    "filter can read it until its name is added to schema.KNOWN_MARKERS"
)


def filter_markers(catalog: Catalog, cancer_type: str | None = None) -> list[str]:
    """Markers an applicability filter reads (for interventions that can apply to `cancer_type`): each is asked for."""
    names: list[str] = []
    for item in catalog.interventions:
        types = item.applies_to.cancer_types
        if cancer_type is not None and types is not None and cancer_type not in types:
            continue
        for name in item.applies_to.biomarkers or {}:
            if name not in names:
                names.append(name)
    return names


_QUOTED = re.compile(r'"…?(.*?)…?"')


def quote_occurs(evidence: str | None, text: str) -> bool:
    """Whether every quoted part of `evidence` occurs in `text` (whitespace collapsed): a quote is checked, not trusted."""
    if not evidence:
        return False
    parts = [p for p in _QUOTED.findall(evidence) if p.strip()]
    if not parts:
        return False
    flat = " ".join(text.split())
    return all(" ".join(p.split()) in flat for p in parts)


@dataclass
class Question:
    """One field to confirm: the pre-filled value, the quote it came from, whether the quote was found in the text."""

    name: str
    value: Any
    evidence: str | None
    verified: bool
    weak: bool
    ask: str
    confirmed: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "evidence": self.evidence,
            "quote_verified": self.verified,
            "weak": self.weak,
            "ask": self.ask,
            "confirmed": self.confirmed,
        }


def import_packet(text: str, case_id: str, catalog: Catalog, source: str = "user") -> ImportReport:
    """One packet's text as a draft case and the questions that confirm it.

    A field the text does not settle is never defaulted: it is listed in `missing` with what
    to write. Every deciding field is a question (`questions`), whether inferred or not; a
    field inferred only indirectly is also listed in `weak`.
    """
    report = ImportReport(case_id=case_id, source=source)
    text, normal_notes = normalise_text(text)
    report.notes.extend(normal_notes)
    if not text.strip():
        raise CatalogError(source, "the packet is empty (no text after removing invisible characters)", entry=case_id, field="text")
    sections, notes = split_sections(text)
    report.notes.extend(notes)
    flat = "\n".join(sections.values())
    said = statements(flat)
    mentions, reading_notes = read_mentions(flat)
    report.notes.extend(reading_notes)
    findings = marker_findings(mentions)
    fields: dict[str, Any] = {"case_id": case_id, "sections": sections, "source": source}
    questions: dict[str, Question] = {}

    def settle(name: str, found: Inference | None, ask: str | None = None, deciding: bool = True) -> None:
        ask = ask or ASK[name]
        if found is None:
            report.missing.append(f"{name}: {ask}")
            questions[name] = Question(name, None, None, False, False, ask)  # asked in the same place as the deciding ones
            return
        value = found.value.isoformat() if hasattr(found.value, "isoformat") else found.value
        if name not in ("stage_date", "operation"):
            fields[name] = value
        report.evidence[name] = found.evidence
        report.inferred[name] = f"{value} ({'WEAK, confirm: ' if found.weak else ''}{found.evidence})"
        if found.weak:
            report.weak.append(name)
        if deciding:
            questions[name] = Question(name, value, found.evidence, quote_occurs(found.evidence, flat), found.weak, ask)

    cancer = _cancer_type(mentions)
    settle("cancer_type", cancer)
    settle("sex", _sex(said, flat, cancer.value if cancer else None), deciding=False)
    settle("age", _age(said), deciding=False)
    stage = _stage(said)
    metastatic = _metastatic(said, stage, cancer.value if cancer else None, mentions)
    if (
        stage is not None
        and metastatic is not None
        and _stage_means_metastatic(stage.value, cancer.value if cancer else None) not in (None, metastatic.value)
    ):
        # The stage is of another time (first diagnosis) or another disease: pre-fill nothing, quote both.
        report.notes.append(f"the stated stage {stage.value} disagrees with: {metastatic.evidence}")
        stage = Inference(None, f"{stage.evidence}; but {metastatic.evidence}: which stage is current?", weak=True)
        report.missing.append(f"stage: {ASK['stage']}")
    if stage is not None and stage.value is None:
        questions["stage"] = Question("stage", None, stage.evidence, quote_occurs(stage.evidence, flat), True, ASK["stage"])
        report.evidence["stage"] = stage.evidence
    else:
        settle("stage", stage)
    settle("stage_date", _stage_date(said, flat, stage))
    settle("metastatic", metastatic)
    resected = _resected(catalog, said, cancer.value if cancer else None, mentions)
    settle("resected", resected)
    settle("operation", _operation(resected))
    settle("prior_lines", _prior_lines(catalog, said, metastatic))
    markers = _markers(catalog, "\n".join(logical_lines(flat)), findings)
    for name in [*filter_markers(catalog, cancer.value if cancer else None), *markers]:
        key = f"biomarkers.{name}"
        if key in questions:
            continue
        value = markers.get(name)
        quote = _marker_quote(name, flat)
        finding = findings.get(name)
        if finding is not None and (value is None or value == finding[0]):
            # The mention's own quote and its assertion status (ConText): "No ALK fusion." (negated).
            quote = finding[1].describe()
            if value is None and finding[1].status != "affirmed":
                quote += f" - a {finding[1].status} mention states no result of the patient's now"
        if value is None and name in markers:
            evidence = f"{quote} (not a status or a percentage: give the status the board reads from it)"
        elif value is None:
            evidence = f"no {name} result found in the packet" + (f" (it mentions {quote})" if quote else "")
        else:
            evidence = quote or f"{name} {value}"
        suggestion = value if value is not None else (None if name in markers or quote else "not_tested")
        ask = MARKER_ASK if name in KNOWN_MARKERS else f"{MARKER_ASK}; {OPEN_MARKER_NOTE}"
        questions[key] = Question(key, suggestion, evidence, quote_occurs(evidence, flat), value is None, ask)
    fields["biomarkers"] = {k: v for k, v in markers.items() if v not in (None, "not_tested") and k in KNOWN_MARKERS}
    report.inferred["biomarkers"] = fields["biomarkers"] or "none recognised (add any the packet reports)"
    board, why = _board_date(flat)
    settle("board_date", board, why or ASK["board_date"])

    plan = re.search(
        r"(?i)\b(?:plan|board rec\w*|recommendations?|proposed(?: management)?|proposal|question|a/p|outcome|decision|query)"
        r"(?:[ \w]{0,20})?\s*:\s*\n?\s*([^.\n]{6,120})",
        "\n".join(logical_lines(sections["overview"] + "\n" + sections["encounters"] + "\n" + flat)),
    )
    if plan:
        fields["consensus"] = [{"treatment": plan.group(1).strip(), "label": "tacit"}]
        report.inferred["consensus"] = (
            f"'{plan.group(1).strip()}' (the packet's written plan, label tacit: replace with the board's consensus)"
        )
    else:
        report.missing.append("consensus: at least one treatment the board agreed on")
        fields["consensus"] = []
        questions["consensus"] = Question("consensus", None, None, False, False, ASK["consensus"])

    report.draft = fields
    report.questions = {name: q.to_json() for name, q in questions.items()}
    if not report.missing:
        try:
            report.case = Case.model_validate(fields)
        except ValidationError as ex:
            report.missing.extend(_problem(e) for e in ex.errors())
    return report


def _stage_date(statements: list[str], text: str, stage: Inference | None) -> Inference | None:
    """The date written in the stage's own statement (a stage of 2023 is not today's)."""
    if stage is None or stage.value is None:
        return None
    unknown = Inference("unknown", "no date is written in the stage's statement: confirm 'unknown' or give it", weak=True)
    quoted = [p for p in _QUOTED.findall(stage.evidence) if p.strip()]
    order = numeric_order(text)
    for st in statements:
        if quoted and " ".join(quoted[0].split())[:40] in " ".join(st.split()):
            dates = _full_dates(st, order) or [d for d in find_dates(st, order)]
            if dates and not dates[0].ambiguous:
                return Inference(dates[0].value, f"date in the stage's statement {_quote(st, around=dates[0].text)}", weak=True)
    return unknown


def _operation(resected: Inference | None) -> Inference | None:
    if resected is None:
        return None
    if not resected.value:
        return Inference("none", resected.evidence, resected.weak)
    m = OPERATION.search(resected.evidence)
    return Inference(m.group(0) if m else None, resected.evidence, True) if m else None


def _marker_quote(name: str, text: str) -> str | None:
    words = {
        "PD-L1": r"PD-?L1",
        "MSI": r"MSI|MMR|mismatch repair",
        "ER": r"\bER\b|(?:o?estrogen) receptor",
        "PR": r"\bPR\b|PgR|progesterone",
    }
    pattern = words.get(name, rf"\b{re.escape(name)}\b")  # case-sensitive: "eGFR" is not EGFR
    for line in logical_lines(text):
        m = re.search(pattern, line)
        if m:
            return _quote(line, around=m.group(0))
    return None


# ---------------------------------------------------------------------------------- answers


def pending_record(report: ImportReport) -> dict[str, Any]:
    """One line of the questions file: the draft, every question, the notes."""
    return {"case_id": report.case_id, "source": report.source, "notes": report.notes, "questions": report.questions, "draft": report.draft}


_BOOL = {"true": True, "yes": True, "y": True, "false": False, "no": False, "n": False}


def parse_answer(name: str, raw: Any) -> Any:
    """A typed answer from what the user wrote; ValueError naming the field when it cannot be."""
    if not isinstance(raw, str):
        return raw
    text = raw.strip()
    if name in ("metastatic", "resected"):
        if text.lower() not in _BOOL:
            raise ValueError(f"{name}: answer true or false, not {raw!r}")
        return _BOOL[text.lower()]
    if name in ("prior_lines", "age"):
        if not text.isdigit():
            raise ValueError(f"{name}: answer a whole number, not {raw!r}")
        return int(text)
    return text


def answer_case(
    record: dict[str, Any], answers: dict[str, Any] | None = None, confirm: set[str] | None = None, catalog: Catalog | None = None
) -> tuple[dict, Case | None, list[str]]:
    """Apply answers (a value corrects and confirms a field) and confirmations (the pre-filled value stands).

    Returns (the updated record, the case once every question is answered and the draft
    validates, else None, and what is still open). An unconfirmed question is never used.
    """
    record = {**record, "questions": {k: dict(v) for k, v in record["questions"].items()}, "draft": dict(record["draft"])}
    questions, draft = record["questions"], record["draft"]
    draft["biomarkers"] = dict(draft.get("biomarkers") or {})
    for name, raw in (answers or {}).items():
        if name not in questions and name not in ASK and not name.startswith("biomarkers."):
            raise ValueError(f"{record['case_id']}: no question named {name!r} (asked: {', '.join(questions)})")
        questions.setdefault(
            name, {"value": None, "evidence": None, "quote_verified": False, "weak": False, "ask": ASK.get(name, MARKER_ASK)}
        )
        questions[name].update(
            value=parse_answer(name, raw),
            confirmed=True,
            answered="corrected" if questions[name].get("value") != parse_answer(name, raw) else "confirmed",
        )
    for name in confirm or set():
        if name == "*":
            for q in questions.values():
                if q.get("value") is not None:
                    q.update(confirmed=True, answered=q.get("answered", "confirmed"))
            continue
        if name not in questions:
            raise ValueError(f"{record['case_id']}: no question named {name!r}")
        if questions[name].get("value") is None:
            raise ValueError(f"{record['case_id']}: {name} has no pre-filled value to confirm; answer it ({questions[name]['ask']})")
        questions[name].update(confirmed=True, answered=questions[name].get("answered", "confirmed"))
    for name, q in questions.items():
        if not q.get("confirmed"):
            continue
        value = q["value"]
        if name.startswith("biomarkers."):
            marker = name.split(".", 1)[1]
            if marker not in KNOWN_MARKERS:
                continue  # answered and kept in the questions file; the case carries canonical names only (OPEN_MARKER_NOTE)
            if value in (None, "not_tested"):
                draft["biomarkers"].pop(marker, None)
            else:
                draft["biomarkers"][marker] = value
        elif name == "consensus":
            draft["consensus"] = [{"treatment": str(value), "label": "tacit"}]
        elif name not in ("stage_date", "operation"):
            draft[name] = value
    corrected_type = questions.get("cancer_type", {})
    if catalog is not None and corrected_type.get("confirmed") and corrected_type.get("value"):
        # A corrected tumour type can bring markers into play that were not asked for the inferred one: ask them now.
        for marker in filter_markers(catalog, str(corrected_type["value"])):
            key = f"biomarkers.{marker}"
            if key not in questions:
                questions[key] = Question(
                    key, "not_tested", f"asked because cancer_type is {corrected_type['value']}", False, True, MARKER_ASK
                ).to_json()
    open_questions = [f"{name}: {q['ask']}" for name, q in questions.items() if not q.get("confirmed")]
    problems = list(open_questions)
    resected, operation = questions.get("resected", {}), questions.get("operation", {})
    if (
        resected.get("confirmed")
        and operation.get("confirmed")
        and bool(resected["value"]) == (str(operation["value"]).lower() in ("none", "", "null"))
    ):
        problems.append("operation: resected and the operation disagree (resected true needs the operation performed; false needs 'none')")
    if problems:
        return record, None, problems
    try:
        return record, Case.model_validate(draft), []
    except ValidationError as ex:
        return record, None, [_problem(e) for e in ex.errors()]


def _problem(error: dict) -> str:
    """One validation problem as one line: a whole-case rule already names its case and field."""
    msg = error["msg"].removeprefix("Value error, ")
    return msg if not error["loc"] and msg.startswith("case '") else f"{'.'.join(map(str, error['loc'])) or 'case'}: {msg}"


def read_packets(paths: list[str]) -> list[tuple[str, str, str]]:
    """(case id, source, text) per packet: text files, or a JSONL of texts ({"id", "text"} or a string).

    Case ids are unique: a second packet whose id (file stem or "id") was taken gets "-2", "-3" ...
    (the source names which packet it is). An empty packet is refused, naming it.
    """
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
                if not isinstance(text, str) or not normalise_text(text)[0].strip():
                    raise CatalogError(path, f"line {n} has no packet text (empty packet)", field="text")
                cid = item.get("id") if isinstance(item, dict) and item.get("id") else f"{path.stem}-{n}"
                packets.append((_safe_id(str(cid)), f"{path.name}:{n}", text))
        else:
            text = load_text(path)
            if not normalise_text(text)[0].strip():
                raise CatalogError(path, "the packet is empty (no text after removing invisible characters)", field="text")
            packets.append((_safe_id(path.stem), str(path), text))
    seen: dict[str, int] = {}
    unique = []
    for cid, source, text in packets:
        seen[cid] = seen.get(cid, 0) + 1
        unique.append((cid if seen[cid] == 1 else f"{cid}-{seen[cid]}", source, text))
    return unique


def _safe_id(text: str) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9_.\-]+", "-", text).strip("-.")
    return cleaned if cleaned and cleaned[0].isalnum() else f"case-{cleaned or 'x'}"
