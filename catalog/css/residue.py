"""Residue: what in a counterfactual packet still asserts or presupposes the original fact.

An edit that changes a fact in one place while another sentence still asserts it, or a
written plan still presupposes it (trastuzumab after a HER2-negative flip, "adjuvant
planning" after the resection was removed), yields a chart a careful reader treats as a
data-entry error. Such a tuple cannot be scored as if the model ignored the change. Each
intervention names, in the catalog, the implications of the original fact (a typed
vocabulary: status, agent, intent, timing, staging, history); after the edit every line of
all ten sections is scanned for them.

A match is cancelled by a negation cue in its own clause ("no trastuzumab", "HER2-directed
therapy not indicated") unless the term is itself a negative statement (`negatable: false`, or a
match that opens with the cue: "no prior systemic therapy", "NOT STARTED YET"), and by the term's
own `unless` pattern. Chart entries dated before the
intervention's `residue_since` date were written before the injected event and are history,
not residue.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from datetime import date, timedelta
from functools import lru_cache

from clinical_cf.catalog.css.assertions import OTHER_DISEASE_STAGE
from clinical_cf.catalog.css.dates import entry_dates, numeric_order
from clinical_cf.catalog.css.interventions import Implication, Intervention, ResidueTerm
from clinical_cf.catalog.css.schema import SECTIONS
from clinical_cf.catalog.css.sentences import wrapped_groups

NEGATION = re.compile(
    r"(?i)(?:\b(?:no|not|non|without|never|neither|nor|negative for|free of|ruled out|instead of|rather than|"
    r"avoid(?:ed|s|ing)?|contraindicat\w*|ineligible|inappropriate|no indication|n/a|absence of|absent)\b|\bnon-)"
)
POST_NEGATION = re.compile(
    r"(?i)^[^.;\n]{0,40}?\b(?:not (?:indicated|recommended|appropriate|advised|warranted|a candidate|eligible|an option|"
    r"offered|planned|given|pursued|required|needed)|contraindicated|ruled out|excluded|inappropriate)\b"
)
CLAUSE_BOUNDARY = re.compile(r"[;|\n()\[\]]|[.,](?!\d)|\s[-–]\s|:\s")


@dataclass(frozen=True)
class ResidueHit:
    """One line of a counterfactual packet that still asserts or presupposes the original fact."""

    section: str
    line: str
    implication: str
    kind: str
    match: str

    def describe(self) -> str:
        """The line and the term that matched it, as a drop names them (issue 43: a drop said "residue" only)."""
        return f"[{self.section}] {' '.join(self.line.split())[:160]} (residue term '{self.match}': {self.implication}/{self.kind})"

    def as_dict(self) -> dict[str, str]:
        return {"section": self.section, "line": self.line, "implication": self.implication, "kind": self.kind, "match": self.match}


@lru_cache(maxsize=2048)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


@lru_cache(maxsize=256)
def _boundaries(line: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(starts, ends) of the clause boundaries of a line, found once per line (linear)."""
    found = [(b.start(), b.end()) for b in CLAUSE_BOUNDARY.finditer(line)]
    return tuple(b[0] for b in found), tuple(b[1] for b in found)


def _clause_bounds(line: str, start: int, end: int) -> tuple[int, int]:
    """Start of the clause a match begins in, and end of the clause it ends in.

    Boundaries come from one scan of the line and a binary search, so a long unpunctuated
    line with many matches stays linear (issue 22: a per-match rescan was quadratic).
    """
    starts, ends = _boundaries(line)
    i = bisect.bisect_right(ends, start) - 1
    # The last boundary that ends at or before `start` (and begins before it) opens the clause.
    while i >= 0 and starts[i] >= start:
        i -= 1
    left = ends[i] if i >= 0 else 0
    j = bisect.bisect_left(starts, end)
    right = starts[j] if j < len(starts) else len(line)
    return left, right


def term_matches(term: ResidueTerm, line: str) -> list[str]:
    """The matches of `term` in one line that are not cancelled by negation or `unless`."""
    out = []
    for m in _compiled(term.pattern).finditer(line):
        left, right = _clause_bounds(line, m.start(), m.end())
        before = line[left : m.start()]
        after = line[m.end() : max(right, m.end())]
        # A term that is itself a negative statement ("NOT STARTED YET", "no prior therapy") is not cancelled by its own
        # words (issue 43: a user's residue term was silently cancelled); a cue inside the match ("HER2 is not positive")
        # or before it still cancels.
        inside = NEGATION.search(m.group(0))
        self_negative = inside is not None and inside.start() == 0
        if term.negatable and (NEGATION.search(before) or (inside and not self_negative) or POST_NEGATION.search(after)):
            continue
        if term.kind == "staging" and OTHER_DISEASE_STAGE.search(line[max(0, m.start() - 30) : m.start()]):
            continue  # "COPD GOLD stage 2", "CKD stage 3a": another disease's stage states nothing about the cancer
        if term.unless and _compiled(term.unless).search(line[left:right]):
            continue
        out.append(m.group(0))
    return out


def implication_hits(implication: Implication, line: str) -> list[tuple[ResidueTerm, str]]:
    return [(term, hit) for term in implication.terms for hit in term_matches(term, line)]


def scanned_lines(sections: dict[str, str], since: date | None = None) -> list[tuple[str, str]]:
    """(section, statement) pairs to scan: every logical line (a sentence wrapped over physical
    lines is one), except those in entries dated before `since`."""
    out = []
    order = numeric_order("\n".join(sections.get(name, "") for name in SECTIONS)) if since is not None else None
    for name in SECTIONS:
        text = sections.get(name, "")
        lines = text.split("\n")
        dated = entry_dates(text, order) if since is not None else [None] * len(lines)
        for group in wrapped_groups(text):
            line = " ".join(lines[i].strip() for i in group) if len(group) > 1 else lines[group[0]]
            whens = [dated[i] for i in group]
            if line.strip() and (since is None or any(w is None or w >= since for w in whens)):
                out.append((name, line))
    return out


def residue_since(intervention: Intervention, board_date: date) -> date | None:
    if intervention.residue_since is None:
        return None
    return board_date + timedelta(days=intervention.dates[intervention.residue_since])


def find_residue(
    sections: dict[str, str], intervention: Intervention, board_date: date, cancer_type: str | None = None
) -> list[ResidueHit]:
    """Every line of the packet that still asserts or presupposes what the intervention changed.

    An implication listed under `residue_only_for` is residue only for those tumour types
    (and, without a `cancer_type`, always).
    """
    hits: list[ResidueHit] = []
    since = residue_since(intervention, board_date)
    names = [
        n for n in intervention.residue
        if cancer_type is None or n not in intervention.residue_only_for or cancer_type in intervention.residue_only_for[n]
    ]
    for section, line in scanned_lines(sections, since):
        for name in names:
            for term, match in implication_hits(intervention.implication(name), line):
                hits.append(ResidueHit(section, line.strip(), name, term.kind, match))
                break  # one hit per implication and line is enough to name the line
    return hits
