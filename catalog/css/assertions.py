"""Clinical assertions in packet text, read by medspaCy (ConText and the sectionizer), not by word lists.

"No BRAF V600E" is a negated finding, "?metastases" an uncertain one, "If FGFR2 fusion confirmed" a
hypothetical one, "PMH: cholecystectomy 2014" a historical one and "brother ... BRCA2 carrier" a family
one. Clinical NLP solved this decades ago (NegEx, ConText); medspaCy implements it as a spaCy pipeline that
needs no model download. This module finds the mentions the importer decides on - markers, operations,
metastases, cancer-type words and stages - each with its assertion status and the section it stands in:

* targets: medspaCy's TargetMatcher with this project's rules (`TARGET_RULES`): the markers an
  applicability filter reads and an OPEN marker vocabulary (a gene-like symbol next to an alteration or
  result word: FGFR2 fusion, KIT exon 11, IDH1 R132, p53 aberrant), operations, metastases, stages;
* assertion: medspaCy's ConText with its default rules plus the project's own where the defaults miss
  (`CONTEXT_RULES`: laboratory result negations such as "not detected" and "wild-type", "pending" and
  "?x" as uncertain, "not tested");
* section: medspaCy's sectionizer (its default clinical headings: "PMH", "Family history" ...) within a
  line, and a heading-only line carried to the lines under it.

Text is read line by line (a packet line is a statement: slide bullets, table rows and key: value lines
carry no full stop), and a line is split into clauses at ";" and "|" so a negation in one list item does
not reach the next. The pipeline is built once per process (`pipeline`); work is bounded: at most
`MAX_CHARS` characters of a packet and `MAX_LINE_CHARS` of one line are read, the rest is named in a note.
"""

from __future__ import annotations

import functools
import re
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

AssertionStatus = Literal["affirmed", "negated", "uncertain", "hypothetical", "historical", "family", "not_tested"]

MAX_CHARS = 120_000
"""Characters of one packet that are read for assertions (a packet is a few thousand; a pasted log is not)."""
MAX_LINE_CHARS = 2_000
"""Characters of one line that are read (an unpunctuated 150,000-character line must not cost minutes)."""


@dataclass(frozen=True)
class Mention:
    """One mention the importer decides on, with its assertion and where it stands."""

    kind: Literal["marker", "operation", "metastasis", "cancer", "stage"]
    name: str
    """The canonical name: marker symbol ('BRAF', 'FGFR2', 'MSI'), operation word, cancer type, 'metastasis'."""
    text: str
    """The words matched."""
    line: str
    """The whole line (the quote shown to the user)."""
    clause: str
    """The clause of the line the mention stands in (between ';' or '|')."""
    status: AssertionStatus
    section: str | None
    """medspaCy's section category (e.g. 'past_medical_history', 'family_history'), or the heading above the line."""

    @property
    def affirmed(self) -> bool:
        return self.status == "affirmed"

    def describe(self) -> str:
        where = f", section {self.section}" if self.section else ""
        return f'"{" ".join(self.line.split())[:140]}" ({self.status}{where})'


# ------------------------------------------------------------------------------------------ rules

KNOWN_MARKERS = {
    # Canonical name -> the pattern of its mention (case-sensitive where a lower-case word would be another thing).
    "HER2": r"\b(?:HER-?2(?:/neu)?|ERBB2|c-?erb-?B-?2)\b",
    "ER": r"\bER\b|(?i:\bo?estrogen receptor\b)",
    "PR": r"\bPg?R\b|(?i:\bprogesterone receptor\b)",
    "PD-L1": r"(?i:\bPD-?L1\b)",
    "MSI": r"\bMSI(?:-?H|-?L)?\b|\bMSS\b|\b[dp]MMR\b|\bMMR\b|(?i:\bmismatch repair\b)",
    "EGFR": r"\bEGFR\b",
    "ALK": r"\bALK\b",
    "ROS1": r"\bROS-?1\b",
    "KRAS": r"\bKRAS\b",
    "NRAS": r"\bNRAS\b",
    "BRAF": r"\bBRAF\b",
    "BRCA1": r"\bBRCA1\b",
    "BRCA2": r"\bBRCA2\b",
    "KIT": r"\b(?:c-?)?KIT\b|\bCD117\b",
    "PDGFRA": r"\bPDGFRA\b",
    "p53": r"\b(?:TP53|p53)(?![A-Za-z0-9])",
    "POLE": r"\bPOLE\b|(?i:\bpole)(?=\s*(?:status|mutat\w*|ultra\w*|not tested|:))",
    "NTRK": r"\bNTRK[123]?\b",
    "RET": r"\bRET\b",
    "MET": r"\bMET(?= (?:exon|amplif|mutat|fusion))",
    "Ki-67": r"(?i:\bKi-?67\b)",
    "CLDN18.2": r"(?i:\bclaudin[- ]?18\.?2\b|\bCLDN18\.?2\b)",
}
"""Markers with an established name; any other gene-like symbol next to an alteration word is found too."""

