"""Build the MedPIC tasks (seed 002): GF and paired CF medication-safety questions, zero-shot, exact set match."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Annotated, Any, get_args

from inspect_ai import Task
from inspect_ai.dataset import Sample

from clinical_cf.catalog.medpic import QUESTIONS_PATH, RULES_PATH
from clinical_cf.catalog.medpic.generate import generate
from clinical_cf.catalog.medpic.questions import (
    DIMENSIONS,
    Question,
    load_questions,
    self_check,
)
from clinical_cf.catalog.medpic.rules import Population, load_rules
from clinical_cf.core.errors import CatalogError
from clinical_cf.scorers.medpic import medpic_exact_set, rationale_mentions_change
from clinical_cf.solvers.medpic import medpic_answer, render_prompt
from clinical_cf.suites import MEDPIC
from clinical_cf.tasks.arguments import Checked, CommaList, Only, RoleName, SelfJudging, TaskInputError, UserFile
from clinical_cf.tasks.build import TaskInputs, TaskParts, TaskSpec, build_task

KINDS = ("gf", "cf")
OPERATIONS = ("activation", "deactivation")
POPULATIONS: tuple[str, ...] = get_args(Population)


def medpic_samples(questions: list[Question]) -> list[Sample]:
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
                "source": q.source,
            },
        ))
    return samples


def _questions_file(args: SimpleNamespace) -> Path | None:
    """The questions file the task reads; none when MedRule2Pair generates them from the user's own rules."""
    if args.questions:
        return args.questions
    return None if args.rules else QUESTIONS_PATH


def _parts(args: SimpleNamespace) -> TaskParts:
    rules_path = args.rules or RULES_PATH
    rule_list = load_rules(rules_path)
    questions_path = _questions_file(args)
    if questions_path is not None:
        items = load_questions(questions_path)
    else:
        # Your own rules without a question file: MedRule2Pair generates the questions from them (deterministic).
        questions_path = rules_path
        items = generate(rule_list)
    problems = self_check(items, rule_list)
    if problems:
        raise CatalogError(questions_path, f"{len(problems)} question(s) disagree with the rules in {rules_path.name}: "
                           + "; ".join(problems[:5]))
    by_rule = {r.id: r for r in rule_list}
    items = [
        q for q in items
        if q.kind in args.kinds
        and (args.operations is None or q.kind == "gf" or q.operation in args.operations)
        and (args.populations is None or by_rule[q.rule_id].population in args.populations)
    ]
    if not items:
        shown = {key: sorted(value) if value is not None else None for key, value in
                 (("kinds", args.kinds), ("operations", args.operations), ("populations", args.populations))}
        raise TaskInputError("no questions match " + ", ".join(f"{k}={v!r}" for k, v in shown.items()) + f" in {questions_path}")
    return TaskParts(
        samples=medpic_samples(items),
        # Zero-shot: one generation from the rendered prompt (the sample input); no partner is shown.
        solver=medpic_answer(json_schema=args.json_schema),
        scorers=[
            medpic_exact_set(reader=args.reader, json_schema=args.json_schema),
            *([rationale_mentions_change(reader=args.reader, json_schema=args.json_schema)] if args.rationale_judge else []),
        ],
        dataset=args.name,
        metadata={"questions": len(items), "rules_file": rules_path.name, "questions_file": questions_path.name},
    )


def _task_name(name: str, value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise TaskInputError(f"task argument '{name}': got {value!r}; expected a task name")
    return value


# Each MedPIC argument's type and choices, declared once: the builder and the public MedPIC tasks annotate with these.
Kinds = Annotated[str | list[str], CommaList(KINDS)]
# What only counterfactual questions use (a variant of GF questions only does not show it).
Operations = Annotated[str | list[str] | None, CommaList(OPERATIONS, optional=True), Only(kinds="cf")]
RationaleJudge = Annotated[bool, Only(kinds="cf")]
SelfJudgingCF = Annotated[SelfJudging, Only(kinds="cf")]
Populations = Annotated[str | list[str] | None, CommaList(POPULATIONS, optional=True)]
TaskName = Annotated[str, Checked(_task_name, "a task name")]


def build_medpic_task(
    kinds: Kinds = "gf,cf",
    operations: Operations = None,
    populations: Populations = None,
    rules: UserFile = None,
    questions: UserFile = None,
    allow_unregistered: bool = False,
    rationale_judge: RationaleJudge = False,
    name: TaskName = "medpic",
    json_schema: bool = True,
    reader: RoleName = "reader",
    self_judging: SelfJudgingCF = "refuse",
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
        json_schema: Request the reply as structured output (`response_schema`); false for providers that
            reject it (the prompt then asks for the paper's `ANSWER:` line).
        reader: Model role that reads a reply the schema JSON or closed answer line does not state
            (default: the `reader` role, else the judge role, else off; never the model under test), each
            reading verified against the reply's own words; "none" turns the reader off.
        self_judging: With `rationale_judge` and no judge role bound: "refuse" (default) does not start; "allow" lets the
            model under test judge its own rationales, and every score records `self_judged`.
    """
    return build_task(SPEC, **locals())


SPEC = TaskSpec(
    suite=MEDPIC,
    arguments=build_medpic_task,
    inputs=lambda args: TaskInputs(catalogs=[args.rules or RULES_PATH], data=[q] if (q := _questions_file(args)) else []),
    parts=_parts,
    task_name=lambda args: args.name,
    judged=lambda args: args.rationale_judge,
)
