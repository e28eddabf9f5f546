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

from clinical_cf.catalog.css.dates import latest_date
from clinical_cf.catalog.css.interventions import Catalog
from clinical_cf.catalog.css.residue import implication_hits, term_matches
from clinical_cf.catalog.css.schema import SECTIONS, Case
from clinical_cf.core.errors import CatalogError
from clinical_cf.core.loading import load_json_line, load_text, read_text_checked, split_records

# Heading words clinicians use, per section (matched case-insensitively on a heading line).
SECTION_HEADINGS: dict[str, tuple[str, ...]] = {
    "demographics": ("demographics", "patient", "patient details", "social history", "identification"),
    "diagnoses": ("diagnoses", "diagnosis", "problem list", "problems", "history of present illness", "hpi", "oncologic history", "pathology", "staging"),
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
    "breast": r"\bbreast\b|\bIDC\b|\bILC\b|\bDCIS\b|\bMBC\b|\bTNBC\b",
    "nsclc": r"\bNSCLC\b|\blung\b|\blobe\b|\bpulmonary\b|\bRUL\b|\bRLL\b|\bLUL\b|\bLLL\b|\bRML\b",
    "colorectal": r"\bcolon\b|\bcolonic\b|\brect(?:al|um)\b|\bsigmoid\b|\bcolorectal\b|\bm?CRC\b|\bcaecal\b|\bcecal\b",
    "pancreatic": r"\bpancrea\w*",
    "gastric": r"\bgastric\b|\bstomach\b|\bGEJ\b|\bgastro-?oesophageal\b|\bgastroesophageal\b",
    "melanoma": r"\bmelanoma\b",
    "ovarian": r"\bovar\w*|\bHGSOC\b|\bfallopian\b",
    "prostate": r"\bprostat\w*|\bRALP\b|\bPSA\b",
}


@dataclass
class ImportReport:
    case_id: str
    source: str
    inferred: dict[str, Any] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    case: Case | None = None
    draft: dict[str, Any] = field(default_factory=dict)


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
    if any(l.strip() for l in preamble):
        sections["overview"] = preamble + sections["overview"]
        notes.append("text before the first heading was put in overview")
    empty = [name for name in SECTIONS if not any(l.strip() for l in sections[name])]
    if empty:
        notes.append(f"no text for: {', '.join(empty)}")
    return {name: "\n".join(lines).strip() for name, lines in sections.items()}, notes


def _hits(catalog: Catalog, name: str, text: str, kinds: tuple[str, ...] | None = None) -> bool:
    implication = catalog.implications[name]
    return any(
        kinds is None or term.kind in kinds for line in text.splitlines() for term, _ in implication_hits(implication, line)
    )


def _resected(catalog: Catalog, text: str) -> bool:
    """A resection is done when the chart says so (s/p ..., pathologic staging, margins, post-op), not when one is planned."""
    done = catalog.implications["resection_done"].terms[0]  # "s/p | underwent | had ... <operation>"
    said = any(term_matches(done, line) for line in text.splitlines())
    return (said or _hits(catalog, "resection_done", text, ("staging", "timing"))) and not _hits(catalog, "unresected", text, ("status",))


def _stage(text: str) -> tuple[str | None, str]:
    m = re.search(r"(?i)\b(?:stage|FIGO|AJCC)\s*(?:stage\s*)?(IV|I{1,3}|[1-4])([A-C])?\d?\b", text)
    if m:
        roman = {"1": "I", "2": "II", "3": "III", "4": "IV"}.get(m.group(1), m.group(1).upper())
        return roman + (m.group(2) or "").upper(), f"written: {m.group(0)}"
    tnm = re.search(r"\b[cpy]{0,2}T([0-4isx])[a-d]?\s*[cpy]{0,2}N([0-3x])[a-c]?\s*(?:[cp]?M([01]))?", text)
    if tnm:
        t, n, m_ = tnm.group(1), tnm.group(2), tnm.group(3)
        if m_ == "1":
            return "IV", f"from TNM {tnm.group(0)} (M1)"
        if n not in ("0", "x"):
            return "III", f"from TNM {tnm.group(0)} (node-positive; approximate, confirm the stage group)"
        return ("II" if t in ("3", "4") else "I"), f"from TNM {tnm.group(0)} (approximate, confirm the stage group)"
    if re.search(r"(?i)\bM1[a-d]?\b|\bmetastatic\b|\bmets\b", text):
        return "IV", "from metastatic disease"
    return None, ""


