"""The four suites as one table: what each is, which tasks it registers, and which files define its results.

The exports (`clinical-cf export register|dataset|lm-eval`) read this table, so a suite added here
is exported everywhere at once. A suite's *comparability files* are the pre-registered catalogs
and the generated data its scores are computed over: when any of their bytes change, results
from before and after are no longer comparable (see `clinical_cf.exports.register`).
"""

from __future__ import annotations

import hashlib
import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from pydantic import BaseModel

import clinical_cf.catalog

# The catalog package, wherever it is installed (the checkout's catalog/ in an editable install).
CATALOG_DIR = Path(clinical_cf.catalog.__file__).resolve().parent


@dataclass(frozen=True)
class Suite:
    name: str
    title: str
    description: str
    source: str
    """The paper (or write-up) the suite follows."""
    arxiv: str | None
    tags: tuple[str, ...]
    tasks: tuple[str, ...]
    """Registered task names (`clinical_cf/<name>`)."""
    main_task: str
    """The task whose samples a dataset export writes (every sample of the suite's default run)."""
    records: str
    """File name of the suite's source records in a dataset export (cases, vignettes, ...)."""
    data: Path
    """The bundled generated records."""
    schema: str
    """`module:Class` of the records' pydantic schema (imported on use, so the table stays cheap to import)."""
    record_id: str
    loader: str
    """`module:function` validating a records file against the schema (errors name file, entry, field)."""
    data_arg: str
    """The main task's argument that takes a user records file."""
    catalogs: tuple[Path, ...]
    generator: str
    """The module that regenerates `data` deterministically."""
    breakdown: str
    """Sample metadata field the dataset card counts samples by."""
    records_need_lock: bool = False
    """The task refuses a user records file without a `<file>.lock` (it is itself the pre-registered catalog)."""
    report_section: str | None = None
    """`module:function` building the suite's section of `clinical-cf report` (see `clinical_cf.analysis.sections`)."""
    report_tables: tuple[str, ...] = ()
    """`module:function`s of extra section tables, each `(samples: DataFrame) -> DataFrame` over the suite's sample rows."""
    report_banners: tuple[str, ...] = ()
    """`module:function`s of section banners, each `(logs: DataFrame, samples: DataFrame) -> list[str]`."""

    def record_model(self) -> type[BaseModel]:
        return _resolve(self.schema)

    def load_records(self) -> Callable[[Path], list[Any]]:
        return _resolve(self.loader)

    @property
    def comparability_files(self) -> tuple[Path, ...]:
        return (*self.catalogs, self.data)

    def fingerprint(self) -> str:
        """SHA-256 over the comparability files' names and bytes: changes exactly when results stop being comparable."""
        digest = hashlib.sha256()
        for path in self.comparability_files:
            digest.update(path.name.encode() + b"\0" + hashlib.sha256(path.read_bytes()).hexdigest().encode() + b"\n")
        return digest.hexdigest()

    def file_hashes(self) -> dict[str, str]:
        return {_display_path(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in self.comparability_files}


def _resolve(reference: str) -> Any:
    module, name = reference.split(":")
    return getattr(importlib.import_module(module), name)


def _display_path(path: Path) -> str:
    """`catalog/...` for bundled files (the same in a checkout and an install), the path itself otherwise."""
    if path.resolve().is_relative_to(CATALOG_DIR):
        return f"catalog/{path.resolve().relative_to(CATALOG_DIR).as_posix()}"
    return str(path)


# Every suite's report section shows how its replies were read (issue 14) and warns about logs whose
# inputs were unregistered, re-locked after release or mixed (issue 15).
REPORT_TABLES = ("clinical_cf.analysis.parse_quality:parse_table",)
REPORT_BANNERS = ("clinical_cf.analysis.registration:report_banners",)


CSS = Suite(
    name="css",
    title="Causal Sensitivity Score (CSS): counterfactual interventions on oncology tumor-board packets",
    description=(
        "Pre-registered interventions (families A-E: biomarker flips, progression, missing biomarkers, "
        "resection status, new metastases) on synthetic tumor-board packets; a judge model scores in "
        "{0, 0.5, 1} whether the recommendations moved in the pre-registered direction, compared with CMS, "
        "a coverage score. Single-shot and ReAct-agent settings, plus agent observation perturbations."
    ),
    source="Counterfactual Evaluation Reveals Hidden Capability Profiles in Clinical LLMs and Agents (Turk 2026)",
    arxiv="https://arxiv.org/abs/2605.30590",
    tags=("Medical", "Counterfactual", "Model-graded", "Agent"),
    tasks=(
        "css", "css_family_a", "css_family_b", "css_family_c", "css_family_d", "css_family_e",
        "css_agent", "css_agent_family_d", "css_agent_observation", "css_judge_audit",
    ),
    main_task="css",
    records="cases",
    data=CATALOG_DIR / "css" / "cases.jsonl",
    schema="clinical_cf.catalog.css.schema:Case",
    record_id="case_id",
    loader="clinical_cf.catalog.css.schema:load_cases",
    data_arg="cases",
    catalogs=(
        CATALOG_DIR / "css" / "interventions.yaml",
        CATALOG_DIR / "css" / "observations.yaml",
        CATALOG_DIR / "css" / "lexicon.yaml",
    ),
    generator="clinical_cf.catalog.css.cohort",
    breakdown="family",
    report_section="clinical_cf.analysis.sections:css_section",
    report_tables=REPORT_TABLES,
    report_banners=REPORT_BANNERS,
)

SENSITIVITY = Suite(
    name="sensitivity",
    title="Clinical sensitivity: diagnostic distributions under pre-registered perturbations",
    description=(
        "Diagnostic vignettes under surface, clinical-semantic, background-injection, conflicting-result and "
        "timeline perturbations, each with a pre-registered expected direction (invariant, more confident, "
        "less confident, shifted); flip rate, Jensen-Shannon divergence, confidence and entropy change, "
        "and direction consistency."
    ),
    source="Practitioner write-up on counterfactual evaluation of clinical LLMs and ReAct agents (no arXiv paper)",
    arxiv=None,
    tags=("Medical", "Counterfactual", "Robustness"),
    tasks=("sensitivity",),
    main_task="sensitivity",
    records="vignettes",
    data=CATALOG_DIR / "sensitivity" / "vignettes.jsonl",
    schema="clinical_cf.catalog.sensitivity.vignettes:Vignette",
    record_id="vignette_id",
    loader="clinical_cf.catalog.sensitivity.vignettes:load_vignettes",
    data_arg="vignettes",
    catalogs=(CATALOG_DIR / "sensitivity" / "perturbations.yaml",),
    generator="clinical_cf.catalog.sensitivity.vignettes",
    breakdown="type",
    report_section="clinical_cf.analysis.sections:sensitivity_section",
    report_tables=REPORT_TABLES,
    report_banners=REPORT_BANNERS,
)


WORKFLOW = Suite(
    name="workflow",
    title="Workflow escalation: actions under missing, stale, conflicting and late information",
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
    tasks=("workflow",),
    main_task="workflow",
    records="episodes",
    data=CATALOG_DIR / "workflow" / "episodes.jsonl",
    schema="clinical_cf.catalog.workflow.episodes:Episode",
    record_id="id",
    loader="clinical_cf.catalog.workflow.episodes:load_episodes",
    data_arg="episodes",
    catalogs=(CATALOG_DIR / "workflow" / "seeds.yaml",),
    generator="clinical_cf.catalog.workflow.assemble",
    breakdown="variant",
    records_need_lock=True,
    report_section="clinical_cf.analysis.sections:workflow_section",
    report_tables=REPORT_TABLES,
    report_banners=REPORT_BANNERS,
)


MEDPIC = Suite(
    name="medpic",
    title="MedPIC: counterfactual sensitivity to patient information in medication-safety reasoning",
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
    tasks=("medpic", "medpic_gf", "medpic_cf"),
    main_task="medpic",
    records="questions",
    data=CATALOG_DIR / "medpic" / "questions.jsonl",
    schema="clinical_cf.catalog.medpic.questions:Question",
    record_id="id",
    loader="clinical_cf.catalog.medpic.questions:load_questions",
    data_arg="questions",
    catalogs=(CATALOG_DIR / "medpic" / "rules.yaml",),
    generator="clinical_cf.catalog.medpic.generate",
    breakdown="kind",
    report_section="clinical_cf.analysis.sections:medpic_section",
    report_tables=REPORT_TABLES,
    report_banners=REPORT_BANNERS,
)

SUITES: dict[str, Suite] = {s.name: s for s in (CSS, SENSITIVITY, MEDPIC, WORKFLOW)}


def get_suite(name: str) -> Suite:
    try:
        return SUITES[name]
    except KeyError:
        raise ValueError(f"unknown suite {name!r}; choose from {', '.join(SUITES)}") from None


def create_task(name: str, **args: Any):
    """A registered task by name, built with `args` (as `-T` would)."""
    from clinical_cf import _registry

    factory = getattr(_registry, name, None)
    if factory is None:
        raise ValueError(f"no task named {name!r} in clinical_cf")
    return factory(**args)
