"""The CSS suite (Causal Sensitivity Score): its spec and its scoring contract."""

from __future__ import annotations

import json
from functools import partial
from typing import Any

from inspect_ai.util import Store

from clinical_cf import replies
from clinical_cf.catalog.css import CSS_DIR
from clinical_cf.catalog.css.counterfactuals import load_counterfactuals
from clinical_cf.catalog.css.judge_probes import load_probes
from clinical_cf.catalog.css.observations import load_observations
from clinical_cf.catalog.css.predictions import load_predictions
from clinical_cf.catalog.css.reader_corpus import load_corpus
from clinical_cf.catalog.css.schema import Case, load_cases
from clinical_cf.catalog.validate import load_checked_cases, load_checked_interventions
from clinical_cf.scorers import cms, css_judge, css_process, metrics
from clinical_cf.scorers.cms import consensus_match
from clinical_cf.scorers.css_judge import agent_judge_direction, judge_direction
from clinical_cf.scorers.css_process import judge_process
from clinical_cf.scorers.editor_audit import editor_fidelity
from clinical_cf.scorers.judge_audit import audited_judge
from clinical_cf.scorers.reader_audit import reader_accuracy
from clinical_cf.scoring_contract import constants, patterns
from clinical_cf.solvers import css as css_solver
from clinical_cf.solvers import css_agent
from clinical_cf.suites.spec import InputKind, Suite

_REPLY = json.dumps({"recommendations": [{"treatment": "FOLFOX", "rationale": "RAS mutant"}], "not_recommended": []})


def prompts() -> dict[str, str]:
    """The CSS prompts as a model under test, the judges and the reader receive them (fixed inputs)."""
    # A store of its own: a StoreModel built outside a sample shares Inspect's default store, where an earlier
    # instance's fields (a test's, a judge audit's) would stand in for these arms.
    arms = css_solver.CSSArms(
        store=Store(), baseline=css_solver.arm_result(_REPLY), counterfactual=css_solver.arm_result(_REPLY)
    )
    return {
        "rendered/css/system": css_solver.SYSTEM_PROMPT,
        "rendered/css/summary": css_solver.SUMMARY_PROMPT.format(packet="Patient packet."),
        "rendered/css/stage2_json": css_solver.stage2_prompt("A summary.", json_schema=True),
        "rendered/css/stage2_plain": css_solver.stage2_prompt("A summary.", json_schema=False),
        "rendered/css/agent_instructions": css_agent.AGENT_INSTRUCTIONS,
        "rendered/css/agent_request": css_agent.AGENT_REQUEST.format(case_id="c1"),
        "rendered/css/judge": css_judge.judge_prompt(arms, "The list should change.", "1 if it changed."),
        "rendered/css/judge_retry": css_judge.RETRY_PROMPT,
        "rendered/css/process_judge": css_process.PROCESS_PROMPT.format(
            kind="noise", title="t", section="labs", expected="e", rule="r", notice="n", trace="t", recommendations="r", baseline="b"
        ),
        "rendered/css/process_retry": css_process.PROCESS_RETRY_PROMPT,
        "rendered/css/cms_match": cms.MATCH_PROMPT.format(consensus="1. FOLFOX", notice="n", recommendations="1. FOLFOX"),
        "rendered/css/reader": replies.reader_prompt(css_solver.CSS_READER, "Some reply."),
    }


def scoring() -> dict[str, Any]:
    return {
        **constants(
            css_solver,
            "SYSTEM_PROMPT", "SUMMARY_PROMPT", "RECOMMEND_PROMPT", "RECOMMEND_PROMPT_PLAIN", "RECOMMENDATIONS_SCHEMA", "MAX_ITEMS",
            "MAX_TREATMENT_CHARS", "MAX_RATIONALE_CHARS", "TEMPLATE_PLACEHOLDERS", "CSS_READER", "RAW_FALLBACK_CHARS", "MAX_BLOCK_CHARS"
        ),
        **constants(css_agent, "TOOL_NAME", "SUBMIT_TOOL_NAME", "AGENT_INSTRUCTIONS", "AGENT_REQUEST"),
        **constants(css_judge, "JUDGE_PROMPT", "RETRY_PROMPT", "VALID_SCORES", "VERDICT_SCHEMA"),
        **constants(css_process, "PROCESS_PROMPT", "PROCESS_RETRY_PROMPT", "PROCESS_SCHEMA", "TRACE_CHARS"),
        **constants(cms, "MATCH_PROMPT", "WEIGHTS"),
        **constants(metrics, "CONTROL_FAMILY"),
        **patterns(css_solver, css_agent),
    }


CSS = Suite(
    name="css",
    reading_rules_version=3,  # issue 44: canonical text, revisions applied or unreadable, quotes hold their value
    # (2: issue 37: whole replies only, items are things, readings confirmed by agreement)
    title="Causal Sensitivity Score (CSS): counterfactual interventions on oncology tumor-board packets",
    short_name="CSS",
    description=(
        "Pre-registered interventions (families A-E: biomarker flips, progression, missing biomarkers, "
        "resection status, new metastases) on synthetic tumor-board packets; a judge model scores in "
        "{0, 0.5, 1} whether the recommendations moved in the pre-registered direction, compared with CMS, "
        "a coverage score. Single-shot and ReAct-agent settings, plus agent observation perturbations."
    ),
    source="Counterfactual Evaluation Reveals Hidden Capability Profiles in Clinical LLMs and Agents (Turk 2026)",
    arxiv="https://arxiv.org/abs/2605.30590",
    tags=("Medical", "Counterfactual", "Model-graded", "Agent"),
    records="cases",
    data=CSS_DIR / "cases.jsonl",
    schema=Case,
    record_id="case_id",
    loader=load_cases,
    data_arg="cases",
    catalogs=(
        CSS_DIR / "interventions.yaml",
        CSS_DIR / "observations.yaml",
        CSS_DIR / "lexicon.yaml",
    ),
    generator="clinical_cf.catalog.css.cohort",
    breakdown="family",
    inputs=(
        InputKind("cases", load_checked_cases, frozenset({"case_id", "sections"}), bundled=CSS_DIR / "cases.jsonl"),
        InputKind(
            "interventions", load_checked_interventions, frozenset({"interventions"}), lambda c: len(c.interventions),
            CSS_DIR / "interventions.yaml",
        ),
        InputKind("observations", load_observations, frozenset({"perturbations"}), bundled=CSS_DIR / "observations.yaml"),
        InputKind("predictions", load_predictions, frozenset({"predictions"}), bundled=CSS_DIR / "predictions.yaml"),
        InputKind(
            "judge_probes", lambda path: load_probes(path).probes, frozenset({"probes", "scenarios"}), bundled=CSS_DIR / "judge_probes.yaml"
        ),
        InputKind("reader_corpus", load_corpus, frozenset({"reply", "truth"}), bundled=CSS_DIR / "reader_audit_replies.yaml"),
        # A frozen set is checked against its own lock when a task reads it; here only its records are.
        InputKind("counterfactuals", partial(load_counterfactuals, allow_unregistered=True), frozenset({"tuple_id", "intervention_id"})),
    ),
    scorers=(judge_direction, agent_judge_direction, consensus_match, judge_process, audited_judge, editor_fidelity, reader_accuracy),
    extra_published=(
        CSS_DIR / "predictions.yaml",
        CSS_DIR / "judge_probes.yaml",
        CSS_DIR / "reader_audit_replies.yaml",
    ),
    judged=True,
    scoring=scoring,
    prompts=prompts,
)
