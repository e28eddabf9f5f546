"""The clinical sensitivity suite (diagnostic distributions under perturbations): its spec and its scoring contract."""

from __future__ import annotations

from typing import Any

from clinical_cf import replies
from clinical_cf.catalog.sensitivity.perturbations import load_perturbations
from clinical_cf.catalog.sensitivity.vignettes import Vignette, load_vignettes
from clinical_cf.scorers import sensitivity as sensitivity_scorer
from clinical_cf.scorers.sensitivity import direction_consistency
from clinical_cf.scoring_contract import constants, patterns
from clinical_cf.solvers import sensitivity as sensitivity_solver
from clinical_cf.suites.spec import CATALOG_DIR, InputKind, Suite


def prompts() -> dict[str, str]:
    options = sensitivity_solver.options_text(["a", "b"])
    return {
        "rendered/sensitivity/json": sensitivity_solver.DISTRIBUTION_PROMPT.format(vignette="v", options=options),
        "rendered/sensitivity/plain": sensitivity_solver.DISTRIBUTION_PROMPT_PLAIN.format(vignette="v", options=options),
        "rendered/sensitivity/letter": sensitivity_solver.LETTER_PROMPT.format(vignette="v", options=options),
        "rendered/sensitivity/reader": replies.reader_prompt(sensitivity_solver.SENSITIVITY_READER, "Some reply."),
    }


def scoring() -> dict[str, Any]:
    return {
        **constants(
            sensitivity_solver,
            "LETTERS", "DISTRIBUTION_PROMPT", "DISTRIBUTION_PROMPT_PLAIN", "LETTER_PROMPT", "SUM_TOLERANCE", "SENSITIVITY_READER"
        ),
        **constants(sensitivity_scorer, "FLOOR"),
        **patterns(sensitivity_solver),
    }


SENSITIVITY = Suite(
    name="sensitivity",
    reading_rules_version=3,  # issue 44: canonical text, revisions applied or unreadable, quotes hold their value
    # (2: issue 37: whole replies only, items are things, readings confirmed by agreement)
    title="Clinical sensitivity: diagnostic distributions under pre-registered perturbations",
    short_name="Clinical sensitivity",
    description=(
        "Diagnostic vignettes under surface, clinical-semantic, background-injection, conflicting-result and "
        "timeline perturbations, each with a pre-registered expected direction (invariant, more confident, "
        "less confident, shifted); flip rate, Jensen-Shannon divergence, confidence and entropy change, "
        "and direction consistency."
    ),
    source="Practitioner write-up on counterfactual evaluation of clinical LLMs and ReAct agents (no arXiv paper)",
    arxiv=None,
    tags=("Medical", "Counterfactual", "Robustness"),
    records="vignettes",
    data=CATALOG_DIR / "sensitivity" / "vignettes.jsonl",
    schema=Vignette,
    record_id="vignette_id",
    loader=load_vignettes,
    data_arg="vignettes",
    catalogs=(CATALOG_DIR / "sensitivity" / "perturbations.yaml",),
    generator="clinical_cf.catalog.sensitivity.vignettes",
    breakdown="type",
    inputs=(
        InputKind("vignettes", load_vignettes, frozenset({"vignette_id"}), bundled=CATALOG_DIR / "sensitivity" / "vignettes.jsonl"),
        InputKind(
            "perturbations", load_perturbations, frozenset({"perturbations", "tolerance"}), lambda loaded: len(loaded[0]),
            bundled=CATALOG_DIR / "sensitivity" / "perturbations.yaml",
        ),
    ),
    scorers=(direction_consistency,),
    scoring=scoring,
    prompts=prompts,
)