ALTERATION = (
    r"(?:fusion|rearrang\w*|mutat\w*|mutant|variant|amplif\w*|deletion|insertion|exon\s*\d+|[A-Z]\d{2,4}[A-Z*]|"
    r"expression|overexpress\w*|IHC|status|aberrant|abnormal|loss|positive|negative|detected|wild[- ]?type|carrier)"
)
OPEN_MARKER = re.compile(
    rf"(?<![-/])\b([A-Z]{{2,}}[A-Z0-9]{{0,5}}\d[A-Z0-9]{{0,3}})\b(?=[-\s:]{{1,3}}(?:[A-Z0-9]+[-\s])?(?:not\s+)?{ALTERATION})"
)
"""A gene-like symbol (letters with a digit: FGFR2, IDH1, PIK3CA, CDKN2A) followed by an alteration or result word."""
NOT_GENES = frozenset({"CA19", "CA125", "CA15", "T1", "T2", "T3", "T4", "N1", "N2", "N3", "M1", "CD7", "CK7", "CK20", "COVID19", "ECOG",
                       "DOG1", "TTF1", "CDX2", "GATA3", "SOX10", "PAX8", "CD20", "CD34", "CD3", "CD10", "HMB45"})
"""Symbols the open pattern would take for a gene: tumour markers in blood, TNM categories, immunostains of histology."""

POSITIVE_RESULT = re.compile(
    r"(?i)\b(?:positive|pos|detected|present|identified|mutat\w*|mutant|fusion|rearrang\w*|amplif\w*|over-?express\w*|"
    r"deletion|insertion|exon\s*\d+|aberrant|abnormal|deficient|high|carrier|3\s*\+)|\b[A-Z]\d{2,4}[A-Z*]\b|\bMSI-?H\b|\bdMMR\b"
)
"""A result word that states the alteration is there (its negation, "not detected", is ConText's to read)."""

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
    r"|\bnasopharyn\w*|\boral cavity\b|\bhypopharyn\w*",
    "endometrial": r"\bendometri\w*|\buterine\b|\bcorpus uteri\b",
    "cervical": r"\bcervi(?:x|cal) (?:cancer|carcinoma|mass|tumou?r)\b|\bcervix\b|\bLLETZ\b|\bcone biopsy\b",
    "hepatocellular": r"\bhepatocellular\b|\bHCC\b|\bBCLC\b",
    "oesophageal": r"\bo?esophag(?:us|eal)\b(?! ?junction)|\bo?esophagectomy\b",
    "sarcoma": r"\bsarcoma\b",
    "mesothelioma": r"\bmesothelioma\b",
    "thyroid": r"\bthyroid (?:cancer|carcinoma)\b|\b(?:papillary|follicular|medullary|anaplastic) thyroid\b|\bthyroidectomy\b",
    "sclc": r"\bsmall[- ]cell lung\b|\bSCLC\b",
    "cholangiocarcinoma": r"\bcholangiocarcinoma\b|\bbile duct (?:cancer|carcinoma)\b|\bbiliary tract (?:cancer|carcinoma)\b"
    r"|\b[idp]CCA\b|\bKlatskin\b",
    "gist": r"\bGIST\b|\bgastrointestinal stromal tumou?r\b",
    "gallbladder": r"\bgallbladder (?:cancer|carcinoma|adenocarcinoma)\b",
}
"""Words that name each cancer type (an open vocabulary: a type not listed here is asked for)."""
HISTOLOGY_TYPES = ("gist", "cholangiocarcinoma", "hepatocellular", "mesothelioma", "sclc", "melanoma", "gallbladder", "sarcoma")
"""Types named by their histology, whatever organ they arise in: a GIST of the stomach is a GIST, not gastric cancer.
Most specific first: a GIST discussed at the sarcoma MDT is a GIST."""

