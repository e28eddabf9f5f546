"""MedPIC questions: schema, loading, and the self-check that recomputes every gold answer.

A question is a vignette, a medication-safety stem and lettered options (the last is usually
"None of the above"); `answer` is the sorted list of correct letters (exact set match).
Guideline-following (GF) questions present a fixed case. Counterfactual (CF) questions come in
linked pairs (`pair_id`) built from one base case that differs only in the rule-relevant patient
information: the member whose change makes the rule apply has operation `activation`, the member
whose change withdraws it has operation `deactivation` (seed 002, §3.2 and §4.1).

Questions the generator wrote carry their structured `patient` facts and `option_drugs`, so
`self_check` recomputes each gold answer from the rules instead of trusting the text. A user's
own question file may leave both out; it is then validated for shape only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from clinical_cf.catalog.medpic import QUESTIONS_PATH
from clinical_cf.catalog.medpic.rules import PatientFacts, Rule, drug_flagged
from clinical_cf.core.errors import CatalogError
from clinical_cf.core.loading import load_jsonl

__all__ = ["NONE_OF_THE_ABOVE", "QUESTIONS_PATH", "ChangedFact", "Dimensions", "Question", "load_questions", "self_check"]

NONE_OF_THE_ABOVE = "None of the above"
DIMENSIONS = ("organ_system", "department", "drug_category", "special_population", "patient_info_type", "reasoning_operation")


class Dimensions(BaseModel):
    """The six annotation dimensions of seed 002 (Figure 3)."""

    model_config = ConfigDict(extra="forbid")

    organ_system: str
    department: str
    drug_category: str
    special_population: str
    patient_info_type: str
    reasoning_operation: str


class ChangedFact(BaseModel):
    """The patient information a CF question changed relative to its partner (used by the rationale analysis)."""

    model_config = ConfigDict(extra="forbid")

    kind: str
    before: str
    after: str
    description: str


class Question(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    rule_id: str = Field(min_length=1)
    kind: Literal["gf", "cf"]
    operation: Literal["activation", "deactivation"] | None = None
    pair_id: str | None = None
    vignette: str = Field(min_length=10)
    question: str = Field(min_length=5)
    options: dict[str, str] = Field(min_length=2)
    answer: list[str] = Field(min_length=1)
    multi_select: bool = True
    dimensions: Dimensions
    changed_fact: ChangedFact | None = None
    source: str = Field(min_length=3)
    patient: PatientFacts | None = None
    option_drugs: dict[str, str | None] | None = None

    @model_validator(mode="after")
    def _coherent(self) -> Question:
        letters = list(self.options)
        if any(len(k) != 1 or not k.isupper() for k in letters):
            raise ValueError("option keys must be single capital letters")
        if letters != [chr(ord("A") + i) for i in range(len(letters))]:
            raise ValueError("option letters must run A, B, C, ... in order")
        if self.answer != sorted(set(self.answer)) or any(a not in self.options for a in self.answer):
            raise ValueError("answer must be a sorted list of distinct option letters")
        if not self.multi_select and len(self.answer) != 1:
            raise ValueError("a single-select question needs exactly one answer")
        if self.kind == "gf" and self.operation is not None:
            raise ValueError("a GF question has no operation")
        if self.kind == "cf" and (self.operation is None or self.pair_id is None):
            raise ValueError("a CF question needs an operation and a pair_id")
        if self.option_drugs is not None and set(self.option_drugs) != set(self.options):
            raise ValueError("option_drugs must have exactly the option letters")
        return self

    @property
    def none_letter(self) -> str | None:
        return next((k for k, v in self.options.items() if v.strip().lower() == NONE_OF_THE_ABOVE.lower()), None)


def load_questions(path: str | Path = QUESTIONS_PATH) -> list[Question]:
    """Load and validate a questions JSONL; pair ids must link exactly one activation and one deactivation member."""
    questions = load_jsonl(path, Question, "id")
    pairs: dict[str, list[Question]] = {}
    for q in questions:
        if q.pair_id:
            pairs.setdefault(q.pair_id, []).append(q)
    for members in pairs.values():
        ops = sorted(m.operation or "gf" for m in members)
        if ops != ["activation", "deactivation"]:
            raise CatalogError(path, f"pair must have one activation and one deactivation member (got {ops})",
                               entry=members[0].id, field="pair_id")
        if members[0].options != members[1].options or members[0].question != members[1].question:
            raise CatalogError(path, "pair members must share the question stem and options", entry=members[0].id, field="options")
    return questions


def gold_from_facts(q: Question, rules: list[Rule]) -> list[str]:
    """The answer recomputed from the structured facts: options whose drug a rule flags, else None of the above."""
    assert q.patient is not None and q.option_drugs is not None
    flagged = sorted(k for k, drug in q.option_drugs.items() if drug and drug_flagged(drug, q.patient, rules))
    if flagged:
        return flagged
    return [q.none_letter] if q.none_letter else []


def self_check(questions: list[Question], rules: list[Rule]) -> list[str]:
    """Problems found (empty when consistent).

    - every gold answer equals the one recomputed from the patient facts and the rules;
    - in each pair the members share options and stem, the activation member's answer contains a
      letter of the rule's drug and the deactivation member's does not, and apart from that (and
      "None of the above") the two answers are the same set;
    - only the patient information the CF names differs between the members' facts.
    """
    by_id = {r.id: r for r in rules}
    problems: list[str] = []
    pairs: dict[str, dict[str, Question]] = {}
    for q in questions:
        if q.rule_id not in by_id:
            problems.append(f"{q.id}: unknown rule {q.rule_id}")
            continue
        if q.patient is not None and q.option_drugs is not None:
            gold = gold_from_facts(q, rules)
            if gold != q.answer:
                problems.append(f"{q.id}: answer {q.answer} but the facts give {gold}")
        if q.pair_id and q.operation:
            pairs.setdefault(q.pair_id, {})[q.operation] = q
    for pair_id, members in sorted(pairs.items()):
        act, deact = members.get("activation"), members.get("deactivation")
        if act is None or deact is None:
            problems.append(f"{pair_id}: incomplete pair")
            continue
        if act.options != deact.options or act.question != deact.question:
            problems.append(f"{pair_id}: members differ in options or stem")
        rule = by_id.get(act.rule_id)
        drugs = act.option_drugs or {}
        target = {k for k, d in drugs.items() if rule and d and d.lower() in rule.names()}
        none = act.none_letter
        a, d = set(act.answer) - {none}, set(deact.answer) - {none}
        if not target or not target <= a or target & d:
            problems.append(f"{pair_id}: rule drug {sorted(target)} must be in the activation answer {act.answer} "
                            f"and not in the deactivation answer {deact.answer}")
        elif a - target != d:
            problems.append(f"{pair_id}: answers differ beyond the rule drug ({act.answer} vs {deact.answer})")
        if act.patient and deact.patient:
            diff = {k for k, v in act.patient.model_dump().items() if deact.patient.model_dump()[k] != v}
            allowed = _allowed_fields(act.changed_fact.kind if act.changed_fact else "")
            if not diff or not diff <= allowed:
                problems.append(f"{pair_id}: facts differ in {sorted(diff)}, expected only {sorted(allowed)}")
        if act.vignette == deact.vignette:
            problems.append(f"{pair_id}: identical vignettes")
    return problems


def _allowed_fields(kind: str) -> set[str]:
    return {
        "age": {"age_years"},
        "crcl": {"crcl"},
        "egfr": {"egfr"},
        "weight": {"weight_kg"},
        "gestational_week": {"gestational_week"},
        "pregnant": {"pregnant", "gestational_week"},
        "lactating": {"lactating"},
        "condition": {"conditions"},
        "co_medication": {"co_medications"},
        "exception": {"conditions", "co_medications"},
    }.get(kind, set())
