"""Are counterfactuals correct and complete on packets written by others?

A corpus of hand-written packets lists, per packet, the interventions that must apply
(`must_apply`, with what the counterfactual must no longer say and what it must say) and
those whose edit the history makes impossible (`must_flag`, which must be dropped for
residue). This module expands the corpus through the catalog and grades each must-apply
tuple against those written expectations, independently of the catalog's own residue
vocabulary, so the measurement can disagree with the residue check.

Outcomes per must-apply tuple: `complete` (applied, no residue, expectations met),
`not_applicable` (the filter excluded it), `noop`, `incoherent`, `residue` (dropped by the
residue check), `incomplete` (scored but an `absent` phrase survived or no `present`
phrase appeared: residue the check missed).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from clinical_cf.catalog.css.expand import CSSTuple, MutationMode, expand_tuples
from clinical_cf.catalog.css.interventions import Catalog
from clinical_cf.catalog.css.schema import Case
from clinical_cf.core.errors import validation_errors
from clinical_cf.core.loading import load_yaml


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MustApply(_Strict):
    id: str
    absent: list[str] = Field(default_factory=list, description="Phrases a complete counterfactual no longer contains.")
    present: list[str] = Field(default_factory=list, description="At least one must appear (empty: no requirement).")


class MustFlag(_Strict):
    id: str
    why: str = Field(min_length=10)


class CorpusEntry(_Strict):
    style: str
    must_apply: list[MustApply] = Field(default_factory=list)
    must_flag: list[MustFlag] = Field(default_factory=list)
    case: Case


def load_corpus(path: str | Path) -> list[CorpusEntry]:
    path = Path(path)
    raw = load_yaml(path)  # bounded: size, depth, aliases, duplicate keys, non-finite numbers
    entries = []
    for i, item in enumerate((raw or {}).get("cases", [])):
        entry_id = (item.get("case") or {}).get("case_id", f"#{i}") if isinstance(item, dict) else f"#{i}"
        try:
            entries.append(CorpusEntry.model_validate(item))
        except ValidationError as ex:
            raise validation_errors(path, entry_id, ex) from None
    return entries


@dataclass
class Graded:
    case_id: str
    style: str
    intervention_id: str
    outcome: str
    detail: str = ""


@dataclass
class CorpusReport:
    graded: list[Graded]
    flagged: list[Graded]
    drop_counts: dict[str, Counter] = field(default_factory=dict)

    @property
    def must_apply(self) -> int:
        return len(self.graded)

    @property
    def complete(self) -> int:
        return sum(g.outcome == "complete" for g in self.graded)

    @property
    def recall(self) -> float:
        return self.complete / self.must_apply if self.must_apply else 0.0

    @property
    def scored_with_residue(self) -> int:
        """Scored must-apply tuples that still carry the original fact (by the written expectations)."""
        return sum(g.outcome == "incomplete" for g in self.graded)

    @property
    def scored(self) -> int:
        return sum(g.outcome in ("complete", "incomplete") for g in self.graded)

    def outcomes(self) -> Counter:
        return Counter(g.outcome for g in self.graded)


def _grade(t: CSSTuple, spec: MustApply) -> tuple[str, str]:
    text = t.counterfactual.text.lower()
    survived = [a for a in spec.absent if a.lower() in text]
    missing = bool(spec.present) and not any(p.lower() in text for p in spec.present)
    if survived or missing:
        why = (f"still says {survived}" if survived else "") + ("; " if survived and missing else "")
        why += f"says none of {spec.present}" if missing else ""
        return "incomplete", why
    return "complete", ""


def evaluate_corpus(entries: list[CorpusEntry], catalog: Catalog, mode: MutationMode = "regex") -> CorpusReport:
    """Grade every must-apply and must-flag tuple of the corpus under the catalog."""
    cases = [e.case for e in entries]
    expansion = expand_tuples(cases, catalog, mode, residue="drop")
    kept = {t.id: t for t in expansion.tuples}
    dropped = {t.id: t for t in expansion.dropped}
    graded: list[Graded] = []
    flagged: list[Graded] = []
    for entry in entries:
        case = entry.case
        for spec in entry.must_apply:
            tid = f"{case.case_id}:{spec.id}"
            intervention = catalog.by_id(spec.id)
            if tid in kept:
                outcome, detail = _grade(kept[tid], spec)
            elif tid in dropped:
                outcome = "residue"
                detail = "; ".join(f"[{h.section}] {h.line[:90]}" for h in dropped[tid].residue[:3])
            elif not intervention.applies_to.matches(case):
                outcome, detail = "not_applicable", ""
            elif (exclusion := intervention.excluded_by(case)) is not None:
                # The corpus predates the catalog's scopes (v4): the intervention's direction does not hold here.
                outcome, detail = "out_of_scope", exclusion.reason
            else:
                reasons = expansion.counts[spec.id].incoherent_reasons
                mine = [r for r in reasons if r.startswith(f"{case.case_id}:")]
                outcome, detail = ("incoherent", mine[0]) if mine else ("noop", "")
            graded.append(Graded(case.case_id, entry.style, spec.id, outcome, detail))
        for flag in entry.must_flag:
            tid = f"{case.case_id}:{flag.id}"
            outcome = "flagged" if tid in dropped else ("scored" if tid in kept else "not_expanded")
            flagged.append(Graded(case.case_id, entry.style, flag.id, outcome, flag.why))
    drops = {iid: Counter({"noop": c.noop, "incoherent": c.incoherent, "residue": c.residue, "scored": c.scored})
             for iid, c in expansion.counts.items() if c.eligible}
    return CorpusReport(graded, flagged, drops)