NAMED_RESULTS = {"MSS": "negative", "pMMR": "negative", "MSI-L": "negative", "MSI-H": "positive", "MSIH": "positive", "dMMR": "positive"}
"""Results that are their own name: microsatellite stable is MSI negative, mismatch-repair deficient is MSI positive."""

OPERATION_WORDS = (
    r"(?i)\b(?:\w+ectom(?:y|ies)|resect(?:ion|ed)|Whipple|wide local excision|WLE|debulking|cytoreduct\w*|TME|TLH|TAH|RALP|"
    r"lobectomy|pneumonectomy|Hartmann'?s|(?:wide |radical )?excision(?! biopsy)|surgery|operation)\b"
)
METASTASIS_WORDS = r"(?i)\bmetasta(?:ses|sis|tic)\b|\bmets\b|\bdistant (?:disease|spread)\b|\bM1[a-d]?\b"

CONTEXT_RULES: list[tuple[str, str, str]] = [
    # (literal or regex, ConText category, direction): what the default rules miss in oncology packets.
    ("not detected", "NEGATED_EXISTENCE", "BACKWARD"),
    ("not identified", "NEGATED_EXISTENCE", "BACKWARD"),
    ("not seen", "NEGATED_EXISTENCE", "BACKWARD"),
    ("not amplified", "NEGATED_EXISTENCE", "BACKWARD"),
    ("non-amplified", "NEGATED_EXISTENCE", "BACKWARD"),
    ("negative", "NEGATED_EXISTENCE", "BACKWARD"),
    ("wild-type", "NEGATED_EXISTENCE", "BACKWARD"),
    ("wild type", "NEGATED_EXISTENCE", "BACKWARD"),
    ("wildtype", "NEGATED_EXISTENCE", "BACKWARD"),
    ("proficient", "NEGATED_EXISTENCE", "BACKWARD"),
    ("none", "NEGATED_EXISTENCE", "BACKWARD"),
    ("no evidence of", "NEGATED_EXISTENCE", "FORWARD"),
    ("pending", "POSSIBLE_EXISTENCE", "BACKWARD"),
    ("awaited", "POSSIBLE_EXISTENCE", "BACKWARD"),
    ("to follow", "POSSIBLE_EXISTENCE", "BACKWARD"),
    ("requested", "POSSIBLE_EXISTENCE", "BACKWARD"),
    ("indeterminate", "POSSIBLE_EXISTENCE", "BIDIRECTIONAL"),
    ("equivocal", "POSSIBLE_EXISTENCE", "BIDIRECTIONAL"),
    ("cannot be excluded", "POSSIBLE_EXISTENCE", "BACKWARD"),
    ("cannot be ruled out", "POSSIBLE_EXISTENCE", "BACKWARD"),
    ("too small to characterise", "POSSIBLE_EXISTENCE", "BIDIRECTIONAL"),
    ("too small to characterize", "POSSIBLE_EXISTENCE", "BIDIRECTIONAL"),
    ("query", "POSSIBLE_EXISTENCE", "FORWARD"),
    ("?", "POSSIBLE_EXISTENCE", "FORWARD"),
    ("not tested", "NOT_TESTED", "BIDIRECTIONAL"),
    ("not done", "NOT_TESTED", "BACKWARD"),
    ("not performed", "NOT_TESTED", "BACKWARD"),
    ("not assessed", "NOT_TESTED", "BACKWARD"),
    ("if", "HYPOTHETICAL", "FORWARD"),
    ("previous", "HISTORICAL", "FORWARD"),
    ("carrier", "FAMILY_CARRIER", "BACKWARD"),
    ("never-smoker", "PSEUDO", "PSEUDO"),
    ("never smoker", "PSEUDO", "PSEUDO"),
    ("never smoked", "PSEUDO", "PSEUDO"),
    ("non-smoker", "PSEUDO", "PSEUDO"),
    ("no longer", "PSEUDO", "PSEUDO"),
]
"""The project's ConText rules (on top of medspaCy's defaults). "?" scopes one target ("?nodal disease");
"carrier" is read with the family cue in the same clause ("brother ... BRCA2 carrier")."""

