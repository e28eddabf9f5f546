"""Build the MedPIC tasks (seed 002): GF and paired CF medication-safety questions, zero-shot, exact set match."""

from __future__ import annotations

from typing import get_args

from clinical_cf.core.errors import CatalogError
from clinical_cf.core.loading import comma_list
from clinical_cf.core.locking import check_lock
from clinical_cf.catalog.medpic import QUESTIONS_PATH, RULES_PATH
from clinical_cf.catalog.medpic.generate import generate
from clinical_cf.catalog.medpic.questions import (
    DIMENSIONS,
    Question,
    load_questions,
    self_check,
)
from clinical_cf.catalog.medpic.rules import Population, load_rules
from clinical_cf.exports.register import published_version
from clinical_cf.registration import register_inputs, registration_check
from clinical_cf.scorers.medpic import medpic_exact_set, rationale_mentions_change
from clinical_cf.solvers.medpic import medpic_answer, render_prompt
from clinical_cf.tasks.arguments import GENERATE_DEFAULTS, TaskInputError, clean_task_errors, flag, input_file, selection
from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample

KINDS = ("gf", "cf")
OPERATIONS = ("activation", "deactivation")
POPULATIONS: tuple[str, ...] = get_args(Population)


def medpic_samples(questions: list[Question], catalog_sha256: str, registered: bool) -> list[Sample]:
    """One sample per question; pair members are separate samples whose prompts never mention each other."""
    by_pair: dict[str, list[Question]] = {}
    for q in questions:
        if q.pair_id:
            by_pair.setdefault(q.pair_id, []).append(q)
    samples = []
    for q in questions:
        partner = next((p for p in by_pair.get(q.pair_id or "", []) if p.id != q.id), None)
        samples.append(Sample(
            id=q.id,
            input=render_prompt(q),
            target=",".join(q.answer),
            metadata={
                "rule_id": q.rule_id, "kind": q.kind, "operation": q.operation, "pair_id": q.pair_id,
                "answer": q.answer, "options": q.options, "multi_select": q.multi_select,
                **{d: getattr(q.dimensions, d) for d in DIMENSIONS},
                "changed_fact": q.changed_fact.model_dump() if q.changed_fact else None,
                "partner_id": partner.id if partner else None,
                "partner_answer": partner.answer if partner else None,
                "source": q.source, "catalog_sha256": catalog_sha256, "catalog_registered": registered,
            },
        ))
    return samples


@clean_task_errors
def build_medpic_task(
    kinds: str | list[str] = "gf,cf",
    operations: str | list[str] | None = None,
    populations: str | list[str] | None = None,
    rules: str | None = None,
    questions: str | None = None,
    allow_unregistered: bool = False,
    rationale_judge: bool = False,
    name: str = "medpic",
    json_schema: bool = True,
    reader: str = "reader",
) -> Task:
    """MedPIC-Bench-style questions: which medications are potentially inappropriate for this patient.

    Args:
        kinds: Comma-separated question kinds to run: gf, cf.
        operations: Only CF questions with these operations (activation, deactivation); GF questions are kept.
        populations: Only rules for these populations (older_adult, pregnancy, lactation, paediatric, renal, general).
        rules: Rules YAML (default: the bundled catalog; needs its lock unless allow_unregistered).
        questions: Questions JSONL (default: the bundled MedRule2Pair questions, or, with your own `rules`,
            questions generated from them). Questions carrying structured patient facts are re-checked
            against the rules before the run.
        allow_unregistered: Run a rules file that has no lock or no longer matches it.
        rationale_judge: Also run the rationale analysis on wrong deactivation answers (needs a judge role).
        name: Task name in the log.
        json_schema: Request the reply as structured output (`response_schema`); false for providers that reject it.
        reader: Model role that reads replies the answer JSON or ANSWER: line does not state; "none" turns it off.
    """
    wanted_kinds = selection("kinds", kinds, KINDS)
    wanted_ops = selection("operations", operations, OPERATIONS) if comma_list(operations) else None
    wanted_pops = selection("populations", populations, POPULATIONS) if comma_list(populations) else None
    allow_unregistered = flag("allow_unregistered", allow_unregistered)
    rationale_judge = flag("rationale_judge", rationale_judge)
    rules_path = input_file("rules", rules) or RULES_PATH
    user_questions = input_file("questions", questions)
    # Questions generated from the user's own rules come from no file; otherwise the questions file is data.
    question_files = [user_questions or QUESTIONS_PATH] if (user_questions or not rules) else []
    registration = register_inputs([rules_path], question_files, allow_unregistered)
    lock = check_lock(rules_path, allow_unregistered=allow_unregistered)
    rule_list = load_rules(rules_path)
    if user_questions:
        questions_path = user_questions
        items = load_questions(questions_path)
    elif rules:
        # Your own rules without a question file: MedRule2Pair generates the questions from them (deterministic).
        questions_path = rules_path
        items = generate(rule_list)
    else:
        questions_path = QUESTIONS_PATH
        items = load_questions(questions_path)
    problems = self_check(items, rule_list)
    if problems:
        raise CatalogError(questions_path, f"{len(problems)} question(s) disagree with the rules in {rules_path.name}: "
                           + "; ".join(problems[:5]))
    by_rule = {r.id: r for r in rule_list}
    items = [
        q for q in items
        if q.kind in wanted_kinds
        and (wanted_ops is None or q.kind == "gf" or q.operation in wanted_ops)
        and (wanted_pops is None or by_rule[q.rule_id].population in wanted_pops)
    ]
    if not items:
        raise TaskInputError(f"no questions match kinds={sorted(wanted_kinds)}, operations={operations!r}, "
                             f"populations={populations!r} in {questions_path}")
    scorers = [medpic_exact_set(reader=reader), registration_check()]
    if rationale_judge:
        scorers.append(rationale_mentions_change(reader=reader))
    return Task(
        version=published_version("medpic"),  # the suite's Register version N-X, so the log names it
        dataset=MemoryDataset(registration.stamp(medpic_samples(items, lock.catalog_sha256, lock.registered)), name=name),
        # Zero-shot: one generation from the rendered prompt (the sample input); no partner is shown.
        solver=medpic_answer(json_schema=flag("json_schema", json_schema)),
        scorer=scorers,
        config=GENERATE_DEFAULTS,
        name=name,
        metadata={"suite": "medpic", "catalog_sha256": lock.catalog_sha256, "catalog_registered": lock.registered,
                  "questions": len(items), "rules_file": rules_path.name, "questions_file": questions_path.name,
                  **registration.task_metadata()},
    )