def _markers(catalog: Catalog, text: str) -> dict[str, str]:
    markers: dict[str, str] = {}
    if _hits(catalog, "her2_positive", text):
        markers["HER2"] = "positive"
    elif _hits(catalog, "her2_negative", text):
        markers["HER2"] = "negative"
    er = re.search(r"\b(?:ER|estrogen receptor|oestrogen receptor)\b[^.\n;|]{0,15}?((?:<|>)?\s*\d{1,3}\s*%)", text, re.I)
    if er:
        markers["ER"] = re.sub(r"\s+", "", er.group(1))
    elif _hits(catalog, "hormone_receptor_positive", text):
        markers["ER"] = "positive"
    elif re.search(r"\b(?:ER|HR)\s*-|(?i:\b(?:ER|estrogen receptor|oestrogen receptor)\b[^.\n;|]{0,10}negative)|(?i:triple[- ]negative|TNBC)", text):
        markers["ER"] = "negative"
    pr = re.search(r"\b(?:PR|PgR|progesterone receptor)\b[^.\n;|]{0,15}?((?:<|>)?\s*\d{1,3}\s*%)", text, re.I)
    if pr:
        markers["PR"] = re.sub(r"\s+", "", pr.group(1))
    pdl1 = re.search(r"(?i)\bPD-?L1\b[^.\n;|]{0,40}?((?:<|>|≥|>=)?\s*\d{1,3}\s*%)", text)
    if pdl1:
        markers["PD-L1"] = re.sub(r"\s+", "", pdl1.group(1)).replace("≥", "").replace(">=", "").replace(">", "")
    ki67 = re.search(r"(?i)\bKi-?67\b[^.\n;|]{0,10}?(\d{1,3}\s*%)", text)
    if ki67:
        markers["Ki-67"] = re.sub(r"\s+", "", ki67.group(1))
    for name, pos, neg in (
        ("EGFR", r"EGFR[^.\n;|]{0,20}(?:exon|L858R|del|mutat|positive|detected)", r"EGFR[^.\n;|]{0,20}(?:wild[- ]?type|wt\b|negative|not detected)"),
        ("ALK", r"ALK[^.\n;|]{0,20}(?:rearrang|fusion|positive|detected)", r"ALK[^.\n;|]{0,20}(?:negative|not detected|no rearr)"),
        ("KRAS", r"\bK?RAS[^.\n;|]{0,15}(?:G1[23]|Q61|mutat|mutant|positive)", r"\bK?RAS[^.\n;|]{0,15}(?:wild[- ]?type|wt\b|negative|not detected)"),
        ("BRAF", r"BRAF[^.\n;|]{0,15}(?:V600E?|mutat|positive|detected)(?![^.\n;|]{0,12}not detected)", r"BRAF[^.\n;|]{0,20}(?:wild[- ]?type|wt\b|negative|not detected)"),
        ("MSI", r"\bMSI-?H\b|\bdMMR\b|mismatch repair deficien", r"\bMSS\b|\bpMMR\b|MMR proficient|mismatch repair proficient"),
        ("BRCA1", r"BRCA1[^.\n;|]{0,20}(?:pathogenic|mutat|positive)(?![^.\n;|]{0,5}variant not)", r"(?:no|not)\b[^.\n;|]{0,20}BRCA1|BRCA1[^.\n;|]{0,20}(?:negative|wild)"),
    ):
        if re.search(neg, text, re.I):
            markers[name] = "negative"
        elif re.search(pos, text, re.I):
            markers[name] = "positive"
    if re.search(r"(?i)(?:no|not)\b[^.\n;|]{0,25}BRCA1/2", text):
        markers.setdefault("BRCA1", "negative")
        markers.setdefault("BRCA2", "negative")
    return markers