OTHER_DISEASE_STAGE = re.compile(
    r"(?i)\b(?:CKD|chronic kidney disease|kidney disease|renal (?:failure|impairment)|NYHA|heart failure|COPD|GOLD|"
    r"fibrosis|cirrhosis|Child-?Pugh|pressure (?:ulcer|injury)|hypertension|lymphoedema|sleep)\W{0,3}$"
)
"""A stage right after these words is a comorbidity's ("CKD stage 2", "COPD GOLD stage 2"), not the cancer's: the importer
does not read it and no regex edit rewrites it."""

FAMILY_WORDS = re.compile(r"(?i)\b(?:mother|father|brother|sister|sibling|son|daughter|aunt|uncle|cousin|grand\w+|family|FHx|FH)\b")


# ------------------------------------------------------------------------------------------ pipeline


def _quiet_pyrush() -> None:
    """PyRuSH logs every sentence at DEBUG level through loguru: silence it (it would flood every command)."""
    try:
        # deferred: loguru comes with PyRuSH, which this module loads only in pipeline()
        from loguru import logger

        logger.disable("PyRuSH")
    except ImportError:  # pragma: no cover - loguru comes with PyRuSH
        pass


@functools.cache
def pipeline():
    """The medspaCy pipeline, built once per process (loading rules and matchers costs about a second)."""
    _quiet_pyrush()
    # deferred: medspaCy and spaCy cost 1.9 s of CPU to import (measured), and every catalog command imports this
    # module through mutate.py; only reading a packet needs them. PyRuSH's logger is quieted before they load.
    import medspacy
    from medspacy.context import ConTextRule
    from medspacy.ner import TargetRule
    from spacy.language import Language

    if not Language.has_factory("clinical_cf_clauses"):

        @Language.component("clinical_cf_clauses")
        def clauses(doc):
            # A clause ends at ";" or "|" (list items, table cells): a negation does not reach the next item.
            for i in range(1, len(doc)):
                before = doc[i - 1]
                if before.text in (";", "|") or "\n" in before.text or (before.text == "." and before.whitespace_):
                    doc[i].is_sent_start = True
            return doc

    nlp = medspacy.load(medspacy_enable=["medspacy_pyrush"])
    nlp.add_pipe("clinical_cf_clauses")
    nlp.add_pipe("medspacy_target_matcher")
    nlp.add_pipe("medspacy_context", config={"rules": None})
    # A section heading inside a line ("History: FIGO stage IB ... Recurrence with lung metastases.") reaches to the end
    # of its sentence, not of the line.
    nlp.add_pipe("medspacy_sectionizer", config={"rules": "default", "apply_sentence_boundary": True})
    targets = [TargetRule(name, "MARKER", pattern=pattern) for name, pattern in KNOWN_MARKERS.items()]
    targets.append(TargetRule("open_marker", "MARKER", pattern=OPEN_MARKER.pattern))
    targets += [TargetRule(name, "CANCER", pattern=pattern) for name, pattern in CANCER_WORDS.items()]
    targets.append(TargetRule("operation", "OPERATION", pattern=OPERATION_WORDS))
    targets.append(TargetRule("metastasis", "METASTASIS", pattern=METASTASIS_WORDS))
    nlp.get_pipe("medspacy_target_matcher").add(targets)
    # medspaCy's default rules, but ": no" both ways: backward only ("Fever: no") it also swallows the forward
    # "no" of "CT 20/01/2026: no metastases" (the longer modifier wins) and the metastases read as found.
    rules = [r for r in ConTextRule.from_json(_default_context_rules()) if r.literal.lower() != ": no"]
    rules.append(ConTextRule(": no", "NEGATED_EXISTENCE", direction="BIDIRECTIONAL"))
    for literal, category, direction in CONTEXT_RULES:
        if literal == "?":
            rules.append(ConTextRule("?", category, pattern=[{"TEXT": "?"}], direction=direction, max_scope=2))
        elif direction == "BACKWARD" and category == "NEGATED_EXISTENCE":
            # A result word reaches back over the marker and its variant only ("KIT exon 11 not detected"), not
            # over the clause ("CD117 (KIT) positive, DOG1 positive, desmin negative").
            rules.append(ConTextRule(literal, category, direction=direction, max_scope=4))
        else:
            rules.append(ConTextRule(literal, category, direction=direction))
    # "Seen with daughter" is a companion, not a family history: a family word after "with"/"by" is no family cue.
    relatives = ["daughter", "son", "wife", "husband", "partner", "mother", "father", "sister", "brother", "family"]
    companion = [{"LOWER": {"IN": ["with", "by"]}}, {"LOWER": {"IN": ["his", "her", "their"]}, "OP": "?"}, {"LOWER": {"IN": relatives}}]
    rules.append(ConTextRule("accompanied by a relative", "PSEUDO", pattern=companion, direction="PSEUDO"))
    nlp.get_pipe("medspacy_context").add(rules)
    return nlp


