"""The MedPIC suite (medication-safety questions, GF and paired CF): its spec and its scoring contract."""

from __future__ import annotations

from typing import Any

from clinical_cf import replies
from clinical_cf.catalog.medpic.questions import Question, load_questions
from clinical_cf.catalog.medpic.rules import load_rules
from clinical_cf.scorers import medpic as medpic_scorer
from clinical_cf.scorers.medpic import medpic_exact_set, rationale_mentions_change
from clinical_cf.scoring_contract import constants, patterns
from clinical_cf.solvers import medpic as medpic_solver
from clinical_cf.suites.spec import CATALOG_DIR, InputKind, Suite

_QUESTION = {
    "vignette": "A 79-year-old woman with insomnia.",
    "question": "Which medication should be avoided?",
    "options": {"A": "Diphenhydramine", "B": "Melatonin", "C": "Sleep hygiene"},
    "multi_select": True,
}


def prompts() -> dict[str, str]:
    plain = medpic_solver.render_prompt(_QUESTION)
    return {
        "rendered/medpic/plain": plain,
        "rendered/medpic/json": plain[: -len(medpic_solver.INSTRUCTION_PLAIN)] + medpic_solver.INSTRUCTION_JSON,
        "rendered/medpic/rationale_judge": medpic_scorer.rationale_prompt("CrCl 28 mL/min", "ANSWER: A"),
        "rendered/medpic/rationale_retry": medpic_scorer.RATIONALE_RETRY_PROMPT,
        "rendered/medpic/reader": replies.reader_prompt(medpic_solver.MEDPIC_READER, "Some reply."),
    }


def scoring() -> dict[str, Any]:
    return {
        **constants(
            medpic_solver,
            "PROMPT", "INSTRUCTION_PLAIN", "INSTRUCTION_JSON", "SINGLE_SELECT_NOTE", "NONE_TEXT", "PLACEHOLDERS", "MEDPIC_READER"
        ),
        "rendered/medpic/answer_schema": medpic_solver.answer_schema(_QUESTION["options"]),
        **constants(medpic_scorer, "RATIONALE_PROMPT", "RATIONALE_RETRY_PROMPT", "RESPONSE_CHARS", "MENTION_SCHEMA"),
        **patterns(medpic_solver),
    }


MEDPIC = Suite(
    name="medpic",
    reading_rules_version=3,  # issue 44: canonical text, revisions applied or unreadable, quotes hold their value
    # (2: issue 37: whole replies only, items are things, readings confirmed by agreement)
    title="MedPIC: counterfactual sensitivity to patient information in medication-safety reasoning",
    short_name="MedPIC",
    description=(
        "Multiple-choice medication-safety questions generated from sourced rules (AGS Beers 2023, pregnancy "
        "and lactation labelling, the KIDs List, renal dosing thresholds): guideline-following questions and "
        "counterfactual pairs that change only the rule-relevant patient information, so the rule activates "
        "or deactivates. Exact set match; GF, CF, activation, deactivation and pair accuracy with "
        "rule-clustered bootstrap CIs."
    ),
    source="Evaluating Counterfactual Sensitivity to Patient Information in Medication-Safety Reasoning (MedPIC-Bench, 2026)",
    arxiv="https://arxiv.org/abs/2608.03028",
    tags=("Medical", "Counterfactual", "Multiple-choice"),
    records="questions",
    data=CATALOG_DIR / "medpic" / "questions.jsonl",
    schema=Question,
    record_id="id",
    loader=load_questions,
    data_arg="questions",
    catalogs=(CATALOG_DIR / "medpic" / "rules.yaml",),
    generator="clinical_cf.catalog.medpic.generate",
    breakdown="kind",
    inputs=(
        InputKind("questions", load_questions, frozenset({"rule_id", "options"}), bundled=CATALOG_DIR / "medpic" / "questions.jsonl"),
        InputKind("rules", load_rules, frozenset({"rules"}), bundled=CATALOG_DIR / "medpic" / "rules.yaml"),
    ),
    scorers=(medpic_exact_set, rationale_mentions_change),
    scoring=scoring,
    prompts=prompts,
)
