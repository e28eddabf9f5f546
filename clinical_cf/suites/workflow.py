"""The workflow escalation suite (actions under missing, stale, conflicting and late information): its spec and its
scoring contract."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from clinical_cf import replies
from clinical_cf.catalog.workflow import LEXICAL_AUDIT_PATH
from clinical_cf.catalog.workflow.episodes import Episode, load_episodes
from clinical_cf.catalog.workflow.seeds import load_seeds
from clinical_cf.scorers import workflow as workflow_scorer
from clinical_cf.scorers.workflow import workflow_action
from clinical_cf.scoring_contract import constants, patterns
from clinical_cf.solvers import workflow as workflow_solver
from clinical_cf.suites.spec import CATALOG_DIR, InputKind, Suite


def _load_lexical_audit(path: Path) -> Any:
    # deferred: pandas (0.8 s), which its module loads and a task or a validator of another kind does not need.
    from clinical_cf.analysis.workflow_controller import load_audit

    return load_audit(path)


def prompts() -> dict[str, str]:
    prompts = {
        f"rendered/workflow/{condition}/{task_class}/{'json' if schema else 'plain'}": workflow_solver.system_prompt(
            condition, task_class, schema
        )
        for condition in workflow_solver.CONDITIONS
        for task_class in workflow_solver.CLASS_SEMANTICS
        for schema in (True, False)
    }
    prompts["rendered/workflow/reader"] = replies.reader_prompt(workflow_solver.WORKFLOW_READER, "Some reply.")
    return prompts


def scoring() -> dict[str, Any]:
    return {
        **constants(
            workflow_solver,
            "CONDITIONS", "ACTION_DEFINITIONS", "CLASS_SEMANTICS", "OUTPUT_FORMAT", "OUTPUT_FORMAT_PLAIN", "UNCERTAINTY_CHECKLIST",
            "SYSTEM_PROMPTS", "DECISION_SCHEMA", "PLACEHOLDERS", "ACTION_STEMS", "STRONG_ACTION_STEMS", "WORKFLOW_READER"
        ),
        **constants(workflow_scorer, "ECE_BINS"),
        # The cost ratio of a missed escalation is the utility's default (a task argument can override it per run).
        "clinical_cf.scorers.workflow.utility.__defaults__": workflow_scorer.utility.__defaults__,
        **constants(workflow_solver, "_ACTION_SYNONYMS"),
        **patterns(workflow_solver),
    }


WORKFLOW = Suite(
    name="workflow",
    reading_rules_version=2,  # issue 37: whole replies only, items are things, readings confirmed by agreement
    title="Workflow escalation: actions under missing, stale, conflicting and late information",
    short_name="Workflow escalation",
    description=(
        "Synthetic workflow episodes (documentation update, evidence retrieval, patient messaging, triage "
        "handoff) in clean, missing, stale, conflict and late-risk variants; the model chooses ANSWER, "
        "ASK_CLARIFICATION, ABSTAIN or ESCALATE with a stated confidence. Decision accuracy, a 5:1 "
        "cost-sensitive utility, missed and unnecessary escalation, ECE and failure AUROC, and a post-hoc "
        "workflow-aware controller with a lexical out-of-vocabulary audit."
    ),
    source="Auditing Escalation Reliability in Healthcare LLM Agents (Zheng et al. 2026)",
    arxiv="https://arxiv.org/abs/2610.21270",
    tags=("Medical", "Counterfactual", "Agent", "Calibration"),
    records="episodes",
    data=CATALOG_DIR / "workflow" / "episodes.jsonl",
    schema=Episode,
    record_id="id",
    loader=load_episodes,
    data_arg="episodes",
    catalogs=(CATALOG_DIR / "workflow" / "seeds.yaml",),
    generator="clinical_cf.catalog.workflow.assemble",
    breakdown="variant",
    records_need_lock=True,
    inputs=(
        InputKind("episodes", load_episodes, frozenset({"turns", "reference_action"}), bundled=CATALOG_DIR / "workflow" / "episodes.jsonl"),
        InputKind("seeds", load_seeds, frozenset({"seeds"}), bundled=CATALOG_DIR / "workflow" / "seeds.yaml"),
        InputKind("lexical_audit", _load_lexical_audit, frozenset({"concepts"}), bundled=LEXICAL_AUDIT_PATH),
    ),
    scorers=(workflow_action,),
    extra_published=(LEXICAL_AUDIT_PATH,),
    scoring=scoring,
    prompts=prompts,
)