def _default_context_rules():
    # deferred: medspaCy (see pipeline())
    import medspacy.context.context as context_module

    return Path(context_module.__file__).resolve().parents[2] / "resources" / "en" / "context_rules.json"


# ------------------------------------------------------------------------------------------ reading

_HEADING_ONLY = re.compile(r"^\s*(?:[-*#=]+\s*)?([A-Za-z][A-Za-z /&()-]{1,40}?)\s*:?\s*$")


def _status(ent, clause: str) -> AssertionStatus:
    categories = {m.category for m in getattr(ent._, "modifiers", ())}
    if ent._.is_family or ("FAMILY_CARRIER" in categories and FAMILY_WORDS.search(clause)):
        return "family"
    if ent._.is_hypothetical:
        return "hypothetical"
    if ent._.is_negated:
        return "negated"
    if "NOT_TESTED" in categories:
        return "not_tested"
    if ent._.is_uncertain:
        return "uncertain"
    if ent._.is_historical:
        return "historical"
    return "affirmed"


def _canonical_marker(text: str, tail: str) -> str | None:
    """The marker's canonical name; None for a match the case-sensitive pattern refuses ("eGFR" is a kidney function).

    `tail` is the text from the mention on (a pattern may need what follows: "pole: not tested", not "upper pole").
    """
    for name, pattern in KNOWN_MARKERS.items():
        m = re.match(pattern, tail)
        if m and m.end() == len(text):
            return name
    return text if re.fullmatch(r"[A-Z]{2,}[A-Z0-9]{0,5}\d[A-Z0-9]{0,3}", text) else None