def _prior_lines(catalog: Catalog, text: str) -> tuple[int, str]:
    if _hits(catalog, "treatment_naive", text):
        return 0, "treatment-naive statement"
    ordinals = {"first": 1, "1st": 1, "1l": 1, "second": 2, "2nd": 2, "2l": 2, "third": 3, "3rd": 3, "3l": 3, "fourth": 4, "4th": 4}
    words = [w for pair in re.findall(r"(?i)\b(first|1st|second|2nd|third|3rd|fourth|4th)[- ]line\b|\b([123]L)\b", text) for w in pair if w]
    found = [ordinals[w.lower()] for w in words]
    if not found:
        return 0, "no line of therapy for advanced disease mentioned"
    # A line that is running has been given too: "on first-line osimertinib" is one line, not treatment-naive.
    top = max(found)
    return top, f"highest line for advanced disease mentioned: {top}"


def import_packet(text: str, case_id: str, catalog: Catalog, source: str = "user") -> ImportReport:
    """One packet's text as a case, with what was inferred and what is missing."""
    report = ImportReport(case_id=case_id, source=source)
    sections, notes = split_sections(text)
    report.notes.extend(notes)
    flat = "\n".join(sections.values())
    fields: dict[str, Any] = {"case_id": case_id, "sections": sections, "source": source}

    scores = {c: len(re.findall(p, flat, re.I)) for c, p in CANCER_WORDS.items()}
    best = max(scores, key=scores.get)  # type: ignore[arg-type]
    if scores[best]:
        fields["cancer_type"] = best
        report.inferred["cancer_type"] = f"{best} ({scores[best]} mentions)"
    else:
        report.missing.append("cancer_type")

    sex = None
    if re.search(r"(?i)\b(?:female|woman|Mrs|Ms|she|her)\b|\b\d{2}\s*(?:y/?o|yo)?\s*F\b", flat):
        sex = "F"
    if re.search(r"(?i)\b(?:male|man|Mr|he|his)\b|\b\d{2}\s*(?:y/?o|yo)?\s*M\b", flat) and sex is None:
        sex = "M"
    if fields.get("cancer_type") == "prostate":
        sex = "M"
    if fields.get("cancer_type") == "ovarian":
        sex = "F"
    if sex:
        fields["sex"] = sex
        report.inferred["sex"] = sex
    else:
        report.missing.append("sex")

    age = re.search(r"(?i)\b(\d{2})\s*(?:-?\s*(?:y/?o|yo|years? old|year-old)|\s*[MF]\b)|\baged\s+(\d{2})\b|\bAge\s*\|?\s*:?\s*\|?\s*(\d{2})\b", flat)
    if age:
        fields["age"] = int(next(g for g in age.groups() if g))
        report.inferred["age"] = fields["age"]
    else:
        report.missing.append("age")

    stage, why = _stage(flat)
    if stage:
        fields["stage"] = stage
        report.inferred["stage"] = f"{stage} ({why})"
    else:
        report.missing.append("stage")
    fields["metastatic"] = bool(stage and stage.startswith("IV"))
    report.inferred["metastatic"] = fields["metastatic"]
    fields["resected"] = _resected(catalog, flat)
    report.inferred["resected"] = fields["resected"]
    fields["prior_lines"], why = _prior_lines(catalog, flat)
    report.inferred["prior_lines"] = f"{fields['prior_lines']} ({why})"
    fields["biomarkers"] = _markers(catalog, flat)
    report.inferred["biomarkers"] = fields["biomarkers"] or "none recognised"
    board = latest_date(flat)
    if board:
        fields["board_date"] = board.isoformat()
        report.inferred["board_date"] = f"{board.isoformat()} (latest dated entry)"
    else:
        report.missing.append("board_date")

    plan = re.search(
        r"(?i)\b(?:plan|board rec\w*|recommendations?|proposed|proposal|question|a/p)\s*:\s*\n?\s*([^.\n]{6,120})",
        sections["overview"] + "\n" + sections["encounters"] + "\n" + flat,
    )
    if plan:
        fields["consensus"] = [{"treatment": plan.group(1).strip(), "label": "tacit"}]
        report.inferred["consensus"] = f"'{plan.group(1).strip()}' (the packet's written plan, label tacit: replace with the board's consensus)"
    else:
        report.missing.append("consensus (at least one treatment the board agreed on)")

    report.draft = fields
    if not report.missing:
        try:
            report.case = Case.model_validate(fields)
        except ValidationError as ex:
            report.missing.extend(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in ex.errors())
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