def read_mentions(text: str) -> tuple[list[Mention], list[str]]:
    """Every marker, operation and metastasis mention of `text` with its assertion status; notes on what was cut."""
    notes = []
    if len(text) > MAX_CHARS:
        notes.append(f"assertions read in the first {MAX_CHARS:,} of {len(text):,} characters")
        text = text[:MAX_CHARS]
    nlp = pipeline()
    heading: str | None = None
    inputs: list[tuple[str, str, int]] = []
    long_lines = 0
    for raw in text.split("\n"):
        line = raw.strip()
        if not line:
            heading = None
            continue
        only = _HEADING_ONLY.match(line)
        if only and (line.endswith(":") or len(line.split()) <= 3) and not re.search(r"\d", line):
            heading = only.group(1)
            continue
        if len(line) > MAX_LINE_CHARS:
            long_lines += 1
            line = line[:MAX_LINE_CHARS]
        prefix = f"{heading}: " if heading else ""
        # "p53_ihc: aberrant": a registry key's underscore would glue the marker to its key (same length, same offsets).
        inputs.append((prefix + line.replace("_", " "), line, len(prefix)))
    if long_lines:
        notes.append(f"{long_lines} line(s) longer than {MAX_LINE_CHARS:,} characters were read in their first {MAX_LINE_CHARS:,}")
    mentions: list[Mention] = []
    with warnings.catch_warnings():
        # spaCy W036: a medspaCy matcher without patterns of a category (the sectionizer's optional ones) warns per doc.
        warnings.filterwarnings("ignore", message=r".*\[W036\]")
        docs = list(nlp.pipe(t for t, _, _ in inputs))
    for doc, (_, line, offset) in zip(docs, inputs, strict=True):
        for ent in doc.ents:
            if ent.start_char < offset:
                continue
            clause = ent.sent.text.strip()
            section = ent._.section_category
            if ent.label_ == "MARKER":
                name = _canonical_marker(ent.text, doc.text[ent.start_char :])
                if name is None or name in NOT_GENES or doc.text[max(0, ent.start_char - 1) : ent.start_char] in ("-", "/"):
                    continue  # not a marker, a histology stain, or a fusion partner ("FGFR2-BICC1")
                kind = "marker"
            elif ent.label_ == "OPERATION":
                kind, name = "operation", ent.text.lower()
            elif ent.label_ == "CANCER":
                kind, name = "cancer", ent.label_ and _cancer_name(ent.text)
                if name is None:
                    continue
            else:
                kind, name = "metastasis", "metastasis"
            mentions.append(Mention(kind, name, ent.text, line, clause, _status(ent, clause), section))  # type: ignore[arg-type]
    return mentions, notes


def _cancer_name(text: str) -> str | None:
    for name, pattern in CANCER_WORDS.items():
        if re.fullmatch(f"(?:{pattern})", text, re.IGNORECASE):
            return name
    return None


def marker_result(mention: Mention) -> str | None:
    """The status a marker mention states: negative (negated), positive (an affirmed alteration word), else None (ask).

    Uncertain, hypothetical, historical, family and pending mentions state no result of the patient's now.
    """
    if mention.status == "negated":
        return "negative"
    if mention.status == "not_tested":
        return "not_tested"
    if mention.status != "affirmed":
        return None
    if mention.text in NAMED_RESULTS:
        return NAMED_RESULTS[mention.text]
    after = mention.clause[mention.clause.find(mention.text) :] if mention.text in mention.clause else mention.clause
    return "positive" if POSITIVE_RESULT.search(after) else None


def marker_findings(mentions: list[Mention]) -> dict[str, tuple[str | None, Mention]]:
    """Per marker, (the status the packet states, the mention it comes from).

    The first affirmed or negated result wins; mentions that state no result (uncertain, hypothetical, family,
    historical, a bare name) are kept only when nothing better is found, with no status, so the question shows
    them and asks.
    """
    found: dict[str, tuple[str | None, Mention]] = {}
    conflicting: set[str] = set()
    for m in mentions:
        if m.kind != "marker":
            continue
        result = marker_result(m)
        have = found.get(m.name)
        if have is None or (have[0] is None and result is not None):
            found[m.name] = (result, m)
        elif result is not None and have[0] is not None and result != have[0] and {result, have[0]} != {"not_tested"}:
            conflicting.add(m.name)
    for name in conflicting:
        found[name] = (None, found[name][1])  # two results disagree: ask, quoting the first
    return found


@functools.lru_cache(maxsize=8192)
def span_status(line: str, start: int, end: int) -> AssertionStatus:
    """The assertion status of the words line[start:end] (a vocabulary term's match), read by ConText in its line.

    The importer reads the catalog's vocabulary ("unresected", "treatment-naive", HER2 status) through this, so a
    "not" or an "if" before a term is ConText's to judge, not a word list's.
    """
    line = line[:MAX_LINE_CHARS]
    if end > len(line) or start >= end:
        return "affirmed"
    nlp = pipeline()
    doc = nlp.make_doc(line.replace("_", " "))
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r".*\[W036\]")
        for name, component in nlp.pipeline:
            if name == "medspacy_target_matcher":
                span = doc.char_span(start, end, label="TERM", alignment_mode="expand")
                doc.ents = [span] if span is not None else []
                continue
            doc = component(doc)
    if not doc.ents:
        return "affirmed"
    ent = doc.ents[0]
    return _status(ent, ent.sent.text)
